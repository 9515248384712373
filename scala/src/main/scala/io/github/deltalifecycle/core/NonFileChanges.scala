package io.github.deltalifecycle.core

import org.apache.spark.sql.Column
import org.apache.spark.sql.delta.actions._
import org.apache.spark.sql.functions.{col, lit}
import org.apache.spark.sql.types.StructType

/**
 * What the commits after a checkpoint change besides the table's files: the newest protocol and
 * metadata, and the newest set transaction and domain of each application and domain they name.
 */
final case class NonFileChanges(
    protocol: Option[Protocol],
    metadata: Option[Metadata],
    txns: Map[String, SetTransaction],
    domains: Map[String, DomainMetadata]
) {
  def isEmpty: Boolean = protocol.isEmpty && metadata.isEmpty && txns.isEmpty && domains.isEmpty

  /** Whether a checkpoint's `action` still holds after these changes. */
  def keeps(action: Action): Boolean = action match {
    case _: Protocol => protocol.isEmpty
    case _: Metadata => metadata.isEmpty
    case t: SetTransaction => !txns.contains(t.appId)
    case d: DomainMetadata => !domains.contains(d.domain)
    case _ => true
  }

  /** [[keeps]] as a condition on a checkpoint's rows (of the columns in `schema`). */
  def keeps(schema: StructType): Column = {
    val has = schema.fieldNames.toSet
    def unless(column: String, changed: Boolean) =
      Option.when(has(column) && changed)(col(column).isNull)
    def notIn(column: String, key: String, values: Iterable[String]) =
      Option.when(has(column) && values.nonEmpty)(
        col(column).isNull || !col(s"$column.$key").isin(values.toSeq: _*)
      )
    (unless("protocol", protocol.isDefined) ++ unless("metaData", metadata.isDefined) ++
      notIn("txn", "appId", txns.keys) ++ notIn("domainMetadata", "domain", domains.keys))
      .foldLeft(lit(true))(_ && _)
  }

  /** The actions a checkpoint gains, as log lines (a removed domain is simply gone). */
  def added: Seq[Action] =
    protocol.toSeq ++ metadata ++ txns.values ++ domains.values.filterNot(_.removed)

  /** The checkpoint columns that [[added]] writes. */
  def addedColumns: Set[String] = added.map {
    case _: Protocol => "protocol"
    case _: Metadata => "metaData"
    case _: SetTransaction => "txn"
    case _ => "domainMetadata"
  }.toSet

  def andThen(action: Action): NonFileChanges = action match {
    case p: Protocol => copy(protocol = Some(p))
    case m: Metadata => copy(metadata = Some(m))
    case t: SetTransaction => copy(txns = txns + (t.appId -> t))
    case d: DomainMetadata => copy(domains = domains + (d.domain -> d))
    case _ => this
  }
}
