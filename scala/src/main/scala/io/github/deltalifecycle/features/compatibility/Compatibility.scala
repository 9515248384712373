package io.github.deltalifecycle.features.compatibility

import io.github.deltalifecycle.features.dropfeature.DroppableFeatures
import org.apache.spark.sql.delta.{CheckpointProtectionTableFeature, TableFeature}
import org.apache.spark.sql.delta.actions.Protocol

/** Whether a client can read (or write) a table: yes, no, or unknown when a source is missing. */
sealed abstract class AccessAnswer(val name: String)
object AccessAnswer {
  case object Yes extends AccessAnswer("yes")
  case object No extends AccessAnswer("no")
  case object Unknown extends AccessAnswer("unknown")
}

/**
 * A feature to drop so that a client gains access, in the order to drop them.
 *
 * @param droppable
 *   whether DROP FEATURE can remove it
 */
final case class FeatureToDrop(feature: String, droppable: Boolean)

/** The features of a table's protocol, by name, and whether the protocol names each explicitly. */
final case class TableFeatureSet(
    minReaderVersion: Int,
    minWriterVersion: Int,
    readerSide: Map[String, Boolean],
    all: Map[String, Boolean]
)

object TableFeatureSet {

  def of(protocol: Protocol): TableFeatureSet = {
    val explicit = protocol.readerFeatureNames ++ protocol.writerFeatureNames
    // Features a legacy protocol (reader < 3 or writer < 7) implies by its version numbers.
    val implied = protocol.implicitlySupportedFeatures.map(_.name) -- explicit
    val impliedReader = protocol.implicitlySupportedFeatures.filter(_.isReaderWriterFeature)
      .map(_.name) -- explicit
    TableFeatureSet(
      protocol.minReaderVersion,
      protocol.minWriterVersion,
      protocol.readerFeatureNames.map(_ -> true).toMap ++ impliedReader.map(_ -> false),
      explicit.map(_ -> true).toMap ++ implied.map(_ -> false)
    )
  }
}

/**
 * What one client can do with one table version, and what to drop for it.
 *
 * @param readBlockers
 *   features (or a protocol version, as `minReaderVersion=3`) the client refuses to read
 * @param unknownForRead
 *   features no source says the client reads or refuses
 * @param dropForRead
 *   the features to drop, in order, for the client to read (empty when nothing blocks it)
 * @param writeNeedsTruncateHistory
 *   the client does not write tables with `checkpointProtection`, which every fast drop of a
 *   reader-writer feature adds: drops for its writes must truncate history
 */
final case class ClientVerdict(
    client: ClientCapability,
    canRead: AccessAnswer,
    canWrite: AccessAnswer,
    readBlockers: Seq[String],
    writeBlockers: Seq[String],
    unknownForRead: Seq[String],
    unknownForWrite: Seq[String],
    dropForRead: Seq[FeatureToDrop],
    dropForWrite: Seq[FeatureToDrop],
    writeNeedsTruncateHistory: Boolean
)

/** Decides, from a table's protocol alone, which clients can read and write it. */
object Compatibility {
  private val Protection = CheckpointProtectionTableFeature.name

  /**
   * The write blocker of a client that writes no Delta table (`readOnly` in the capability file).
   */
  val ReadOnlyClient = "readOnlyClient"

  def evaluate(protocol: Protocol, client: ClientCapability): ClientVerdict = {
    val table = TableFeatureSet.of(protocol)
    val (readBlocked, readUnknown) = side(table.readerSide, client.read)
    val (writeBlocked, writeUnknown) = side(table.all, client.write)
    val readVersion =
      versionCheck("minReaderVersion", table.minReaderVersion, client.maxReaderVersion)
    // A writer must read the table too, so both versions count.
    val writeVersions = Seq(
      readVersion,
      versionCheck("minWriterVersion", table.minWriterVersion, client.maxWriterVersion)
    )
    val readBlockers = readVersion.left.toSeq.flatten ++ readBlocked
    // A read-only client writes nothing: no drop helps, so the blocker is the client itself.
    val writeBlockers =
      if (client.readOnly) Seq(Compatibility.ReadOnlyClient)
      else writeVersions.flatMap(_.left.toSeq.flatten) ++ writeBlocked
    val readVersionUnknown = readVersion.exists(known => !known)
    val writeVersionUnknown = writeVersions.exists(_.exists(known => !known))

    val protectionWritable = client.write.supports(Protection, explicitInProtocol = true)
    val dropForWrite = if (client.readOnly) Nil else dropOrder(protocol, writeBlocked)
    val writeNeedsTruncateHistory = !protectionWritable.contains(true) && dropForWrite.exists(f =>
      f.feature == Protection ||
        TableFeature.featureNameToFeature(f.feature).exists(_.isReaderWriterFeature)
    )
    ClientVerdict(
      client,
      access(readBlockers, readUnknown.nonEmpty || readVersionUnknown),
      access(writeBlockers, writeUnknown.nonEmpty || writeVersionUnknown),
      readBlockers,
      writeBlockers,
      readUnknown,
      if (client.readOnly) Nil else writeUnknown,
      dropOrder(protocol, readBlocked),
      dropForWrite,
      writeNeedsTruncateHistory
    )
  }

  private def access(blockers: Seq[String], unknown: Boolean): AccessAnswer =
    if (blockers.nonEmpty) AccessAnswer.No
    else if (unknown) AccessAnswer.Unknown else AccessAnswer.Yes

  /** (refused, unknown) among `features`, each sorted by name. */
  private def side(features: Map[String, Boolean], support: FeatureSupport) = {
    val verdicts = features.toSeq.sortBy(_._1).map { case (f, explicit) =>
      f -> support.supports(f, explicit)
    }
    (verdicts.collect { case (f, Some(false)) => f }, verdicts.collect { case (f, None) => f })
  }

  /**
   * Left(blocker) when the table needs a newer protocol version than the client has, Right(true)
   * when it does not, Right(false) when the client's maximum is unknown. Version 1 is what every
   * Delta client reads and writes.
   */
  private def versionCheck(
      name: String,
      tableVersion: Int,
      clientMax: Option[Int]
  ): Either[Option[String], Boolean] = clientMax match {
    case Some(max) if tableVersion > max => Left(Some(s"$name=$tableVersion"))
    case Some(_) => Right(true)
    case None => Right(tableVersion <= 1)
  }

  /**
   * The blocking features plus every feature of the table that depends on one of them (a feature
   * cannot be dropped while another requires it), ordered so each comes before what it requires;
   * `checkpointProtection` last, since a fast drop of any other feature would add it back.
   */
  def dropOrder(protocol: Protocol, blockers: Seq[String]): Seq[FeatureToDrop] = {
    val present = protocol.implicitlyAndExplicitlySupportedFeatures
    def dependents(name: String): Set[String] = TableFeature.featureNameToFeature(name).toSet
      .flatMap((f: TableFeature) => TableFeature.getDependentFeatures(f).filter(present.contains))
      .map(_.name)
    var closure = blockers.toSet
    var grown = true
    while (grown) {
      val next = closure ++ closure.flatMap(dependents)
      grown = next.size > closure.size
      closure = next
    }
    // Depth-first: a feature's dependents (in the closure) are placed before it.
    val ordered = scala.collection.mutable.LinkedHashSet.empty[String]
    val visiting = scala.collection.mutable.Set.empty[String]
    def place(name: String): Unit = if (!ordered.contains(name) && visiting.add(name)) {
      dependents(name).filter(closure.contains).toSeq.sorted.foreach(place)
      ordered += name
    }
    closure.filterNot(_ == Protection).toSeq.sorted.foreach(place)
    if (closure.contains(Protection)) ordered += Protection
    ordered.toSeq.map(f => FeatureToDrop(f, DroppableFeatures.Names.contains(f)))
  }

  def evaluateAll(protocol: Protocol, clients: Seq[ClientCapability]): Seq[ClientVerdict] =
    clients.map(evaluate(protocol, _))
}
