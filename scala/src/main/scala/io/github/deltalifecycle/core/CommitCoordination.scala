package io.github.deltalifecycle.core

import java.util.Locale
import java.util.concurrent.ConcurrentHashMap

import io.github.deltalifecycle.shims.DeltaShim
import org.apache.spark.internal.Logging
import org.apache.spark.sql.delta.{CoordinatedCommitsTableFeature, DeltaConfigs}
import org.apache.spark.sql.delta.actions.{Metadata, Protocol}

/**
 * What makes a table's commits go through someone else: a table feature or table property (`kind`,
 * `name`), and who takes the commits (`owner`, as a noun phrase for messages).
 */
final case class CommitOwner(kind: String, name: String, owner: String)

/**
 * Tables whose commits go through a catalog (catalog-managed tables) or a commit coordinator
 * (coordinated commits). The owner decides which commit wins and may hold commits that are not in
 * `_delta_log` yet, so a file this project writes or deletes there directly could contradict the
 * table's real history. Such tables are only read: every operation that writes or deletes log files
 * asks here, right after reading the latest protocol and metadata and before writing anything.
 */
object CommitCoordination extends Logging {

  private val CatalogOwner = "its catalog"
  private val CoordinatorOwner = "its commit coordinator"

  /**
   * Protocol features (reader or writer) under which every commit goes through an owner, in the
   * order they are reported. `catalogOwned-preview` is the name Unity Catalog wrote before
   * delta-spark settled on `catalogManaged`; delta-spark 4.4 no longer registers it.
   */
  val Features: Seq[(String, String)] = Seq(
    DeltaShim.CatalogManagedFeatureName -> CatalogOwner,
    "catalogOwned-preview" -> CatalogOwner,
    CoordinatedCommitsTableFeature.name -> CoordinatorOwner
  )

  /**
   * Table properties that configure a commit coordinator. delta-spark requires them together; any
   * one of them, even alone, means the table was meant to commit through a coordinator.
   */
  val Properties: Seq[String] = Seq(
    DeltaConfigs.COORDINATED_COMMITS_COORDINATOR_NAME.key,
    DeltaConfigs.COORDINATED_COMMITS_COORDINATOR_CONF.key,
    DeltaConfigs.COORDINATED_COMMITS_TABLE_CONF.key
  )

  private val CoordinatorNameKey = DeltaConfigs.COORDINATED_COMMITS_COORDINATOR_NAME.key

  /** Whether `protocol` makes the table catalog-managed: its catalog takes every commit. */
  def isCatalogManaged(protocol: Protocol): Boolean = {
    val named = (protocol.readerFeatureNames ++ protocol.writerFeatureNames).map(lower)
    Features.exists { case (feature, owner) => owner == CatalogOwner && named(lower(feature)) }
  }

  private def lower(s: String) = s.toLowerCase(Locale.ROOT)

  /** Who owns the commits of a table in this state, or None when they are written directly. */
  def ownerOf(protocol: Protocol, metadata: Metadata): Option[CommitOwner] = {
    // Names as the log spells them; matched regardless of case, as delta-spark looks them up.
    val named = protocol.readerFeatureNames ++ protocol.writerFeatureNames
    val byFeature = Features.iterator.flatMap { case (feature, owner) =>
      named.find(lower(_) == lower(feature)).map(CommitOwner("table feature", _, owner))
    }
    def byProperty = Properties.iterator.flatMap { property =>
      metadata.configuration.find { case (k, _) => lower(k) == lower(property) }.map {
        case (k, v) =>
          val owner =
            if (lower(k) == lower(CoordinatorNameKey) && v.trim.nonEmpty)
              s"the commit coordinator '${v.trim}'"
            else CoordinatorOwner
          CommitOwner("table property", k, owner)
      }
    }
    byFeature.nextOption().orElse(byProperty.nextOption())
  }

  /**
   * Refuses `operation` (a verb phrase completed by the table, e.g. "compact the log of") on
   * `table` when its commits have an owner.
   */
  def requireDirectCommits(
      table: String,
      protocol: Protocol,
      metadata: Metadata,
      operation: String
  ): Unit =
    ownerOf(protocol, metadata).foreach { o =>
      throw ErrorConditions.coordinatedTable(
        table = table,
        operation = operation,
        kind = o.kind,
        name = o.name,
        owner = o.owner
      )
    }

  /** [[requireDirectCommits]] on the latest version of `listing`. */
  def requireDirectCommits(log: TableLog, listing: LogListing, operation: String): Unit = {
    val (protocol, metadata) = log.protocolAndMetadataAt(listing.latestVersion, listing)
    requireDirectCommits(log.tablePath.toString, protocol, metadata, operation)
  }

  /**
   * Refuses `operation` on `table` in this state unless this project may write it: its commits are
   * written directly, or it is catalog-managed and `log` reached it through its catalog
   * (`log.catalog`), whose commit path every write of this project then takes. A catalog-managed
   * table named by its path, and a table with a commit coordinator, stay read-only.
   */
  def requireWritable(
      log: TableLog,
      table: String,
      protocol: Protocol,
      metadata: Metadata,
      operation: String
  ): Unit =
    if (!(log.catalog.isDefined && isCatalogManaged(protocol)))
      requireDirectCommits(table, protocol, metadata, operation)

  /** [[requireWritable]] on the latest version of `listing`. */
  def requireWritable(log: TableLog, listing: LogListing, operation: String): Unit = {
    val (protocol, metadata) = log.protocolAndMetadataAt(listing.latestVersion, listing)
    requireWritable(log, log.tablePath.toString, protocol, metadata, operation)
  }

  private val skipsReported = ConcurrentHashMap.newKeySet[String]()
  private val MaxSkipsReported = 10000

  /**
   * For background work that must not fail (the post-commit policy): whether to leave `table`
   * alone. The reason is logged the first time a table is skipped, not after every commit.
   */
  def skipsBackgroundWrites(table: String, protocol: Protocol, metadata: Metadata): Boolean =
    ownerOf(protocol, metadata) match {
      case Some(o) =>
        if (skipsReported.size > MaxSkipsReported) skipsReported.clear()
        if (skipsReported.add(table)) {
          logWarning(s"Log maintenance leaves $table alone: its ${o.kind} '${o.name}' means its " +
            s"commits go through ${o.owner}, so this project writes no log files there")
        }
        true
      case None => false
    }
}
