package io.github.deltalifecycle.sql

import io.github.deltalifecycle.sql.analysis.ResolveLifecycleStatements
import io.github.deltalifecycle.sql.parser.DeltaLifecycleSqlParser
import org.apache.spark.sql.SparkSessionExtensions

/**
 * The entry point: `spark.sql.extensions=io.delta.sql.DeltaSparkSessionExtension,`
 * `io.github.deltalifecycle.sql.DeltaLifecycleSparkSessionExtension`. Listed after Delta's
 * extension, its parser wraps Delta's, so it sees this project's statements first and
 * passes every other statement on unchanged.
 */
class DeltaLifecycleSparkSessionExtension extends (SparkSessionExtensions => Unit) {
  override def apply(extensions: SparkSessionExtensions): Unit = {
    extensions.injectParser((_, delegate) => new DeltaLifecycleSqlParser(delegate))
    extensions.injectResolutionRule(spark => ResolveLifecycleStatements(spark))
  }
}
