// The ANTLR tool runs inside the build (see antlrGenerate in build.sbt), so no
// sbt plugin repository is needed; its version must match the antlr4-runtime of the Spark line
// being built (the line is chosen as in build.sbt: -DsparkLine or DELTA_LIFECYCLE_SPARK_LINE).
libraryDependencies += "org.antlr" % "antlr4" % {
  val props = new java.util.Properties()
  val in = new java.io.FileInputStream(baseDirectory.value.getParentFile / "versions.properties")
  try props.load(in)
  finally in.close()
  val primaryLine = props.getProperty("spark").split('.').take(2).mkString(".")
  val line = sys.props
    .get("sparkLine")
    .orElse(sys.env.get("DELTA_LIFECYCLE_SPARK_LINE"))
    .filter(_.nonEmpty)
    .getOrElse(primaryLine)
  if (line == primaryLine) props.getProperty("antlr") else props.getProperty(s"antlr.$line")
}

// `build/sbt scalafmtCheckAll scalafmtSbtCheck` runs in `make test`; `make fmt` formats.
addSbtPlugin("org.scalameta" % "sbt-scalafmt" % "2.5.6")
