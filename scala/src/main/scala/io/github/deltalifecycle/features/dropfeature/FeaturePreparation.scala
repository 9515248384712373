package io.github.deltalifecycle.features.dropfeature

import io.github.deltalifecycle.core.{DeltaState, FileTally, LogCommitter, OutOfMemory, TableLog}
import io.github.deltalifecycle.shims.{DeltaShim, ReorgShim}
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.delta.{
  DeletionVectorsTableFeature,
  DeltaConfigs,
  DeltaOperations,
  RowTrackingFeature,
  Snapshot,
  TypeWideningPreviewTableFeature,
  TypeWideningTableFeature
}
import org.apache.spark.sql.delta.catalog.DeltaTableV2
import org.apache.spark.sql.delta.commands.{
  AlterTableSetPropertiesDeltaCommand,
  DeltaOptimizeContext,
  DeltaReorgOperation,
  OptimizeExecutor
}
import org.apache.spark.sql.delta.deltalifecycle.DeltaInternals
import org.apache.spark.sql.delta.sources.DeltaSQLConf

/**
 * The preparation of a drop: the steps that remove a feature's traces from the latest version
 * before the downgrade. DRY RUN reports [[plan]] and the drop runs [[run]]; both come from the same
 * object, so what is planned is what runs.
 */
sealed trait FeaturePreparation {

  /**
   * The commits the preparation makes on the version `files` describes, in order, with the files it
   * rewrites.
   */
  def plan(files: TableFiles): Seq[DropStep]

  /**
   * Runs the preparation on the latest version; a no-op once no trace is left. `beforeRewrite` runs
   * before this project rewrites data files itself, and may refuse by throwing.
   */
  def run(beforeRewrite: () => Unit): Unit

  /**
   * Whether `planned` rewrites data files with this project's own rewrite rather than a command of
   * delta-spark's: on a catalog-managed table that is maintenance its catalog must permit, where
   * delta-spark's own commands keep their own rules.
   */
  def rewritesDataItself(planned: Seq[DropStep]): Boolean = false
}

/**
 * What a preparation works with: its table and session, the files of any version, and the drop's
 * own way of committing ([[DropCommits]]), so that its property changes and tombstones commit as
 * the drop's other commits do.
 */
final class PreparationContext private[dropfeature] (
    val table: DeltaTableV2,
    val spark: SparkSession,
    val files: TableFileState,
    private[dropfeature] val commits: DropCommits
)

/**
 * For every feature the preparation is delta-spark's pre-downgrade command, except deletionVectors
 * and typeWidening: delta-spark 4.4's commands for those run a REORG whose file filter asks for a
 * SparkSession inside its tasks, which fails on any cluster whose executors are other JVMs. For
 * those two, the same steps are built from delta-spark's public pieces (its property unsetting, its
 * OPTIMIZE machinery with a task-safe REORG file filter, its transactions), in the order
 * delta-spark runs them. This project's own removals ([[ProjectDroppable]]) use the same
 * deletion-vector purge, and their own row-ID and domain removals. Each step commits on its own and
 * checks the latest version first, so a re-run after a crash carries on where the last run stopped.
 */
object FeaturePreparation {

  /** The preparation of a feature delta-spark declares removable. */
  def forDeclared(feature: DeclaredRemovable, context: PreparationContext): FeaturePreparation = {
    val (table, spark) = (context.table, context.spark)
    feature.feature match {
      case DeletionVectorsTableFeature => new DeletionVectorPurge(feature, table, spark, context)
      case TypeWideningTableFeature | TypeWideningPreviewTableFeature =>
        new TypeChangeRemoval(feature, table, spark, context)
      case RowTrackingFeature =>
        new DeltaSparkPreparation(feature, table, spark)(rowTrackingSuspension(_, spark))
      case _ => new DeltaSparkPreparation(feature, table, spark)(_ => oneCommit(feature))
    }
  }

  def deletionVectorPurge(
      feature: DroppableFeature,
      context: PreparationContext
  ): FeaturePreparation =
    new DeletionVectorPurge(feature, context.table, context.spark, context)

  def rowIdRemoval(feature: DroppableFeature, context: PreparationContext): FeaturePreparation =
    new RowIdRemoval(feature, context.table, context.spark, context)

  def domainRemoval(feature: DroppableFeature, context: PreparationContext): FeaturePreparation =
    new DomainRemoval(feature, context.table, context)

  /**
   * delta-spark's own pre-downgrade command, run as it is. The plan says whether it is due
   * (delta-spark's check of the latest version) and, when it is, the commits `due` expects of it on
   * `snapshot`.
   */
  private final class DeltaSparkPreparation(
      feature: DeclaredRemovable,
      table: DeltaTableV2,
      spark: SparkSession
  )(due: TableFiles => Seq[DropStep])
      extends FeaturePreparation {
    def plan(files: TableFiles): Seq[DropStep] =
      if (feature.validateRemoval(table, files)) Nil else due(files)

    def run(beforeRewrite: () => Unit): Unit =
      DeltaShim.removeFeatureTraces(feature.declared, table, spark)
  }

  /**
   * What delta-spark decides for itself counts as one commit, which it is for every feature that
   * needs only its properties changed or one rewrite; the run's result reports the versions it
   * really wrote.
   */
  private def oneCommit(feature: DroppableFeature): Seq[DropStep] = Seq(DropStep(
    s"remove the traces of ${feature.name} with delta-spark's own preparation " +
      "(its pre-downgrade command decides what it rewrites)",
    1
  ))

  /**
   * delta-spark 4.4's row-tracking preparation: one commit that turns row tracking off and suspends
   * row ID generation, then its un-backfill, which takes the row IDs off the files in commits of at
   * most [[rowIdBatch]] files. It stays delta-spark's command, since suspension also stops
   * concurrent writers from assigning new row IDs.
   */
  private def rowTrackingSuspension(files: TableFiles, spark: SparkSession): Seq[DropStep] =
    DropStep(
      s"set ${DeltaConfigs.ROW_TRACKING_ENABLED.key} = false and suspend row ID generation",
      1
    ) +: rowIdTakeOff(files, spark).toSeq

  /**
   * Stop new deletion vectors (unset the property), rewrite the files that have them (REORG PURGE),
   * then record the deletion-vector files still within the tombstone retention as tombstones, so a
   * client without the feature does not vacuum a file an older version still needs.
   */
  private final class DeletionVectorPurge(
      feature: DroppableFeature,
      table: DeltaTableV2,
      spark: SparkSession,
      context: PreparationContext
  ) extends FeaturePreparation {
    private val property = DeltaConfigs.ENABLE_DELETION_VECTORS_CREATION.key

    def plan(files: TableFiles): Seq[DropStep] = {
      val purge =
        if (feature.validateRemoval(table, files)) Nil
        else DropStep(s"unset $property", 1) +:
          rewrite("purge deletion vectors", files.withDeletionVectors).toSeq
      purge ++
        Option.when(DeltaShim.generatesDvTombstones)(DropStep(
          "record deletion-vector files as tombstones, " +
            "so clients without the feature do not vacuum them",
          1
        ))
    }

    def run(beforeRewrite: () => Unit): Unit = {
      if (!feature.validateRemoval(table, context.files.at(table.update()))) {
        PreparationCommits.unsetProperty(context, property)
        // delta-spark's REORG (its OPTIMIZE) lists every file of the table on the driver, which
        // a table of millions of files cannot hold; counted from the log first, a table without
        // deletion vectors gives it nothing to rewrite, so it does not run.
        if (context.files.at(table.update()).withDeletionVectors.files > 0) {
          beforeRewrite()
          reorg(table, ReorgShim.purge, spark)
        }
      }
      if (DeltaShim.generatesDvTombstones) PreparationCommits.dvTombstones(table, context)
    }

    override def rewritesDataItself(planned: Seq[DropStep]): Boolean = planned.exists(_.files > 0)
  }

  /**
   * Stop new type changes (unset the property), rewrite the files written with a narrower type
   * (REORG REWRITE_TYPE_WIDENING), then remove the type-change records from the schema.
   */
  private final class TypeChangeRemoval(
      feature: DroppableFeature,
      table: DeltaTableV2,
      spark: SparkSession,
      context: PreparationContext
  ) extends FeaturePreparation {
    private val property = DeltaConfigs.ENABLE_TYPE_WIDENING.key

    def plan(files: TableFiles): Seq[DropStep] =
      if (feature.validateRemoval(table, files)) Nil
      else Seq(DropStep(s"unset $property", 1)) ++ (
        if (!DeltaInternals.hasTypeChanges(files.snapshot.schema)) Nil
        else rewrite("rewrite files written with a narrower type", files.writtenNarrower).toSeq :+
          DropStep("remove the type-change records from the schema", 1)
      )

    override def rewritesDataItself(planned: Seq[DropStep]): Boolean = planned.exists(_.files > 0)

    def run(beforeRewrite: () => Unit): Unit = {
      if (feature.validateRemoval(table, context.files.at(table.update()))) return
      PreparationCommits.unsetProperty(context, property)
      if (DeltaInternals.hasTypeChanges(table.update().schema)) {
        beforeRewrite()
        reorg(table, ReorgShim.typeWideningRewrite, spark)
        val txn = table.startTransaction()
        val (schema, changed) = DeltaInternals.withoutTypeChanges(txn.metadata.schema)
        txn.commit(
          Seq(txn.metadata.copy(schemaString = schema.json)),
          DeltaOperations.UpdateColumnMetadata("DROP FEATURE", changed)
        )
      }
    }
  }

  /**
   * Turn row tracking off, then take the row IDs and row commit versions off every file that has
   * them, in commits of at most [[rowIdBatch]] files. delta-spark's transactions would give those
   * files fresh row IDs again (they assign them wherever the protocol has the feature), so the
   * files are re-added through this project's committer. A concurrent writer's new files still get
   * row IDs until the downgrade; its check of the latest version finds them, and a re-run removes
   * them.
   */
  private final class RowIdRemoval(
      feature: DroppableFeature,
      table: DeltaTableV2,
      spark: SparkSession,
      context: PreparationContext
  ) extends FeaturePreparation {
    private val property = DeltaConfigs.ROW_TRACKING_ENABLED.key

    private def enabled(snapshot: Snapshot) =
      DeltaConfigs.ROW_TRACKING_ENABLED.fromMetaData(snapshot.metadata)

    def plan(files: TableFiles): Seq[DropStep] =
      if (feature.validateRemoval(table, files)) Nil
      else Option.when(enabled(files.snapshot))(DropStep(s"set $property = false", 1)).toSeq ++
        rowIdTakeOff(files, spark)

    def run(beforeRewrite: () => Unit): Unit = {
      if (enabled(table.update()))
        AlterTableSetPropertiesDeltaCommand(table, Map(property -> "false")).run(spark)
      val snapshot = table.update()
      val log = logOf(table)
      val withRowIds = context.files.at(snapshot).filesWithRowIds
      OutOfMemory.guarded(withRowIds.rdd).toLocalIterator.grouped(rowIdBatch(spark))
        .foldLeft(snapshot.version) { (readVersion, batch) =>
          val readds = batch.map(
            _.copy(baseRowId = None, defaultRowCommitVersion = None, dataChange = false)
          )
          LogCommitter.commitRebasing(log, readVersion, PreparationOperation, parameters(feature))(
            _ => readds
          )
        }
    }
  }

  /**
   * The most files one commit that takes row IDs off re-adds: delta-spark's backfill batch size
   * (`backfill.maxNumFiles`), which its un-backfill uses too. It bounds the commit's size and the
   * driver's memory.
   */
  def rowIdBatch(spark: SparkSession): Int =
    spark.sessionState.conf.getConf(DeltaSQLConf.DELTA_BACKFILL_MAX_NUM_FILES_PER_COMMIT)

  /** The commits that take the row IDs off the files that have them. */
  private def rowIdTakeOff(files: TableFiles, spark: SparkSession): Option[DropStep] = {
    val withRowIds = files.withRowIds
    val batch = rowIdBatch(spark)
    Option.when(withRowIds > 0)(DropStep(
      s"take the row IDs off $withRowIds files (their data is not rewritten)",
      ((withRowIds + batch - 1) / batch).toInt
    ))
  }

  /**
   * Remove every domain metadata left in the table. The drop has checked that no feature needing
   * domain metadata is left, so what remains is a leftover, as delta-spark 4.4 treats it. Committed
   * through this project's committer, as delta-spark 3.3 names no operation for it.
   */
  private final class DomainRemoval(
      feature: DroppableFeature,
      table: DeltaTableV2,
      context: PreparationContext
  ) extends FeaturePreparation {
    def plan(files: TableFiles): Seq[DropStep] =
      if (feature.validateRemoval(table, files)) Nil
      else Seq(DropStep(
        "remove the domain metadata " +
          files.snapshot.domainMetadata.map(_.domain).sorted.mkString(", "),
        1
      ))

    def run(beforeRewrite: () => Unit): Unit = {
      val snapshot = table.update()
      if (feature.validateRemoval(table, context.files.at(snapshot))) return
      val log = logOf(table)
      LogCommitter.commitRebasing(log, snapshot.version, PreparationOperation, parameters(feature))(
        _ => snapshot.domainMetadata.map(_.copy(removed = true))
      )
    }
  }

  /** The table's log, for the preparation commits this project writes itself. */
  private def logOf(table: DeltaTableV2): TableLog =
    TableLog.forPath(table.deltaLog.newDeltaHadoopConf(), table.deltaLog.dataPath)

  /** The operation this project's preparation commits record, as delta-spark's drop does. */
  private val PreparationOperation = "DROP FEATURE"

  private def parameters(feature: DroppableFeature): Map[String, Any] =
    Map("featureName" -> feature.name, "step" -> "prepare")

  /** A REORG's commit, when it has files to rewrite. */
  private def rewrite(what: String, tally: FileTally): Option[DropStep] =
    Option.when(tally.files > 0)(
      DropStep(s"$what: rewrite ${tally.files} files", 1, tally.files, tally.bytes)
    )

  /**
   * delta-spark's REORG: its OPTIMIZE machinery rewrites the files `operation` picks, in Spark
   * jobs, keeping row IDs and row commit versions as delta-spark's REORG does, and commits through
   * the table's transaction. Run directly rather than through delta-spark's OPTIMIZE command, which
   * on a catalog-managed table refuses whatever the catalog permits; the drop asks the catalog
   * first.
   */
  private def reorg(table: DeltaTableV2, operation: DeltaReorgOperation, spark: SparkSession) = {
    val snapshot = table.update()
    DeltaState.load(snapshot)
    new OptimizeExecutor(
      spark,
      snapshot,
      table.catalogTable,
      Nil,
      Nil,
      false,
      DeltaOptimizeContext(
        reorg = Some(operation),
        minFileSize = Some(0L),
        maxDeletedRowsRatio = Some(0d)
      )
    ).optimize()
  }
}
