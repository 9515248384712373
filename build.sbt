import java.io.FileInputStream
import java.util.Properties

val versions: Properties = {
  val props = new Properties()
  val in = new FileInputStream(file("versions.properties"))
  try props.load(in)
  finally in.close()
  props
}
def v(key: String): String =
  Option(versions.getProperty(key)).getOrElse(sys.error(s"versions.properties has no $key"))

// One jar per Spark line (docs/spark-lines.md). The primary line is the one of the unsuffixed
// `spark` key; any other line comes from -DsparkLine=<line> or DELTA_LIFECYCLE_SPARK_LINE and
// reads the `<key>.<line>` entries of versions.properties.
val primaryLine = v("spark").split('.').take(2).mkString(".")
val sparkLine: String = {
  val line = sys.props
    .get("sparkLine")
    .orElse(sys.env.get("DELTA_LIFECYCLE_SPARK_LINE"))
    .filter(_.nonEmpty)
    .getOrElse(primaryLine)
  if (!v("lines").split(',').map(_.trim).contains(line))
    sys.error(s"Spark line $line is not one of lines=${v("lines")} in versions.properties")
  line
}
def lv(key: String): String = if (sparkLine == primaryLine) v(key) else v(s"$key.$sparkLine")
val scalaBinary = lv("scala").split('.').take(2).mkString(".")

ThisBuild / organization := "io.github.deltalifecycle"
ThisBuild / version := v("project")
ThisBuild / scalaVersion := lv("scala")

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

/**
 * The shim folders under `base` for the line being built. A folder is named `scala-spark-<range>`:
 * one line (`scala-spark-4.2`), an inclusive range (`scala-spark-3.5-4.1`) or a line and every
 * later one (`scala-spark-4.0+`).
 */
def shimDirs(base: File): Seq[File] = {
  def num(line: String): (Int, Int) = {
    val Array(major, minor) = line.split('.').map(_.toInt)
    (major, minor)
  }
  val ord = Ordering.Tuple2[Int, Int]
  val current = num(sparkLine)
  val Range = """scala-spark-(\d+\.\d+)(?:(\+)|-(\d+\.\d+))?""".r
  Option(base.listFiles).toSeq.flatten.filter(_.isDirectory).filter { dir =>
    dir.getName match {
      case Range(from, plus, to) =>
        val upper = if (plus != null) (Int.MaxValue, 0) else num(Option(to).getOrElse(from))
        ord.lteq(num(from), current) && ord.lteq(current, upper)
      case _ => false
    }
  }.sortBy(_.getName)
}

lazy val antlrGenerate = taskKey[Seq[File]]("Generates the statement parser from the ANTLR grammar")
lazy val errorsGenerate =
  taskKey[Seq[File]]("Generates one factory per error condition (project/ErrorConditionsGen.scala)")

/**
 * How many test JVMs run the suites at once (DELTA_LIFECYCLE_TEST_JVMS, default 2). A suite's Spark
 * jobs are small and its driver waits on them, so one JVM leaves much of two cores idle.
 */
val testJvms: Int = sys.env.get("DELTA_LIFECYCLE_TEST_JVMS").filter(_.nonEmpty).map(_.toInt)
  .getOrElse(2)

/**
 * The suites' run times in seconds in CI (scala/target/test-reports of a make test run; the one of
 * FileStateSuite is an estimate from runs of part of it); any other suite counts 1. The suites are
 * dealt to the test JVMs longest first, each to the JVM with the least work so far, so that the
 * JVMs finish together.
 */
val suiteWeights: Map[String, Int] = Map(
  "ConformanceSuite" -> 453,
  "DropFeatureSuite" -> 420,
  "FileStateSuite" -> 300,
  "CompactLogSuite" -> 111,
  "CleanLogSuite" -> 67,
  "RedirectSuite" -> 56,
  "StreamingRedirectSuite" -> 47,
  "LogMaintenancePolicySuite" -> 45,
  "SessionRoutingSuite" -> 40,
  "CompatibilityStatementsSuite" -> 28,
  "BulkDeleteSuite" -> 25,
  "UnsetRedirectReplaySuite" -> 23,
  "RedirectLookupSuite" -> 22,
  "CompactionReadSuite" -> 11,
  "StatementRoutingSuite" -> 10,
  "DescribeProtocolHistorySuite" -> 10,
  "CheckpointFallbackSuite" -> 7,
  "LogCommitterSuite" -> 6,
  "CoordinatedTableSuite" -> 6,
  "SharedSessionPolicySuite" -> 5
)

def testJvmGroups(tests: Seq[TestDefinition], options: ForkOptions): Seq[Tests.Group] = {
  def weight(t: TestDefinition) = suiteWeights.getOrElse(t.name.split('.').last, 1)
  val jvms = Array.fill(testJvms)(Vector.empty[TestDefinition])
  tests.sortBy(t => (-weight(t), t.name)).foreach { t =>
    val least = jvms.indices.minBy(i => jvms(i).map(weight).sum)
    jvms(least) = jvms(least) :+ t
  }
  jvms.toSeq.zipWithIndex.filter(_._1.nonEmpty).map { case (suites, i) =>
    Tests.Group(s"test-jvm-${i + 1}", suites, Tests.SubProcess(options))
  }
}

// sbt's defaults, but for its limit of one forked test group at a time.
Global / concurrentRestrictions := Seq(
  Tags.limitAll(java.lang.Runtime.getRuntime.availableProcessors.max(testJvms)),
  Tags.limit(Tags.ForkedTestGroup, testJvms),
  Tags.exclusiveGroup(Tags.Clean)
)

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
    // The primary line keeps sbt's default target (scala/target/scala-2.13/); the others build
    // under scala/target/spark-<line>/ so that switching lines does not discard compiled classes.
    target := {
      if (sparkLine == primaryLine) target.value
      else baseDirectory.value / "target" / s"spark-$sparkLine"
    },
    // Per-line shims (docs/spark-lines.md): every scala-spark-<range> folder whose range holds
    // the line being built, next to src/main/scala and src/test/scala.
    Compile / unmanagedSourceDirectories ++= shimDirs((Compile / sourceDirectory).value),
    Test / unmanagedSourceDirectories ++= shimDirs((Test / sourceDirectory).value),
    libraryDependencies ++= Seq(
      "org.apache.spark" %% "spark-sql" % lv("spark") % Provided,
      // delta-spark names its Spark 4 artifacts delta-spark_<line>_2.13, its Spark 3.5 ones
      // delta-spark_2.12.
      (if (sparkLine.startsWith("3.")) "io.delta" %% "delta-spark" % lv("delta") % Provided
       else "io.delta" %% s"delta-spark_$sparkLine" % lv("delta") % Provided),
      // The server-side copy on S3 (FileCopy, docs/redirection.md "The copy"): hadoop-aws and the
      // S3 module of the AWS SDK it brings (v1 on Hadoop 3.3, v2 from 3.4), to compile against
      // only; at run time both come with hadoop-aws, and nothing loads them without an s3a:// copy.
      ("org.apache.hadoop" % "hadoop-aws" % lv("hadoop") % Provided).intransitive(),
      (if (sparkLine.startsWith("3.")) "com.amazonaws" % "aws-java-sdk-s3" % lv("awssdk") % Provided
       else "software.amazon.awssdk" % "s3" % lv("awssdk") % Provided),
      // Unity Catalog's client and its Hadoop credential module, to compile against only: UC's
      // connector brings both wherever a session configures it, and nothing loads them otherwise
      // (sql/unitycatalog).
      ("io.unitycatalog" % "unitycatalog-client" % v("unitycatalog") % Provided).intransitive(),
      ("io.unitycatalog" % "unitycatalog-hadoop" % v("unitycatalog") % Provided).intransitive(),
      "org.scalatest" %% "scalatest" % v("scalatest") % Test
    ),
    scalacOptions ++= Seq("-deprecation", "-feature", "-unchecked") ++
      (if (scalaBinary == "2.12") Seq("-Ywarn-unused:imports") else Seq("-Wunused:imports")),
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
    errorsGenerate := {
      val json = (Compile / resourceDirectory).value / "error/delta-lifecycle-error-conditions.json"
      val out = (Compile / sourceManaged).value / "errors" / "ErrorConditions.scala"
      IO.write(out, ErrorConditionsGen.source(IO.read(json)))
      Seq(out)
    },
    Compile / sourceGenerators += errorsGenerate.taskValue,
    // The test JVM is the one place fault injection works (FaultInjection.TestingProperty).
    Test / javaOptions ++= sparkJavaOptions :+ "-DdeltaLifecycle.testing=true",
    Test / run / fork := true,
    Test / run / javaOptions ++= sparkJavaOptions,
    Test / run / baseDirectory := (ThisBuild / baseDirectory).value,
    Test / baseDirectory := (ThisBuild / baseDirectory).value,
    // Groups of suites in test JVMs of their own, testJvms at a time; each JVM runs its suites one
    // after another.
    Test / parallelExecution := true,
    Test / testGrouping := testJvmGroups(
      (Test / definedTests).value,
      ForkOptions()
        .withRunJVMOptions((Test / javaOptions).value.toVector)
        .withWorkingDirectory((ThisBuild / baseDirectory).value)
        .withEnvVars((Test / envVars).value)
    ),
    Test / testOptions += Tests.Argument(TestFrameworks.ScalaTest, "-oD"),
    pomIncludeRepository := (_ => false)
  )
