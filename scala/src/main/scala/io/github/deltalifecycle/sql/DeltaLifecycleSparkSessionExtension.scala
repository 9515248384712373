package io.github.deltalifecycle.sql

import io.github.deltalifecycle.sql.analysis.{
  CheckRedirectRouting,
  InterceptRedirectPropertyChanges,
  ResolveLifecycleStatements,
  RouteRedirectedPaths
}
import io.github.deltalifecycle.sql.observation.{CommitObserver, DriverFailureWatch, OperationJobs}
import io.github.deltalifecycle.sql.parser.DeltaLifecycleSqlParser
import org.apache.spark.sql.{SparkSession, SparkSessionExtensions}

/**
 * The entry point: `spark.sql.extensions=io.delta.sql.DeltaSparkSessionExtension,`
 * `io.github.deltalifecycle.sql.DeltaLifecycleSparkSessionExtension`. Listed after Delta's
 * extension, its parser wraps Delta's, so it sees this project's statements first and passes every
 * other statement on unchanged.
 */
class DeltaLifecycleSparkSessionExtension extends (SparkSessionExtensions => Unit) {
  override def apply(extensions: SparkSessionExtensions): Unit = {
    extensions.injectParser((_, delegate) => new DeltaLifecycleSqlParser(delegate))
    extensions.injectResolutionRule { spark =>
      // Session state is built before any Delta table is opened, so this is early enough.
      installCommitObserver(spark)
      DriverFailureWatch.register(spark)
      OperationJobs.register(spark)
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
   * The post-commit log maintenance policy learns of commits from a listener on the context; it
   * leaves delta-spark's LogStore settings as they are.
   */
  private def installCommitObserver(spark: SparkSession): Unit = CommitObserver.register(spark)
}
