package io.github.deltalifecycle.shims

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.{SparkSession, SparkSessionExtensions}
import org.apache.spark.sql.catalyst.parser.ParserInterface
import org.apache.spark.sql.catalyst.plans.logical.{LogicalPlan, V2WriteCommand}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.delta.catalog.DeltaTableV2
import org.apache.spark.sql.delta.files.TahoeLogFileIndex
import org.apache.spark.sql.execution.datasources.{HadoopFsRelation, LogicalRelation}
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation

/**
 * Where Spark 3.5 lets this project see a plan before delta-spark resolves its tables. It has no
 * hint-batch injection, and its extension resolution rules run after Spark's own table resolution,
 * so the rules that must see unresolved tables run on the parser's output instead; and its
 * `DataFrameReader.load(path)` resolves the path itself, so path reads are routed on the relation
 * it built (docs/spark-lines.md).
 */
object AnalyzerShim {

  /**
   * Injects `rule` where it sees the plan before tables are resolved: a parser wrapping the
   * session's, which applies the rule to every parsed plan (SQL statements only; the DataFrame API
   * builds no unresolved table).
   */
  def injectBeforeTableResolution(
      extensions: SparkSessionExtensions,
      rule: SparkSession => Rule[LogicalPlan]
  ): Unit = extensions.injectParser((spark, delegate) => new RewritingParser(delegate, rule(spark)))

  /**
   * Injects the routing of path-based DataFrame access: a resolution rule, since the reads it
   * routes arrive resolved.
   */
  def injectPathRouting(
      extensions: SparkSessionExtensions,
      rule: SparkSession => Rule[LogicalPlan]
  ): Unit = extensions.injectResolutionRule(rule)

  /**
   * Path-based batch reads and writes of the DataFrame API on Spark 3.5 arrive resolved: a
   * delta-spark relation for the path, with no catalog table. The relation is rebuilt for the
   * destination before the query's attributes are fixed (analysis). Time travel is left alone.
   * `route` gives the destination of a path that is read, if it is redirected.
   */
  def routePathReads(route: String => Option[Path]): PartialFunction[LogicalPlan, LogicalPlan] = {
    case l @ LogicalRelation(h: HadoopFsRelation, _, None, streaming) => h.location match {
        case index: TahoeLogFileIndex if !index.isTimeTravelQuery =>
          route(index.path.toString).map { dest =>
            val table = DeltaTableV2(l.relation.sqlContext.sparkSession, dest)
            LogicalRelation(table.toBaseRelation, streaming)
          }.getOrElse(l)
        case _ => l
      }
    case r @ DataSourceV2Relation(d: DeltaTableV2, _, _, _, options)
        if d.catalogTable.isEmpty && d.timeTravelOpt.isEmpty =>
      route(d.path.toString).map(dest => v2Relation(d, dest, options)).getOrElse(r)
  }

  /**
   * Path-based writes (`df.write.format("delta").save(path)`) reach Spark 3.5's analyzer as a V2
   * write on a path-based DeltaTableV2. `route` gives the destination of a path that is written.
   */
  def routePathWrites(route: String => Option[Path]): PartialFunction[LogicalPlan, LogicalPlan] = {
    case w: V2WriteCommand => w.table match {
        case r @ DataSourceV2Relation(d: DeltaTableV2, _, _, _, options)
            if d.catalogTable.isEmpty && d.timeTravelOpt.isEmpty =>
          route(d.path.toString).map(dest => w.withNewTable(v2Relation(d, dest, options)))
            .getOrElse(w)
        case _ => w
      }
  }

  private def v2Relation(
      d: DeltaTableV2,
      dest: Path,
      options: org.apache.spark.sql.util.CaseInsensitiveStringMap
  ): DataSourceV2Relation =
    DataSourceV2Relation.create(d.copy(path = dest, tableIdentifier = None), None, None, options)

  /** The session's parser, with `rule` applied to every plan it parses. */
  private final class RewritingParser(session: ParserInterface, rule: Rule[LogicalPlan])
      extends DelegatingParser(session) {
    override def parsePlan(sqlText: String): LogicalPlan = rule(delegate.parsePlan(sqlText))
  }
}
