package io.github.deltalifecycle.core

import org.apache.hadoop.conf.Configuration
import org.apache.spark.{SparkConf, SparkEnv}
import org.apache.spark.sql.delta.storage.LogStore

/**
 * The LogStore this project reads and writes logs through: the one delta-spark builds from the
 * context's `spark.delta.logStore.*` settings, so every configuration delta-spark documents (its
 * per-scheme defaults, `spark.delta.logStore.<scheme>.impl`, `spark.delta.logStore.class`,
 * S3DynamoDBLogStore) is honoured, including the repair S3DynamoDBLogStore's `listFrom` performs.
 *
 * One store is shared per set of those settings, as delta-spark shares one per table: some stores
 * are costly to build (S3DynamoDBLogStore describes its DynamoDB table when constructed).
 */
object LogStores {
  private val LogStoreKeyPrefixes = Seq("spark.delta.logStore.", "delta.logStore.")

  @volatile private var cached: Option[(Seq[(String, String)], LogStore)] = None

  def shared(hadoopConf: Configuration): LogStore = {
    val sparkConf = Option(SparkEnv.get).map(_.conf).getOrElse(new SparkConf(false))
    val settings = LogStoreKeyPrefixes.flatMap(p =>
      sparkConf.getAllWithPrefix(p).toSeq.map { case (k, v) => (p + k, v) }
    ).sorted
    cached match {
      case Some((forSettings, store)) if forSettings == settings => store
      case _ =>
        synchronized {
          cached.filter(_._1 == settings).map(_._2).getOrElse {
            val store = LogStore(sparkConf, hadoopConf)
            cached = Some((settings, store))
            store
          }
        }
    }
  }
}
