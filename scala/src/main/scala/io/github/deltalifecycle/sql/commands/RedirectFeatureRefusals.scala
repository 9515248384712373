package io.github.deltalifecycle.sql.commands

import io.github.deltalifecycle.core.ErrorConditions
import io.github.deltalifecycle.features.redirect.RedirectMode
import io.github.deltalifecycle.sql.resolution.LifecycleTableRef
import org.apache.spark.sql.delta.DeltaUnsupportedTableFeatureException

/** delta-spark's refusal of a redirect feature, as this project's typed error. */
object RedirectFeatureRefusals {

  /**
   * Runs `body`, a statement that has delta-spark change `table`, turning delta-spark's refusal of
   * a redirect feature in the table's protocol into this project's typed error.
   */
  def typed[T](statement: String, table: LifecycleTableRef)(body: => T): T =
    try body
    catch {
      case e: DeltaUnsupportedTableFeatureException
          if RedirectMode.featureNames.exists(f => String.valueOf(e.getMessage).contains(f)) =>
        val named = RedirectMode.featureNames.filter(f => e.getMessage.contains(f)).toSeq.sorted
        throw ErrorConditions.redirectBlocksDeltaSpark(
          statement = statement,
          table = table.displayName,
          features = named,
          cause = e
        )
    }
}
