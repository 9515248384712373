package io.github.deltalifecycle.sql.routing

import scala.annotation.nowarn

import io.github.deltalifecycle.core.{DeltaLifecycleException, ErrorConditions, TableName}
import io.github.deltalifecycle.features.redirect.Access
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.FunctionIdentifier
import org.apache.spark.sql.catalyst.expressions.{Expression, ExpressionInfo, Literal}
import org.apache.spark.sql.delta.DeltaLog
import org.apache.spark.sql.delta.sources.DeltaSourceUtils
import org.apache.spark.sql.deltalifecycle.SparkInternals
import org.apache.spark.sql.types.StringType

/**
 * What delta-spark's `DeltaTable.forPath` and `DeltaTable.forName` should be given so that the
 * table they build follows a redirect. delta-spark builds that table from a path, or from a one- or
 * two-part name's metastore entry, without asking any catalog, so no rule or catalog of this
 * project sees it; the Python package (`delta_lifecycle._delta_tables`) asks here first. A table
 * that is not redirected comes back as it was given, so delta-spark builds exactly what it would
 * have built.
 */
object DeltaTableArguments {

  /** The destination of the redirected table at `path`, else `path`. */
  def pathFor(spark: SparkSession, path: String): String =
    destination(spark, new Path(path), path).map(_.toString).getOrElse(path)

  /**
   * For a one- or two-part `name` of a redirected Delta table in the session catalog, the same
   * table with the catalog's name in front (which `DeltaTable.forName` loads through the catalog,
   * so it is routed); for a redirected ``delta.`<path>` ``, the destination's; any other name as it
   * was given, temporary views included (delta-spark refuses those itself).
   */
  def nameFor(spark: SparkSession, name: String): String = {
    val parts = TableName.parts(name)
    val routed = for {
      named <- Some(parts).filter(p => p.length <= 2 && !isTempView(spark, p))
      ref <- Router.tableNamed(spark, named)
      dest <- destination(spark, ref.path, name)
      routedName <- ref.catalogTable match {
        case Some(entry) =>
          val id = entry.identifier
          Some(TableName.sql(Seq(SparkInternals.SessionCatalogName) ++ id.database :+ id.table))
        case None if DeltaSourceUtils.isDeltaDataSourceName(parts.head) =>
          Some(TableName.sql(Seq(parts.head, dest.toString)))
        case None => None
      }
    } yield routedName
    routed.getOrElse(name)
  }

  /**
   * The same two answers as SQL functions, for clients without a JVM of their own (the Python
   * package over Spark Connect asks `SELECT delta_lifecycle_routed_path('<path>')` before it builds
   * a `DeltaTable`): `delta_lifecycle_routed_path(path)` and `delta_lifecycle_routed_name(name)`.
   * Each is answered when the query is analyzed, on the driver, so its argument must be a constant.
   */
  val functions: Seq[(FunctionIdentifier, ExpressionInfo, Seq[Expression] => Expression)] = Seq(
    function("delta_lifecycle_routed_path", "path", pathFor),
    function("delta_lifecycle_routed_name", "name", nameFor)
  )

  @nowarn("cat=deprecation") // the short ExpressionInfo, without the built-in functions' checks
  private def function(
      name: String,
      argument: String,
      answer: (SparkSession, String) => String
  ): (FunctionIdentifier, ExpressionInfo, Seq[Expression] => Expression) = {
    val info = new ExpressionInfo(
      getClass.getName,
      null,
      name,
      s"$name($argument) - Where delta-spark's DeltaTable should find the table at that " +
        s"$argument, following a redirect (the $argument itself when it is not redirected).",
      ""
    )
    val builder: Seq[Expression] => Expression = {
      case Seq(e) if e.foldable && e.dataType == StringType && e.eval() != null =>
        Literal(answer(SparkSession.active, e.eval().toString))
      case _ => throw ErrorConditions.InvalidArgument.routingFunctionArgument(
          function = name,
          argument = argument
        )
    }
    (FunctionIdentifier(name), info, builder)
  }

  private def isTempView(spark: SparkSession, parts: Seq[String]): Boolean =
    SparkInternals.sessionCatalog(spark).isTempView(parts)

  /**
   * A `DeltaTable` both reads and writes (vacuum, optimize); it is routed as a read, which goes
   * where writes go once a redirect is READY, and while one is in progress reads the source, whose
   * writes delta-spark then refuses for the redirect feature it does not know.
   */
  private def destination(spark: SparkSession, path: Path, what: String): Option[Path] =
    try {
      // A table by its path opens with the session's configuration, as DeltaTable.forPath opens it.
      lazy val log = DeltaLog.forTable(spark, path)
      val route =
        Router.routeOpened(
          spark,
          log,
          Router.facts(log.unsafeVolatileSnapshot),
          path,
          Access.Read,
          what
        )
      route.destinationPath
    } catch {
      // Not a Delta table: delta-spark's own error says so, as without this project.
      case e: DeltaLifecycleException if e.condition == NotADeltaTable => None
    }

  private val NotADeltaTable = "DELTA_LIFECYCLE_NOT_A_DELTA_TABLE"
}

/**
 * The name [[DeltaTableArguments]] had in the docs that Scala and Java users followed; code that
 * passes its answers to delta-spark keeps compiling and working.
 */
@deprecated("use DeltaTableArguments", "0.1.0")
object DeltaTableRouting {
  def pathFor(spark: SparkSession, path: String): String = DeltaTableArguments.pathFor(spark, path)
  def nameFor(spark: SparkSession, name: String): String = DeltaTableArguments.nameFor(spark, name)
}
