package io.github.deltalifecycle.core

import java.util.Locale

import org.apache.hadoop.fs.FileStatus

/** A commit the table's catalog has ratified: its version and the staged file that holds it. */
final case class RatifiedCommit(version: Long, status: FileStatus)

/**
 * Maintenance that a catalog-managed table's catalog must permit before a client runs it (the
 * catalogManaged RFC prohibits it by default), named as Unity Catalog's API names the permissions
 * it returns. Checkpoints, log compactions and checksums of backfilled versions need none.
 */
sealed abstract class MaintenanceOperation(val name: String, val action: String)

object MaintenanceOperation {

  /** Rewriting data files the current version uses, without changing its rows. */
  case object DataReorganization
      extends MaintenanceOperation("DATA_REORGANIZATION", "rewrite its data files")

  /** Deleting log files that no retained version needs. */
  case object MetadataCleanup
      extends MaintenanceOperation("METADATA_CLEANUP", "delete its expired log files")
}

/**
 * What the administrator decides for the maintenance of catalog-managed tables
 * (`spark.deltaLifecycle.catalogManaged.maintenance`, docs/settings.md).
 */
sealed abstract class MaintenancePolicy(val name: String)

object MaintenancePolicy {

  /** Only what the table's catalog permits; a catalog that answers nothing permits nothing. */
  case object Catalog extends MaintenancePolicy("catalog")

  /** What the catalog permits; where it answers nothing, everything. */
  case object Allow extends MaintenancePolicy("allow")

  /** Nothing, whatever the catalog permits. */
  case object Refuse extends MaintenancePolicy("refuse")

  val all: Seq[MaintenancePolicy] = Seq(Catalog, Allow, Refuse)

  /**
   * The default follows the RFC: maintenance is prohibited unless the catalog permits it. Unity
   * Catalog OSS 0.6.0 answers nothing, so there an administrator opts in with `allow`.
   */
  val Default: MaintenancePolicy = Catalog

  def parse(value: String): Option[MaintenancePolicy] =
    all.find(_.name == value.trim.toLowerCase(Locale.ROOT))
}

/**
 * The catalog that takes a catalog-managed table's commits, as a statement reached it by name:
 * delta-spark's client of the catalog's commits API (built from the session's
 * `spark.sql.catalog.<name>.*` settings) ratifies every commit this project makes to the table
 * through delta-spark's transactions, and lists the commits `_delta_log` does not hold yet.
 *
 * A writer stages each commit in `_delta_log/_staged_commits/`, the catalog ratifies it, and the
 * writer copies it to `_delta_log/<v>.json` afterwards (backfills it); a writer that stops in
 * between leaves a version only the catalog knows. The RFC makes the catalog the source of truth
 * for those versions, so every listing of the table adds them ([[TableLog]]).
 */
trait ManagingCatalog {

  /** The catalog, for messages: "the catalog lake (Unity Catalog)". */
  def description: String

  /** The ratified commits from `fromVersion` on that the catalog still tracks, oldest first. */
  def ratifiedFrom(fromVersion: Long): Seq[RatifiedCommit]

  /**
   * The maintenance operations the catalog's own answer permits on this table, by name; None when
   * it gives no answer (Unity Catalog OSS 0.6.0 gives none).
   */
  def permittedMaintenance: Option[Set[String]]

  /**
   * Features the catalog requires of every table it manages: it refuses a protocol without them.
   */
  def requiredFeatures: Set[String]

  /** The administrator's policy. */
  def policy: MaintenancePolicy

  /** The setting that holds [[policy]], for messages. */
  def policySetting: String

  /**
   * Who permits `operation` on this table, or why nobody does: the catalog decides where it
   * answers, the administrator where it does not, and the administrator's `refuse` overrides both.
   */
  final def permission(operation: MaintenanceOperation): Either[String, String] =
    (policy, permittedMaintenance) match {
      case (MaintenancePolicy.Refuse, _) =>
        Left(s"the administrator's setting $policySetting is '${policy.name}'")
      case (_, Some(permitted)) if permitted.contains(operation.name) =>
        Right(s"$description permits ${operation.name}")
      case (_, Some(permitted)) =>
        val named = if (permitted.isEmpty) "none" else permitted.toSeq.sorted.mkString(", ")
        Left(s"$description does not permit ${operation.name} on the table (it permits: $named)")
      case (MaintenancePolicy.Allow, None) =>
        Right(s"the administrator's setting $policySetting is 'allow'")
      case (_, None) =>
        Left(s"$description gives no maintenance permission for the table, and the " +
          s"administrator's setting $policySetting is '${policy.name}'")
    }

  /** [[permission]], as the typed error when nobody permits `operation` on `table`. */
  final def requirePermission(table: String, operation: MaintenanceOperation): Unit =
    permission(operation).left.foreach { why =>
      throw ErrorConditions.CatalogManagedTable.maintenanceNotPermitted(
        table = table,
        action = operation.action,
        permission = operation.name,
        why = why,
        setting = policySetting,
        catalog = description
      )
    }
}
