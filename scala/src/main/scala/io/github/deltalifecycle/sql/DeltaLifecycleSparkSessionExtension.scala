package io.github.deltalifecycle.sql

import io.github.deltalifecycle.features.compaction.CommitObservingLogStore
import io.github.deltalifecycle.sql.analysis.{
  CheckRedirectRouting,
  InterceptRedirectPropertyChanges,
  ResolveLifecycleStatements,
  RouteRedirectedPaths
}
import io.github.deltalifecycle.sql.parser.DeltaLifecycleSqlParser
import org.apache.spark.internal.Logging
import org.apache.spark.sql.{SparkSession, SparkSessionExtensions}
import org.apache.spark.sql.deltalifecycle.SparkInternals

/**
 * The entry point: `spark.sql.extensions=io.delta.sql.DeltaSparkSessionExtension,`
 * `io.github.deltalifecycle.sql.DeltaLifecycleSparkSessionExtension`. Listed after Delta's
 * extension, its parser wraps Delta's, so it sees this project's statements first and passes every
 * other statement on unchanged.
 */
class DeltaLifecycleSparkSessionExtension extends (SparkSessionExtensions => Unit) with Logging {
  override def apply(extensions: SparkSessionExtensions): Unit = {
    extensions.injectParser((_, delegate) => new DeltaLifecycleSqlParser(delegate))
    extensions.injectResolutionRule { spark =>
      // Session state is built before any Delta table is opened, so this is early enough.
      installCommitObserver(spark)
      ResolveLifecycleStatements(spark)
    }
    // The hint batch runs before table resolution: path-based DataFrame access and redirect
    // property changes must be seen before delta-spark opens the table.
    extensions.injectHintResolutionRule(InterceptRedirectPropertyChanges)
    extensions.injectHintResolutionRule(RouteRedirectedPaths)
    extensions.injectCheckRule(spark => CheckRedirectRouting(spark).check)
    extensions.injectOptimizerRule(CheckRedirectRouting)
  }

  /**
   * Makes delta-spark write commits through [[CommitObservingLogStore]] so the post-commit log
   * maintenance policy runs, unless the user chose a LogStore class of their own.
   */
  private def installCommitObserver(spark: SparkSession): Unit = {
    val key = CommitObservingLogStore.LogStoreClassKey
    val ours = classOf[CommitObservingLogStore].getName
    // delta-spark also reads the key without "spark.", and refuses two different values.
    val theirs = SparkInternals.sparkConf(spark, key.stripPrefix("spark."))
      .orElse(SparkInternals.setSparkConfIfMissing(spark, key, ours))
      .filter(_ != ours)
    theirs.foreach { theirs =>
      logWarning(
        s"$key is set to $theirs, so delta-lifecycle's post-commit log compaction policy is off; " +
          "COMPACT LOG still works."
      )
    }
  }
}
