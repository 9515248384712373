package io.github.deltalifecycle.features.dropfeature

import scala.util.control.NonFatal

import io.delta.storage.commit.CommitFailedException
import io.github.deltalifecycle.core.{
  ErrorConditions,
  FaultInjection,
  LogCommitter,
  ManagingCatalog,
  TableLog
}
import org.apache.spark.sql.delta.{DeltaConcurrentModificationException, DeltaOperations, Snapshot}
import org.apache.spark.sql.delta.actions.{Action, Metadata, Protocol}
import org.apache.spark.sql.delta.catalog.DeltaTableV2
import org.apache.spark.sql.delta.util.JsonUtils

/**
 * How a drop makes the commits it writes itself, the barrier's empty commits and the downgrade:
 * put-if-absent into `_delta_log` ([[LogCommitter]]), or, on a catalog-managed table reached
 * through its catalog, through delta-spark's transactions on the table, whose `CatalogTable` sends
 * them through the catalog's commit path as every commit delta-spark makes to such a table.
 */
private[dropfeature] sealed trait DropCommits {

  /** One empty commit on top of the latest version, moved past other writers' commits. */
  def emptyCommit(): Long

  /**
   * A commit planned on the latest snapshot (`plan` gives its actions for the version it lands at),
   * planned again on the new latest snapshot whenever another writer's commit lands first, up to
   * [[LogCommitter.MaxLostRaces]] times. `plan` may throw when the commit no longer holds.
   */
  def replanning(operation: DeltaOperations.Operation)(plan: Snapshot => Long => Seq[Action]): Long

  /** Whether a checkpoint may be copied from the version before, rather than written anew. */
  def copiesCheckpoints: Boolean
}

private[dropfeature] object DropCommits {

  def apply(log: TableLog, table: => DeltaTableV2): DropCommits =
    log.catalog.fold[DropCommits](new Direct(log, table))(new ThroughCatalog(_, table))

  private final class Direct(log: TableLog, table: => DeltaTableV2) extends DropCommits {
    def emptyCommit(): Long =
      LogCommitter.commitRebasing(
        log,
        log.tailListing().latestVersion,
        "Empty Commit",
        Map.empty,
        LogCommitter.movesPastAnything
      )(_ => Nil)

    def replanning(operation: DeltaOperations.Operation)(
        plan: Snapshot => Long => Seq[Action]
    ): Long =
      LogCommitter.commitReplanning(log, operation.name, operation.parameters) { () =>
        val snapshot = table.update()
        LogCommitter.PlannedCommit(snapshot.version, plan(snapshot))
      }

    def copiesCheckpoints: Boolean = true
  }

  /**
   * The catalog's commit path. A transaction reads the whole table, so any commit another writer
   * lands first fails delta-spark's conflict check and the commit is planned again from the new
   * latest version, as [[LogCommitter.commitReplanning]] does for direct commits. A refusal of the
   * catalog's own (its rules for the tables it manages) is raised as
   * `DELTA_LIFECYCLE_CATALOG_MANAGED_TABLE.CATALOG_REFUSED_COMMIT` with its reason. Checkpoints are
   * always delta-spark's, which checkpoints only versions `_delta_log` holds.
   */
  private final class ThroughCatalog(catalog: ManagingCatalog, table: => DeltaTableV2)
      extends DropCommits {
    def emptyCommit(): Long = refusalsTyped(DeltaOperations.EmptyCommit) {
      table.startTransaction().commit(Nil, DeltaOperations.EmptyCommit)
    }

    def replanning(operation: DeltaOperations.Operation)(
        plan: Snapshot => Long => Seq[Action]
    ): Long = refusalsTyped(operation) {
      var lostRaces = 0
      var committed: Option[Long] = None
      while (committed.isEmpty) {
        val snapshot = table.update()
        val txn = table.startTransaction(Some(snapshot))
        txn.readWholeTable()
        val actions = plan(snapshot)(snapshot.version + 1)
        actions.collectFirst { case p: Protocol => p }.foreach(txn.updateProtocol)
        actions.collectFirst { case m: Metadata => m }.foreach(txn.updateMetadata(_))
        val others = actions.filter {
          case _: Protocol | _: Metadata => false
          case _ => true
        }
        FaultInjection.step("dropFeature.catalogCommit.beforeCommit")
        try committed = Some(txn.commit(others, operation))
        catch {
          case _: DeltaConcurrentModificationException if lostRaces < LogCommitter.MaxLostRaces =>
            lostRaces += 1
        }
      }
      committed.get
    }

    def copiesCheckpoints: Boolean = false

    private def refusalsTyped[T](operation: DeltaOperations.Operation)(commit: => T): T =
      try commit
      catch {
        case NonFatal(e) if refusal(e).isDefined =>
          val refused = refusal(e).get
          throw ErrorConditions.CatalogManagedTable.catalogRefusedCommit(
            table = table.name(),
            catalog = catalog.description,
            operation = operation.name,
            reason = reason(refused.getMessage),
            cause = e
          )
      }

    /** A refusal of the catalog's commit path that is not a conflict with another commit. */
    private def refusal(e: Throwable): Option[CommitFailedException] =
      Iterator.iterate(e)(_.getCause).takeWhile(_ != null).collectFirst {
        case f: CommitFailedException if !f.getConflict => f
      }

    // Unity Catalog's reason is the "message" of the JSON error its client quotes.
    private def reason(message: String): String = {
      val json = Option(message).map(m => m.substring(math.max(m.indexOf('{'), 0))).getOrElse("")
      scala.util.Try(JsonUtils.mapper.readTree(json).path("error").path("message").asText(""))
        .toOption.filter(_.nonEmpty).getOrElse(String.valueOf(message))
    }
  }
}
