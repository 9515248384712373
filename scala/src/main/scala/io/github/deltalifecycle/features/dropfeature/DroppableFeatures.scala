package io.github.deltalifecycle.features.dropfeature

import java.util.Locale

import io.github.deltalifecycle.core.ErrorConditions
import io.github.deltalifecycle.features.redirect.RedirectMode
import org.apache.spark.sql.delta.{
  CheckConstraintsTableFeature,
  CheckpointProtectionTableFeature,
  RemovableFeature,
  TableFeature
}
import org.apache.spark.sql.delta.actions.{Metadata, Protocol}
import org.apache.spark.sql.delta.constraints.Constraints

/**
 * One step of a drop, planned or done: what it changes, how many commits it takes and how much data
 * it rewrites.
 */
final case class DropStep(description: String, commits: Int, files: Long = 0L, bytes: Long = 0L)

/**
 * The features DROP FEATURE removes: every feature the running delta-spark declares removable
 * (`RemovableFeature`), plus this project's own removals ([[ProjectDroppable]]) of the features it
 * does not declare on this line. Nothing here names a feature delta-spark could add or drop
 * tomorrow: a feature a future delta-spark declares removable drops without a code change, through
 * its own preparation ([[FeaturePreparation]]), and takes over from this project's removal of it.
 */
object DroppableFeatures {

  private lazy val declared: Seq[DroppableFeature] =
    TableFeature.allSupportedFeaturesMap.values.collect {
      case f: TableFeature with RemovableFeature => DeclaredRemovable(f)
    }.toSeq

  /** This project's removals in use on this line: of features delta-spark does not declare. */
  lazy val beyondStockFeatures: Seq[DroppableFeature] =
    ProjectDroppable.All.filterNot(own => declared.exists(_.feature == own.feature))

  /** By name. A redirect feature is left out: UNSET REDIRECT removes it (see [[lookup]]). */
  lazy val Features: Seq[DroppableFeature] = (declared ++ beyondStockFeatures)
    .filterNot(f => RedirectMode.featureNames.contains(f.name))
    .sortBy(_.name.toLowerCase(Locale.ROOT))

  lazy val Names: Seq[String] = Features.map(_.name)

  /** The features this project drops on this line although stock delta-spark of it does not. */
  def beyondStock: Seq[String] = beyondStockFeatures.map(_.name)

  private lazy val byLowerName: Map[String, DroppableFeature] =
    Features.map(f => f.name.toLowerCase(Locale.ROOT) -> f).toMap

  /**
   * The feature named `name` (any case) for a drop from `table` (its name, for errors), or a typed
   * error: a redirect feature goes by its own procedure, a feature delta-spark knows but does not
   * declare removable on this line cannot be dropped here (stock delta-spark refuses it too), any
   * other name is unknown.
   */
  def lookup(name: String, table: String): DroppableFeature = {
    // A redirect is removed with its own procedure, which brings the data back first.
    if (RedirectMode.featureNames.exists(_.equalsIgnoreCase(name))) {
      throw ErrorConditions.RedirectState.redirectFeature(table = table, feature = name)
    }
    byLowerName.getOrElse(
      name.toLowerCase(Locale.ROOT),
      throw TableFeature.featureNameToFeature(name).fold(
        ErrorConditions.unknownFeature(feature = name, droppable = Names)
      )(known =>
        ErrorConditions.dropNotSupportedOnLine(
          feature = known.name,
          reason =
            "this line's delta-spark does not declare it removable, so no client can drop it " +
              "without rewriting the table",
          droppable = Names
        )
      )
    )
  }

  /**
   * The feature `name` names on `table` (its name, for errors), whose protocol is `protocol`: the
   * named one, or else its preview spelling when the table has that instead (delta-spark 3.3 writes
   * `typeWidening-preview`, and `DROP FEATURE typeWidening` removes whichever the table has).
   */
  def resolve(name: String, protocol: Protocol, table: String): DroppableFeature = {
    val named = lookup(name, table)
    if (isPresent(protocol, named.feature)) named
    else byLowerName.get(named.name.toLowerCase(Locale.ROOT) + PreviewSuffix)
      .filter(f => isPresent(protocol, f.feature))
      .getOrElse(named)
  }

  private val PreviewSuffix = "-preview"

  def isPresent(protocol: Protocol, feature: TableFeature): Boolean =
    protocol.implicitlyAndExplicitlySupportedFeatures.contains(feature)

  /**
   * `protocol` without `feature`, in its weakest form, and with `feature`'s name gone from both
   * feature lists. delta-spark's own `removeFeature` does the same but accepts only the features it
   * declares removable, and this project drops more than those on some lines.
   */
  def protocolWithout(protocol: Protocol, feature: TableFeature): Protocol = {
    val explicit = protocol.denormalized
    explicit.copy(
      readerFeatures = explicit.readerFeatures.map(_ - feature.name),
      writerFeatures = explicit.writerFeatures.map(_ - feature.name)
    ).normalized
  }

  /**
   * The protocol a drop of `feature` commits: without it, and, for a drop under checkpoint
   * protection (`protect`), with checkpointProtection added.
   */
  def protocolAfterDrop(protocol: Protocol, feature: TableFeature, protect: Boolean): Protocol =
    protocolWithout(
      if (protect) protocol.denormalized.withFeature(CheckpointProtectionTableFeature)
      else protocol,
      feature
    )

  /** A reader-writer feature whose traces readers would replay: the drop needs a barrier. */
  def needsBarrier(feature: DroppableFeature): Boolean = feature.requiresHistoryProtection

  def isCheckpointProtection(feature: DroppableFeature): Boolean =
    feature.feature == CheckpointProtectionTableFeature

  /** Features in `protocol` that require `feature`, by name. */
  def dependents(protocol: Protocol, feature: DroppableFeature): Seq[String] =
    TableFeature.getDependentFeatures(
      feature.feature
    ).filter(protocol.isFeatureSupported).map(_.name).toSeq.sorted

  /**
   * Refuses, before anything is written, a drop that delta-spark's preparation would refuse
   * part-way: CHECK constraints are part of the table's meaning, so the user drops them.
   */
  def checkDroppable(feature: DroppableFeature, metadata: Metadata): Unit =
    if (feature.feature == CheckConstraintsTableFeature) {
      val names = Constraints.getCheckConstraintNames(metadata)
      if (names.nonEmpty) throw DropFeatureErrors.checkConstraintsInUse(feature.name, names)
    }
}
