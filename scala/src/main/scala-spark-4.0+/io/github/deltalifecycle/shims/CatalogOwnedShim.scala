package io.github.deltalifecycle.shims

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import io.delta.storage.commit.CommitCoordinatorClient
import io.delta.storage.commit.uccommitcoordinator.UCCommitCoordinatorClient
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.delta.coordinatedcommits.{
  CatalogOwnedCommitCoordinatorBuilder,
  CatalogOwnedCommitCoordinatorProvider,
  UCCommitCoordinatorBuilder,
  UCTokenBasedRestClientFactory
}

/**
 * Catalog-managed tables of a wrapped catalog (delta-spark 4.x). delta-spark finds the commit
 * coordinator of a Unity Catalog managed table by the class of the catalog that loaded it and by
 * the catalog's setting, both of which must name UC's connector; a catalog that this project wraps
 * names its own class there. So the wrapper registers, under its catalog's name, the builder
 * delta-spark asks first: it builds the same Unity Catalog commit client from the catalog's options
 * that delta-spark would build for the connector.
 */
object CatalogOwnedShim {

  /** Registers the commit coordinator of the Unity Catalog catalog `catalog` (once per name). */
  def registerUnityCatalogCommits(catalog: String, ownOptions: Set[String]): Unit =
    synchronized {
      if (CatalogOwnedCommitCoordinatorProvider.getBuilder(catalog).isEmpty) {
        try CatalogOwnedCommitCoordinatorProvider.registerBuilder(catalog, new Builder(ownOptions))
        catch { case NonFatal(_) => } // registered meanwhile by another class loader's copy
      }
    }

  private final class Builder(ownOptions: Set[String])
      extends CatalogOwnedCommitCoordinatorBuilder {
    override def getName: String = UCCommitCoordinatorBuilder.getName

    override def build(spark: SparkSession, conf: Map[String, String]): CommitCoordinatorClient =
      UCCommitCoordinatorBuilder.build(spark, conf)

    /** The catalog's options, as delta-spark collects them for the connector. */
    override def buildForCatalog(spark: SparkSession, catalog: String): CommitCoordinatorClient = {
      val prefix = s"spark.sql.catalog.$catalog."
      val options = spark.conf.getAll.collect {
        case (k, v) if k.startsWith(prefix) && !ownOptions.contains(k.stripPrefix(prefix)) =>
          k.stripPrefix(prefix) -> v
      }
      new UCCommitCoordinatorClient(
        Map.empty[String, String].asJava,
        UCTokenBasedRestClientFactory.createUCClient(options.asJava)
      )
    }
  }
}
