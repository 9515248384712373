package io.github.deltalifecycle.core

import io.github.deltalifecycle.LifecycleSparkSession
import org.apache.spark.sql.delta.DeltaLog
import org.scalatest.Suite

/** Tables whose commits after a checkpoint change files in every way a writer does. */
trait TablesWithTail extends LifecycleSparkSession { self: Suite =>

  /**
   * A table with deletion vectors, checkpointed at its fifth version with `settings` in force, then
   * given commits that re-add removed files (RESTORE), give files deletion vectors and new ones
   * (two DELETEs), and remove and add files (an OPTIMIZE, appends).
   */
  protected def tableWithTail(name: String, settings: Map[String, String]): (String, Long) = {
    val path = newTableDir(name)
    spark.sql(
      s"CREATE TABLE delta.`$path` (id BIGINT) USING delta TBLPROPERTIES (" +
        "'delta.enableDeletionVectors' = 'true', 'delta.checkpointInterval' = '1000'" +
        settings.collect { case (k, v) if k.startsWith("delta.") => s", '$k' = '$v'" }.mkString +
        ")"
    )
    (0 until 4).foreach(i =>
      spark.range(i * 100, i * 100 + 100, 1, 3).write.format("delta")
        .mode("append").save(path)
    )
    spark.sql(s"DELETE FROM delta.`$path` WHERE id < 100")
    val sessionSettings = settings.filter(_._1.startsWith("spark."))
    sessionSettings.foreach { case (k, v) => spark.conf.set(k, v) }
    try DeltaLog.forTable(spark, path).checkpoint()
    finally sessionSettings.keys.foreach(spark.conf.unset)
    val checkpointed = DeltaLog.forTable(spark, path).update().version
    spark.sql(s"RESTORE TABLE delta.`$path` TO VERSION AS OF 3")
    spark.sql(s"DELETE FROM delta.`$path` WHERE id % 10 = 1")
    spark.sql(s"DELETE FROM delta.`$path` WHERE id % 10 = 2")
    spark.sql(s"OPTIMIZE delta.`$path` WHERE true")
    spark.range(1000, 1010, 1, 2).write.format("delta").mode("append").save(path)
    spark.sql(s"DELETE FROM delta.`$path` WHERE id = 1005")
    (path, checkpointed)
  }

  protected def withoutPolicy[T](body: => T): T = {
    spark.conf.set("spark.deltaLifecycle.logMaintenance.enabled", "false")
    try body
    finally spark.conf.unset("spark.deltaLifecycle.logMaintenance.enabled")
  }
}
