package io.github.deltalifecycle.sql.observation

import scala.concurrent.{Await, ExecutionContext, Future}
import scala.concurrent.duration._

import io.github.deltalifecycle.LifecycleSparkSession
import org.apache.spark.SparkException
import org.scalatest.funsuite.AnyFunSuite

/**
 * A task result the driver cannot deserialize for lack of memory kills Spark's task-result getter
 * thread; without [[DriverFailureWatch]] the job then waits forever (the test times out).
 */
class DriverFailureWatchSuite extends AnyFunSuite with LifecycleSparkSession {

  test("a scheduler thread dying of OutOfMemoryError fails the running job, not hangs it") {
    spark.sql("SELECT 1").collect() // builds the session state, which registers the watch
    val job = Future {
      spark.sparkContext.parallelize(1 to 2, 2).map(_ => new LostOnTheDriver).collect()
    }(ExecutionContext.global)
    val error = intercept[SparkException](Await.result(job, 2.minutes))
    assert(error.getMessage.contains("task-result-getter"), error.getMessage)
    assert(error.getMessage.contains("OutOfMemoryError"), error.getMessage)
    // Only the job failed: the context keeps working.
    assert(spark.range(3).count() === 3)
  }
}

/** Serializes on the executor; reading it back on the driver fails as a full heap would. */
class LostOnTheDriver extends Serializable {
  private def readObject(in: java.io.ObjectInputStream): Unit =
    throw new OutOfMemoryError("Java heap space (thrown by the test)")
}
