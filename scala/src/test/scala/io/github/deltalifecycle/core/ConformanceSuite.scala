package io.github.deltalifecycle.core

import scala.util.{Failure, Success, Try}

import io.github.deltalifecycle.{LifecycleSparkSession, SharedTestData, SparkLines}
import org.apache.spark.sql.delta.{DeltaLog, Snapshot}
import org.apache.spark.sql.delta.actions.{AddFile, Metadata, Protocol}
import org.scalatest.funsuite.AnyFunSuite

/**
 * For every table that delta-spark and delta-rs wrote under tests/data, the log core must agree
 * with delta-spark's own DeltaLog on protocol, metadata, the set of active files, set-transactions
 * and domain metadata, at the latest version and at every version both can reconstruct; where
 * delta-spark refuses a table, the core must refuse it with a typed error too.
 */
class ConformanceSuite extends AnyFunSuite with LifecycleSparkSession {

  /**
   * Tables that delta-spark refuses but the core reads, and why that is right. Each is still
   * checked: the core's files must equal the add actions in the checkpoint, which Spark's own
   * Parquet reader counts independently.
   */
  private val readableOnlyByCore: Map[String, String] = Map(
    "delta-rs/table-with-domain-metadata" ->
      ("holds only a checkpoint (version 108) and no commit; delta-spark insists on the commit " +
        "at the checkpoint version, while PROTOCOL.md lets a reader start from the " +
        "checkpoint alone")
  )

  private def holdsVariants(snapshot: LogSnapshot): Boolean =
    snapshot.metadata.schemaString.contains("\"variant\"")

  private case class FileView(
      path: String,
      size: Long,
      partitionValues: Map[String, String],
      dv: Option[String]
  )

  private def view(reconciler: StateReconciler, files: Seq[AddFile]): Set[FileView] =
    files.map(a =>
      FileView(
        reconciler.canonicalPath(a.path),
        a.size,
        a.partitionValues,
        Option(a.deletionVector).map(_.uniqueId)
      )
    ).toSet

  private def protocolView(p: Protocol) =
    (
      p.minReaderVersion,
      p.minWriterVersion,
      p.readerFeatures.map(_.toSet),
      p.writerFeatures.map(_.toSet)
    )

  private def metadataView(m: Metadata) =
    (m.id, m.schemaString, m.partitionColumns.toSeq, m.configuration, m.format.provider)

  for (group <- Seq("delta-golden", "delta-rs"); name <- SharedTestData.tables(group)) {
    test(s"$group/$name") {
      val path = copyOfSharedTable(group, name)
      val core = TableLog.forPath(spark.sessionState.newHadoopConf(), path)
      val reconciler = new StateReconciler(core.fs, core.tablePath)
      val reference = Try {
        DeltaLog.clearCache()
        val deltaLog = DeltaLog.forTable(spark, path)
        (deltaLog, deltaLog.update())
      }

      reference match {
        case Failure(_) if readableOnlyByCore.contains(s"$group/$name") =>
          val snapshot = core.latestSnapshot()
          val checkpoint =
            snapshot.segment.checkpoint.getOrElse(fail("expected a checkpoint-based snapshot"))
          val addsInCheckpoint =
            spark.read.parquet(checkpoint.files.map(_.status.getPath.toString): _*)
              .where("add IS NOT NULL").count()
          assert(snapshot.activeFiles.size === addsInCheckpoint)
        case Failure(_) if Try(core.latestSnapshot()).toOption.exists(holdsVariants) =>
          // Spark 3.5 has no variant type and delta-spark 3.3 refuses such a table when it opens
          // it; the core reads logs, never data, so reading this one is right.
          assert(SparkLines.isSpark35, s"delta-spark refuses $name, which holds variants")
        case Failure(deltaError) =>
          val ours = Try(core.latestSnapshot())
          assert(
            ours.isFailure,
            s"delta-spark refuses $name (${deltaError.getMessage.take(300)}) but the core read it"
          )
          assert(
            ours.failed.get.isInstanceOf[DeltaLifecycleException],
            s"expected a typed error, got ${ours.failed.get}"
          )
        case Success((_, latest)) if latest.version < 0 =>
          val ours = Try(core.latestSnapshot())
          assert(ours.failed.toOption.exists(_.isInstanceOf[DeltaLifecycleException]))
        case Success((deltaLog, latest)) =>
          val listing = core.listing()
          val earliest = listing.earliestReconstructableVersion
          for (v <- versionsToCompare(earliest, latest.version)) {
            Try(deltaLog.getSnapshotAt(v)) match {
              case Success(expected) =>
                compare(reconciler, expected, core.snapshotAt(v, listing), v)
              case Failure(
                    _
                  ) => // delta-spark cannot rebuild this version; the core is not held to it
            }
          }
      }
    }
  }

  /**
   * Every version with DELTA_LIFECYCLE_FULL_MATRIX=1 (`make reliability`); otherwise, to fit CI's
   * time, the earliest, the one halfway and the latest (each version costs a snapshot of
   * delta-spark and a Spark job: the sweep of every version of every table took five of CI's
   * minutes).
   */
  private def versionsToCompare(earliest: Long, latest: Long): Seq[Long] =
    if (sys.env.get("DELTA_LIFECYCLE_FULL_MATRIX").contains("1")) earliest to latest
    else Seq(earliest, earliest + (latest - earliest) / 2, latest).distinct

  private def compare(
      reconciler: StateReconciler,
      expected: Snapshot,
      actual: LogSnapshot,
      v: Long
  ): Unit = {
    withClue(s"version $v: ") {
      assert(protocolView(actual.protocol) === protocolView(expected.protocol))
      assert(metadataView(actual.metadata) === metadataView(expected.metadata))
      assert(view(reconciler, actual.activeFiles) ===
        view(reconciler, expected.allFiles.collect().toSeq))
      assert(actual.setTransactions.map { case (k, t) => k -> t.version }.toMap ===
        expected.setTransactions.map(t => t.appId -> t.version).toMap)
      assert(actual.domainMetadata.map { case (k, d) => k -> d.configuration }.toMap ===
        expected.domainMetadata.map(d => d.domain -> d.configuration).toMap)
    }
  }
}
