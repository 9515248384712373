package io.github.deltalifecycle.features.dropfeature

import java.util.Locale

import io.github.deltalifecycle.core.{LifecycleErrors, SnapshotHead}
import io.github.deltalifecycle.shims.DeltaShim
import org.apache.spark.sql.delta.{
  CheckConstraintsTableFeature,
  CheckpointProtectionTableFeature,
  ColumnMappingTableFeature,
  DeltaConfigs,
  InCommitTimestampTableFeature,
  RemovableFeature,
  TableFeature,
  TypeWideningPreviewTableFeature,
  TypeWideningTableFeature,
  V2CheckpointTableFeature,
  VacuumProtocolCheckTableFeature
}
import org.apache.spark.sql.delta.actions.{Metadata, Protocol}
import org.apache.spark.sql.delta.constraints.Constraints
import org.apache.spark.sql.types.{ArrayType, DataType, MapType, StructType}

/**
 * One step of a drop, planned or done: what it changes, how many commits it takes and how much data
 * it rewrites.
 */
final case class DropStep(description: String, commits: Int, files: Long = 0L, bytes: Long = 0L)

/** A number of files and their total size. */
final case class FileTally(files: Long, bytes: Long)

/**
 * What a drop's plan needs to know about the latest version's files. Computed on demand, and never
 * by holding the files on the driver: see [[DistributedTableFiles]].
 */
trait TableFiles {
  def all: FileTally
  def withDeletionVectors: FileTally

  /** Files written with a narrower type than the schema's (type widening). */
  def writtenNarrower: FileTally
}

/**
 * The features DROP FEATURE removes, and what their preparation does to a given table state. The
 * preparation itself (disabling properties, rewriting data) is delta-spark's own pre-downgrade
 * command for the feature; this object predicts it for DRY RUN and the result.
 */
object DroppableFeatures {
  type Droppable = TableFeature with RemovableFeature

  /**
   * In the order the docs list them. Not `coordinatedCommits-preview`: a table that names it
   * commits through its coordinator, which this project does not write past (CommitCoordination).
   * deletionVectors comes from the line's shim: delta-spark 3.3 cannot remove it.
   */
  val Features: Seq[Droppable] = DeltaShim.LineOnlyDroppable ++ Seq(
    TypeWideningTableFeature,
    TypeWideningPreviewTableFeature,
    V2CheckpointTableFeature,
    CheckpointProtectionTableFeature,
    ColumnMappingTableFeature,
    CheckConstraintsTableFeature,
    InCommitTimestampTableFeature,
    VacuumProtocolCheckTableFeature
  )

  val Names: Seq[String] = Features.map(_.name)

  private val byLowerName: Map[String, Droppable] =
    Features.map(f => f.name.toLowerCase(Locale.ROOT) -> f).toMap

  /** The feature named `name` (any case), or a typed error listing the droppable ones. */
  def lookup(name: String): Droppable = {
    // A redirect is removed with its own procedure, which brings the data back first.
    if (
      io.github.deltalifecycle.features.redirect.RedirectMode.featureNames.exists(
        _.equalsIgnoreCase(name)
      )
    ) {
      throw LifecycleErrors.redirectState(
        name,
        "a redirect feature is removed by ALTER TABLE ... UNSET REDIRECT, " +
          "which first brings back everything written at the destination"
      )
    }
    DeltaShim.NotDroppableOnLine.find(_._1.equalsIgnoreCase(name)).foreach { case (f, why) =>
      throw LifecycleErrors.dropNotSupportedOnLine(f, why, Names)
    }
    byLowerName.getOrElse(
      name.toLowerCase(Locale.ROOT),
      throw LifecycleErrors.unknownFeature(name, Names)
    )
  }

  def isPresent(protocol: Protocol, feature: TableFeature): Boolean =
    protocol.implicitlyAndExplicitlySupportedFeatures.contains(feature)

  /** A reader-writer feature whose traces readers would replay: the drop needs a barrier. */
  def needsBarrier(feature: Droppable): Boolean = feature.requiresHistoryProtection

  def isCheckpointProtection(feature: TableFeature): Boolean = feature ==
    CheckpointProtectionTableFeature

  /** Features in `protocol` that require `feature`, by name. */
  def dependents(protocol: Protocol, feature: Droppable): Seq[String] =
    TableFeature.getDependentFeatures(
      feature
    ).filter(protocol.isFeatureSupported).map(_.name).toSeq.sorted

  /**
   * Refuses, before anything is written, a drop that delta-spark's preparation would refuse
   * part-way: CHECK constraints are part of the table's meaning, so the user drops them.
   */
  def checkDroppable(feature: Droppable, metadata: Metadata): Unit = feature.name match {
    case "checkConstraints" =>
      val names = Constraints.getCheckConstraintNames(metadata)
      if (names.nonEmpty) throw LifecycleErrors.featureInUse(
        feature.name,
        s"the table has CHECK constraints ${names.mkString(", ")}. Drop them first with " +
          s"ALTER TABLE ... DROP CONSTRAINT ${names.head}."
      )
    case _ =>
  }

  /**
   * The commits delta-spark's preparation makes for `feature` on `head`, in order, with the files
   * it rewrites, following delta-spark's pre-downgrade commands step by step. `files` is asked only
   * for the figures the feature's preparation depends on.
   */
  def preparation(feature: Droppable, head: SnapshotHead, files: TableFiles): Seq[DropStep] = {
    val conf = head.configuration
    def isTrue(key: String) = conf.get(key).exists(_.trim.equalsIgnoreCase("true"))
    def rewrite(what: String, tally: FileTally) =
      Option.when(tally.files > 0)(DropStep(
        s"$what: rewrite ${tally.files} files",
        1,
        tally.files,
        tally.bytes
      ))
    feature.name match {
      case "deletionVectors" =>
        val withDvs = files.withDeletionVectors
        // delta-spark unsets the property whenever it finds any trace, set or not.
        Option.when(isTrue(DeltaConfigs.ENABLE_DELETION_VECTORS_CREATION.key) || withDvs.files > 0)(
          DropStep(s"unset ${DeltaConfigs.ENABLE_DELETION_VECTORS_CREATION.key}", 1)
        ).toSeq ++
          rewrite("purge deletion vectors", withDvs) ++
          // delta-spark commits this step whenever it is on, even with no tombstone to add.
          Option.when(DeltaShim.generatesDvTombstones)(
            DropStep(
              "record deletion-vector files as tombstones, " +
                "so clients without the feature do not vacuum them",
              1
            )
          )
      case "typeWidening" | "typeWidening-preview" =>
        val changed = hasTypeChanges(head.metadata.schema)
        Option.when(isTrue(DeltaConfigs.ENABLE_TYPE_WIDENING.key) || changed)(
          DropStep(s"unset ${DeltaConfigs.ENABLE_TYPE_WIDENING.key}", 1)
        ).toSeq ++
          (if (changed)
             rewrite("rewrite files written with a narrower type", files.writtenNarrower).toSeq ++
               Seq(DropStep("remove the type-change records from the schema", 1))
           else Nil)
      case "v2Checkpoint" =>
        val policy = conf.getOrElse(DeltaConfigs.CHECKPOINT_POLICY.key, "classic")
        Option.when(!policy.equalsIgnoreCase("classic"))(
          DropStep(s"set ${DeltaConfigs.CHECKPOINT_POLICY.key} = classic", 1)
        ).toSeq
      case "columnMapping" =>
        val mode = conf.getOrElse(DeltaConfigs.COLUMN_MAPPING_MODE.key, "none")
        if (mode.equalsIgnoreCase("none")) Nil
        else {
          val all = files.all
          Seq(DropStep(
            "rewrite the table with logical column names and unset " +
              DeltaConfigs.COLUMN_MAPPING_MODE.key,
            1,
            all.files,
            all.bytes
          ))
        }
      case "inCommitTimestamp" =>
        val provenance = Seq(
          DeltaConfigs.IN_COMMIT_TIMESTAMP_ENABLEMENT_VERSION.key,
          DeltaConfigs.IN_COMMIT_TIMESTAMP_ENABLEMENT_TIMESTAMP.key
        ).filter(conf.contains)
        Option.when(isTrue(DeltaConfigs.IN_COMMIT_TIMESTAMPS_ENABLED.key) || provenance.nonEmpty)(
          DropStep(
            s"disable ${DeltaConfigs.IN_COMMIT_TIMESTAMPS_ENABLED.key} " +
              "and remove its provenance properties",
            1
          )
        ).toSeq
      case _ => Nil
    }
  }

  private val TypeChangesKey = "delta.typeChanges"

  private def hasTypeChanges(dataType: DataType): Boolean = dataType match {
    case s: StructType =>
      s.fields.exists(f => f.metadata.contains(TypeChangesKey) || hasTypeChanges(f.dataType))
    case a: ArrayType => hasTypeChanges(a.elementType)
    case m: MapType => hasTypeChanges(m.keyType) || hasTypeChanges(m.valueType)
    case _ => false
  }
}
