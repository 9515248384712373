package io.github.deltalifecycle.sql.resolution

import java.util.concurrent.ConcurrentHashMap

import io.github.deltalifecycle.core.{ErrorConditions, TableLog, TableName}
import io.github.deltalifecycle.features.redirect.StorageAccess
import io.github.deltalifecycle.sql.unitycatalog.{
  PathOperation,
  UnityCatalogClient,
  UnityCatalogRefusal,
  UnityCatalogs
}
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.catalog.CatalogTable
import org.apache.spark.sql.delta.DeltaTableUtils
import org.apache.spark.sql.deltalifecycle.SparkInternals

/**
 * How this project opens a table's storage: the one place that builds the Hadoop configuration of a
 * table's log and data files, and of a location that is no table's.
 *
 * A table named through its catalog is opened as delta-spark opens it: the session's configuration
 * with the file-system settings (`fs.*`, `dfs.*`) of its catalog entry, where a governing catalog
 * such as Unity Catalog puts what it vends for the table. A statement that writes asks such a
 * catalog for credentials to write first ([[forWriting]]): the catalog refuses a principal without
 * the privilege, and the statement with it, before anything is written. A location no table holds
 * (a redirect's destination) is opened with what the catalog vends for that path ([[access]]). A
 * table named by its path has no catalog, and opens with the session's configuration alone.
 */
object TableStorage {

  /** The Hadoop configuration that opens `table`'s log and files. */
  def hadoopConf(spark: SparkSession, table: LifecycleTableRef): Configuration =
    hadoopConf(spark, table.catalogTable)

  /** `table`'s log, opened as [[hadoopConf]] opens it. */
  def log(spark: SparkSession, table: LifecycleTableRef): TableLog =
    TableLog.forPath(hadoopConf(spark, table), table.path, storageOptions(table.catalogTable))

  /** The session's configuration with what the catalog entry `entry` carries for its storage. */
  def hadoopConf(spark: SparkSession, entry: Option[CatalogTable]): Configuration = {
    val conf = sessionConf(spark)
    storageOptions(entry).foreach { case (k, v) => conf.set(k, v) }
    conf
  }

  /** The storage settings of a catalog entry, as delta-spark's `DeltaTableV2` takes them. */
  def storageOptions(entry: Option[CatalogTable]): Map[String, String] =
    entry.map(_.storage.properties.filter { case (k, _) =>
      DeltaTableUtils.validDeltaTableHadoopPrefixes.exists(k.startsWith)
    }).getOrElse(Map.empty)

  /**
   * `table` as `operation` (a statement that writes) opens it: in a Unity Catalog catalog, with the
   * credentials the catalog vends to write to it, which replace the ones it vended when the table
   * was loaded (a principal with SELECT alone gets credentials to read); elsewhere, as it is. The
   * catalog's refusal is the statement's, before anything is written.
   */
  def forWriting(spark: SparkSession, table: LifecycleTableRef, operation: String)
      : LifecycleTableRef =
    governing(spark, table).fold(table) { case (uc, entry) =>
      val id = tableId(uc, entry, table.displayName)
      val vended = refusedAs(reason =>
        ErrorConditions.CatalogPermissionDenied.privilege(
          operation = operation,
          table = table.displayName,
          catalog = uc.catalogName,
          privilege = "MODIFY",
          reason = reason
        )
      ) {
        uc.tableCredentials(id, table.path.toString, write = true, sessionConf(spark))
      }
      table.copy(catalogTable = Some(withStorageOptions(entry, vended)))
    }

  /**
   * The storage of the redirect procedures run on `table`: its own location opens as [[hadoopConf]]
   * opens it; any other location (a destination) with the path credentials the table's Unity
   * Catalog catalog vends for it for `elsewhere`. A table of any other catalog, or named by its
   * path, opens every location with the session's configuration.
   */
  def access(
      spark: SparkSession,
      table: LifecycleTableRef,
      elsewhere: PathOperation,
      operation: String
  ): StorageAccess =
    governing(spark, table) match {
      case None => StorageAccess.uniform(hadoopConf(spark, table))
      case Some((uc, entry)) =>
        new VendedLocations(spark, table, storageOptions(Some(entry)), uc, elsewhere, operation)
    }

  /**
   * The storage of an access that names no catalog table (a path, a stream's location): every
   * location opens with the session's configuration, as delta-spark opens a table by its path.
   */
  def session(spark: SparkSession): StorageAccess = StorageAccess.uniform(sessionConf(spark))

  /**
   * The catalog entry `entry` as it serves the table at `location`, its redirect's destination: the
   * location, and in a Unity Catalog catalog what the catalog vends for that path (to write, with
   * `write`) in place of what it vended for the table's own.
   */
  def movedTo(spark: SparkSession, entry: CatalogTable, location: Path, write: Boolean)
      : CatalogTable =
    governedAt(spark, entry, location, write)
      .getOrElse(entry.copy(storage = entry.storage.copy(locationUri = Some(location.toUri))))

  /** [[movedTo]], where a Unity Catalog catalog governs `entry`'s table; None elsewhere. */
  def governedAt(spark: SparkSession, entry: CatalogTable, location: Path, write: Boolean)
      : Option[CatalogTable] = {
    val name = TableName.sql(entry.identifier.nameParts)
    val ref = LifecycleTableRef(location, name, Some(entry), entry.identifier.catalog)
    governing(spark, ref).map { case (uc, _) =>
      val moved = entry.copy(storage = entry.storage.copy(locationUri = Some(location.toUri)))
      val operation = if (write) PathOperation.ReadWrite else PathOperation.Read
      withStorageOptions(moved, pathCredentials(spark, uc, ref, location, operation, "access"))
    }
  }

  /** The Unity Catalog catalog `table` was named in, and its entry there, if it has both. */
  private def governing(spark: SparkSession, table: LifecycleTableRef)
      : Option[(UnityCatalogClient, CatalogTable)] =
    for {
      name <- table.catalog
      entry <- table.catalogTable
      uc <- UnityCatalogs.client(spark, name)
    } yield (uc, entry)

  private def tableId(uc: UnityCatalogClient, entry: CatalogTable, displayName: String): String = {
    val parts = uc.catalogName +: entry.identifier.database.toSeq :+ entry.identifier.table
    uc.table(parts.mkString(".")).flatMap(t => Option(t.get("table_id"))).map(_.asText)
      .getOrElse(throw ErrorConditions.tableNotFound(displayName))
  }

  /**
   * `entry` with `vended` as its storage settings, in both spellings UC's connector writes them
   * (plain, which delta-spark reads, and with the `option.` prefix).
   */
  private def withStorageOptions(entry: CatalogTable, vended: Map[String, String]): CatalogTable = {
    val OptionPrefix = "option."
    def isStorageKey(k: String) = DeltaTableUtils.validDeltaTableHadoopPrefixes
      .exists(p => k.startsWith(p) || k.startsWith(OptionPrefix + p))
    val kept = entry.storage.properties.filterNot { case (k, _) => isStorageKey(k) }
    val props = kept ++ vended ++ vended.map { case (k, v) => (OptionPrefix + k) -> v }
    entry.copy(storage = entry.storage.copy(properties = props))
  }

  // A table's storage starts from the session's configuration, as delta-spark's does.
  private def sessionConf(spark: SparkSession): Configuration = SparkInternals.newHadoopConf(spark)

  /**
   * The table's own location opens with `own` (its catalog entry's settings); every other location
   * with the path credentials `uc` vends for it, asked once per location root.
   */
  private final class VendedLocations(
      spark: SparkSession,
      table: LifecycleTableRef,
      own: Map[String, String],
      uc: UnityCatalogClient,
      elsewhere: PathOperation,
      operation: String
  ) extends StorageAccess {
    private val session = sessionConf(spark)
    private val confs = new ConcurrentHashMap[Map[String, String], Configuration]()
    private val vended = new ConcurrentHashMap[String, Map[String, String]]()

    def names: Configuration = conf(table.path)

    def conf(path: Path): Configuration =
      confs.computeIfAbsent(
        options(path),
        { settings =>
          val conf = new Configuration(session)
          settings.foreach { case (k, v) => conf.set(k, v) }
          conf
        }
      )

    def options(path: Path): Map[String, String] =
      if (isUnder(path, table.path)) own
      else {
        val known =
          vended.keySet().toArray(Array.empty[String]).find(r => isUnder(path, new Path(r)))
        known.map(vended.get).getOrElse(
          vended.computeIfAbsent(path.toString.stripSuffix("/"), _ => forPath(path))
        )
      }

    private def forPath(path: Path): Map[String, String] =
      pathCredentials(spark, uc, table, path, elsewhere, operation)
  }

  /** What `uc` vends for `path`, or the statement's refusal naming the path. */
  private def pathCredentials(
      spark: SparkSession,
      uc: UnityCatalogClient,
      table: LifecycleTableRef,
      path: Path,
      pathOperation: PathOperation,
      operation: String
  ): Map[String, String] =
    refusedAs(reason =>
      ErrorConditions.CatalogPermissionDenied.path(
        operation = operation,
        table = table.displayName,
        catalog = uc.catalogName,
        pathOperation = pathOperation.name,
        path = path.toString,
        reason = reason
      )
    ) {
      uc.pathCredentials(path.toString, pathOperation, sessionConf(spark))
    }

  /** What `vend` returns; the catalog's refusal of it as the statement's error for its reason. */
  private def refusedAs[T](error: String => Throwable)(vend: => T): T =
    try vend
    catch { case r: UnityCatalogRefusal => throw error(r.reason) }

  /** Whether `path` is `root` or lies under it (compared as written, scheme and authority too). */
  private def isUnder(path: Path, root: Path): Boolean = {
    val p = path.toUri.normalize.toString.stripSuffix("/")
    val r = root.toUri.normalize.toString.stripSuffix("/")
    p == r || p.startsWith(r + "/")
  }
}
