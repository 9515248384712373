// The ANTLR tool runs inside the build (see antlrGenerate in build.sbt), so no
// sbt plugin repository is needed; its version must match Spark's antlr4-runtime.
libraryDependencies += "org.antlr" % "antlr4" % {
  val props = new java.util.Properties()
  val in = new java.io.FileInputStream(baseDirectory.value.getParentFile / "versions.properties")
  try props.load(in)
  finally in.close()
  props.getProperty("antlr")
}

// `build/sbt scalafmtCheckAll scalafmtSbtCheck` runs in `make test`; `make fmt` formats.
addSbtPlugin("org.scalameta" % "sbt-scalafmt" % "2.5.6")
