import java.io.FileInputStream
import java.util.Properties

val versions: Properties = {
  val props = new Properties()
  val in = new FileInputStream(file("versions.properties"))
  try props.load(in)
  finally in.close()
  props
}
def v(key: String): String = versions.getProperty(key)

val sparkLine = v("spark").split('.').take(2).mkString(".")

ThisBuild / organization := "io.github.deltalifecycle"
ThisBuild / version := v("project")
ThisBuild / scalaVersion := v("scala")

// Spark on Java 17 needs these opens in every JVM that runs it (tests, benchmarks).
val sparkJavaOptions = Seq(
  "java.base/java.lang",
  "java.base/java.lang.invoke",
  "java.base/java.lang.reflect",
  "java.base/java.io",
  "java.base/java.net",
  "java.base/java.nio",
  "java.base/java.util",
  "java.base/java.util.concurrent",
  "java.base/java.util.concurrent.atomic",
  "java.base/sun.nio.ch",
  "java.base/sun.nio.cs",
  "java.base/sun.security.action",
  "java.base/sun.util.calendar"
).map(p => s"--add-opens=$p=ALL-UNNAMED") ++
  Seq("-Xmx4g", "-Djdk.reflect.useDirectMethodHandle=false")

lazy val antlrGenerate = taskKey[Seq[File]]("Generates the statement parser from the ANTLR grammar")

lazy val root = (project in file("."))
  .aggregate(lifecycle)
  .settings(publish / skip := true, publishM2 / skip := true)

lazy val lifecycle = (project in file("scala"))
  .settings(
    name := s"delta-lifecycle_$sparkLine",
    // sbt would normalize "4.2" to "4-2"; keep delta-spark's naming (delta-spark_4.2_2.13).
    moduleName := name.value,
    Compile / packageDoc / publishArtifact := false,
    // Rebuilding the same version must replace the local Maven copy that spark-submit resolves.
    publishM2Configuration := publishM2Configuration.value.withOverwrite(true),
    libraryDependencies ++= Seq(
      "org.apache.spark" %% "spark-sql" % v("spark") % Provided,
      "io.delta" %% s"delta-spark_$sparkLine" % v("delta") % Provided,
      "org.scalatest" %% "scalatest" % v("scalatest") % Test
    ),
    scalacOptions ++= Seq("-deprecation", "-feature", "-unchecked", "-Wunused:imports"),
    javacOptions ++= Seq("--release", "17"),
    antlrGenerate := {
      val grammars = ((Compile / sourceDirectory).value / "antlr4" ** "*.g4").get
      val out = (Compile / sourceManaged).value / "antlr4"
      val cached =
        FileFunction.cached(streams.value.cacheDirectory / "antlr4", FilesInfo.hash) { in =>
          IO.delete(out)
          in.foreach { g4 =>
            val pkg = "io.github.deltalifecycle.sql.parser"
            val args = Array(
              "-o",
              (out / pkg.replace('.', '/')).getPath,
              "-package",
              pkg,
              "-visitor",
              "-no-listener",
              "-Xexact-output-dir",
              g4.getPath
            )
            val tool = new org.antlr.v4.Tool(args)
            tool.processGrammarsOnCommandLine()
            if (tool.getNumErrors > 0) sys.error(s"ANTLR failed on $g4")
          }
          (out ** "*.java").get.toSet
        }
      cached(grammars.toSet).toSeq
    },
    Compile / sourceGenerators += antlrGenerate.taskValue,
    Test / fork := true,
    Test / javaOptions ++= sparkJavaOptions,
    Test / run / fork := true,
    Test / run / javaOptions ++= sparkJavaOptions,
    Test / run / baseDirectory := (ThisBuild / baseDirectory).value,
    Test / baseDirectory := (ThisBuild / baseDirectory).value,
    Test / parallelExecution := false,
    Test / testOptions += Tests.Argument(TestFrameworks.ScalaTest, "-oD"),
    pomIncludeRepository := (_ => false)
  )
