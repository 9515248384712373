package io.github.deltalifecycle.core

import io.github.deltalifecycle.LifecycleSparkSession
import org.scalatest.funsuite.AnyFunSuite

/** Progress names the jobs of a step, and only while its operation runs. */
class ProgressSuite extends AnyFunSuite with LifecycleSparkSession {

  private def description: Option[String] =
    Option(spark.sparkContext.getLocalProperty("spark.job.description"))

  private def operation: Option[String] =
    Option(spark.sparkContext.getLocalProperty(Progress.OperationProperty))

  test("a step names the operation's jobs; a failed operation leaves the thread unnamed") {
    val seen = Progress.run(spark, "OP on t", 2) { progress =>
      progress.start("first")
      (description, operation)
    }
    assert(seen === (Some("OP on t: step 1 of 2: first"), Some("OP on t")))
    assert(description.isEmpty && operation.isEmpty)

    val failure = intercept[IllegalStateException] {
      Progress.run(spark, "OP on t", 2) { progress =>
        progress.start("first")
        throw new IllegalStateException("step failed")
      }
    }
    assert(failure.getMessage === "step failed")
    assert(description.isEmpty && operation.isEmpty)
  }
}
