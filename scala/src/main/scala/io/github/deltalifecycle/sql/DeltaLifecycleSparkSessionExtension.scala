package io.github.deltalifecycle.sql

import io.github.deltalifecycle.sql.analysis.{
  CheckRedirectRouting,
  InterceptRedirectPropertyChanges,
  ResolveLifecycleStatements,
  RouteRedirectedPaths,
  RouteStreams,
  RouteTableReplacements
}
import io.github.deltalifecycle.shims.AnalyzerShim
import io.github.deltalifecycle.sql.catalogmanaged.WrappedCatalogStreams
import io.github.deltalifecycle.sql.observation.{CommitObserver, DriverFailureWatch, OperationJobs}
import io.github.deltalifecycle.sql.parser.{DeltaLifecycleSqlParser, RewritingParser}
import io.github.deltalifecycle.sql.routing.DeltaTableArguments
import io.github.deltalifecycle.sql.settings.{AdministratorSettings, SettingsGuard}
import org.apache.spark.sql.{SparkSession, SparkSessionExtensions}

/**
 * The entry point: `spark.sql.extensions=io.delta.sql.DeltaSparkSessionExtension,`
 * `io.github.deltalifecycle.sql.DeltaLifecycleSparkSessionExtension`. Listed after Delta's
 * extension, its parser wraps Delta's, so it sees this project's statements first and passes every
 * other statement on unchanged.
 */
class DeltaLifecycleSparkSessionExtension extends (SparkSessionExtensions => Unit) {
  override def apply(extensions: SparkSessionExtensions): Unit = {
    // Before any session of this JVM can run `spark.conf.set` on them.
    AdministratorSettings.register()
    // Before this project's own rules: only the rules of the extensions listed before it.
    WrappedCatalogStreams.install(extensions)
    extensions.injectParser((_, delegate) => new DeltaLifecycleSqlParser(delegate))
    extensions.injectResolutionRule { spark =>
      // Session state is built before any Delta table is opened, so this is early enough.
      installCommitObserver(spark)
      DriverFailureWatch.register(spark)
      OperationJobs.register(spark)
      ResolveLifecycleStatements(spark)
    }
    // Redirect property changes must be seen before the table is resolved (resolving it follows
    // the redirect, and a broken value must stay fixable): on the parsed statement, which every
    // line and kind of session hands over before analysis.
    extensions.injectParser((spark, delegate) =>
      new RewritingParser(delegate, InterceptRedirectPropertyChanges(spark))
    )
    AnalyzerShim.injectPathRouting(extensions, RouteRedirectedPaths)
    extensions.injectResolutionRule(RouteTableReplacements)
    // After delta-spark's rules, which give its streaming sink the catalog table.
    extensions.injectResolutionRule(RouteStreams)
    extensions.injectCheckRule(spark => CheckRedirectRouting(spark).check)
    extensions.injectCheckRule(_ => SettingsGuard.check(_))
    extensions.injectOptimizerRule(CheckRedirectRouting)
    DeltaTableArguments.functions.foreach(extensions.injectFunction)
  }

  /**
   * The post-commit log maintenance policy learns of commits from a listener on the context; it
   * leaves delta-spark's LogStore settings as they are.
   */
  private def installCommitObserver(spark: SparkSession): Unit = CommitObserver.register(spark)
}
