package io.github.deltalifecycle.features.redirect

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.JsonNode
import com.fasterxml.jackson.databind.node.{JsonNodeFactory, ObjectNode}
import org.apache.spark.sql.delta.actions.{Metadata, Protocol}
import org.apache.spark.sql.delta.util.JsonUtils

import io.github.deltalifecycle.core.ErrorConditions

/** Which of the two redirect features a table uses. */
sealed abstract class RedirectMode(
    val feature: String,
    val sqlName: String,
    val readerWriter: Boolean
) {
  def property: String = "delta." + feature
}

object RedirectMode {

  /** Legacy clients can neither read nor write the source. */
  case object ReaderWriter
      extends RedirectMode("redirectReaderWriter", "READER WRITER", readerWriter = true)

  /** Legacy clients read the source (as it was) and cannot write it. */
  case object WriterOnly
      extends RedirectMode("redirectWriterOnly", "WRITER ONLY", readerWriter = false)

  val all: Seq[RedirectMode] = Seq(ReaderWriter, WriterOnly)

  /** delta-spark's test-build spelling of the same features. */
  def previewFeature(mode: RedirectMode): String = mode.feature + "-preview"

  /**
   * Every feature name this project treats as a redirect feature (ours and delta-spark's previews).
   */
  val featureNames: Set[String] = all.flatMap(m => Seq(m.feature, previewFeature(m))).toSet
}

/** The RFC's states; a table without the property is NORMAL. */
sealed abstract class RedirectState(val name: String)

object RedirectState {
  case object EnableInProgress extends RedirectState("ENABLE-REDIRECT-IN-PROGRESS")
  case object Ready extends RedirectState("READY")
  case object DropInProgress extends RedirectState("DROP-REDIRECT-IN-PROGRESS")
  val Normal = "NORMAL"

  val all: Seq[RedirectState] = Seq(EnableInProgress, Ready, DropInProgress)

  def parse(s: String): Option[RedirectState] = s.trim.toUpperCase match {
    case "REDIRECT-READY" => Some(Ready) // delta-spark's preview spelling
    case other => all.find(_.name == other)
  }
}

/** Where a redirect points. */
sealed trait RedirectSpec {
  def describe: String
}

object RedirectSpec {

  /**
   * A table at a Hadoop file system location, with no catalog involved (the RFC's "Object Store").
   */
  case class Location(uri: String) extends RedirectSpec {
    def describe: String = uri
  }

  /**
   * A table registered in the session catalog. `location` is where it lives (kept for readers that
   * skip the catalog).
   */
  case class Table(name: String, location: Option[String]) extends RedirectSpec {
    def describe: String = name
  }

  /**
   * A table registered in Unity Catalog (the RFC's "Unity Catalog" type), found through the catalog
   * by `tableId` (with the `metastoreId` of the server that holds it), so a table renamed there is
   * still found. `name` (`catalog.schema.table`, as SQL text) and `location` are recorded when the
   * redirect is set: the name says which catalog of a session serves it, the location is where the
   * copy went (a redirect being enabled has no id yet).
   */
  case class UnityCatalogTable(
      tableId: Option[String],
      metastoreId: Option[String],
      name: Option[String],
      location: Option[String]
  ) extends RedirectSpec {
    def describe: String = name.orElse(tableId.map(id => s"Unity Catalog table $id")).getOrElse("")

    /** With the ids Unity Catalog gave the table when it was registered. */
    def registered(id: String, metastore: Option[String]): UnityCatalogTable =
      copy(tableId = Some(id), metastoreId = metastore)
  }
}

/**
 * A NoRedirectRules entry: sessions whose application name is `appName` run `allowWrite` operations
 * on the source.
 */
case class NoRedirectRule(appName: String, allowWrite: Seq[String]) {
  def describe: String =
    s"$appName: ${if (allowWrite.isEmpty) "(reads only)" else allowWrite.mkString(", ")}"
  def allows(operation: String): Boolean = allowWrite.exists(_.equalsIgnoreCase(operation))
}

/**
 * The value of `delta.redirectReaderWriter` / `delta.redirectWriterOnly`; `mode` is the property
 * (and feature) it is stored under. Two additions of this project live inside the free-form Spec:
 *   - `Mode`: while a redirect is being enabled it is always stored under the writer-only feature,
 *     so every client can still read the source (writes are blocked either way); `Mode` records the
 *     feature the redirect takes on at READY (`targetMode`).
 *   - `Role`: a destination marks itself "DESTINATION" while its redirect is dropped, so it is
 *     never mistaken for a source.
 */
case class RedirectConfig(
    mode: RedirectMode,
    redirectType: String,
    state: RedirectState,
    spec: RedirectSpec,
    noRedirectRules: Seq[NoRedirectRule],
    isDestinationMarker: Boolean = false,
    targetModeOverride: Option[RedirectMode] = None
) {

  def targetMode: RedirectMode = targetModeOverride.getOrElse(mode)

  def toJson: String = {
    val f = JsonNodeFactory.instance
    val root = f.objectNode()
    root.put("Type", redirectType)
    root.put("State", state.name)
    val specNode = f.objectNode()
    spec match {
      case RedirectSpec.Location(uri) => specNode.put("Location", uri)
      case RedirectSpec.Table(name, location) =>
        specNode.put("Table", name)
        location.foreach(specNode.put("Location", _))
      case RedirectSpec.UnityCatalogTable(tableId, metastoreId, name, location) =>
        tableId.foreach { id =>
          val table = specNode.putObject("Table")
          metastoreId.foreach(table.put("MetastoreId", _))
          table.put("TableId", id)
        }
        name.foreach(specNode.put("Name", _))
        location.foreach(specNode.put("Location", _))
    }
    if (isDestinationMarker) specNode.put("Role", RedirectConfig.DestinationRole)
    targetModeOverride.filter(_ != mode).foreach(m => specNode.put("Mode", m.sqlName))
    root.set[ObjectNode]("Spec", specNode)
    val rules = root.putArray("NoRedirectRules")
    noRedirectRules.foreach { r =>
      val node = rules.addObject()
      node.put("AppName", r.appName)
      val ops = node.putArray("AllowWrite")
      r.allowWrite.foreach(ops.add)
    }
    JsonUtils.mapper.writeValueAsString(root)
  }

  def withState(s: RedirectState): RedirectConfig = copy(state = s)

  /** The same redirect stored under `m`'s property and feature. */
  def storedAs(m: RedirectMode): RedirectConfig =
    copy(mode = m, targetModeOverride = Some(targetMode).filter(_ != m))

  def ruleFor(appName: String): Option[NoRedirectRule] = noRedirectRules.find(_.appName == appName)
}

object RedirectConfig {
  val ObjectStoreType = "Object Store"
  val SessionCatalogType = "Session Catalog"
  val UnityCatalogType = "Unity Catalog"

  /** delta-spark's preview type; its spec is {"sourcePath", "destPath"}. */
  val PreviewPathType = "PathBasedRedirect"
  val DestinationRole = "DESTINATION"

  /**
   * The redirect configured by `metadata`, if any. Both features' properties are read, in RFC and
   * delta-spark preview spellings. More than one redirect property is an error.
   */
  def fromMetadata(metadata: Metadata, table: String): Option[RedirectConfig] = {
    val found = for {
      mode <- RedirectMode.all
      key <- Seq(mode.property, "delta." + RedirectMode.previewFeature(mode))
      value <- metadata.configuration.get(key)
    } yield (mode, key, value)
    found match {
      case Seq() => None
      case Seq((mode, key, value)) => Some(parse(mode, value, s"$key of $table"))
      case many => throw RedirectConfigErrors.severalRedirectProperties(table, many.map(_._2))
    }
  }

  /**
   * Whether a table at `protocol` and `metadata` has nothing to do with redirection: no redirect
   * property (in any spelling, valid or not) and no redirect feature. Such a table is not routed.
   */
  def absent(protocol: Protocol, metadata: Metadata): Boolean =
    protocolNames(protocol).isEmpty && !RedirectMode.all.exists { mode =>
      metadata.configuration.contains(mode.property) ||
      metadata.configuration.contains("delta." + RedirectMode.previewFeature(mode))
    }

  /** Whether `protocol` names either redirect feature (in either spelling). */
  def protocolNames(protocol: Protocol): Set[String] =
    (protocol.readerFeatureNames ++ protocol.writerFeatureNames).intersect(
      RedirectMode.featureNames
    )

  /**
   * The redirect a property value (`where` names it, for errors) describes, stored under `mode`.
   * Field names are read in the RFC's and delta-spark's preview spellings; a malformed value is
   * refused, the first problem named, in the order of the steps below.
   */
  def parse(mode: RedirectMode, json: String, where: String): RedirectConfig = {
    val value = RedirectValue.read(json, where)
    val redirectType = value.requiredText("Type", "type")
    val state = value.state
    val spec = value.spec
    val target = spec.target(redirectType)
    val isDestination = spec.text("Role").exists(_.equalsIgnoreCase(DestinationRole))
    val targetMode = spec.targetMode(mode)
    val rules = value.noRedirectRules
    RedirectConfig(mode, redirectType, state, target, rules, isDestination, targetMode)
  }

  /** A redirect property's value, a JSON object, as read so far; `where` names it in errors. */
  private final class RedirectValue(root: JsonNode, val where: String) {

    private def field(names: String*): Option[JsonNode] =
      names.iterator.map(root.get).find(n => n != null && !n.isNull)

    def requiredText(names: String*): String =
      field(names: _*).map(text(_, names.head)).getOrElse(missing(names.head))

    def state: RedirectState = {
      val name = requiredText("State", "state")
      RedirectState.parse(name).getOrElse(
        throw RedirectConfigErrors.redirectUnknownValue(
          where,
          "State",
          name,
          RedirectState.all.map(_.name)
        )
      )
    }

    // The RFC shows Spec as a JSON string holding an object; accept that and a plain object.
    def spec: RedirectSpecValue = new RedirectSpecValue(
      field("Spec", "spec") match {
        case Some(n) if n.isTextual && n.asText.trim.nonEmpty =>
          try JsonUtils.mapper.readTree(n.asText)
          catch { case NonFatal(_) => throw ErrorConditions.InvalidRedirect.specNotJson(where) }
        case Some(n) if n.isObject => n
        case _ => JsonNodeFactory.instance.objectNode()
      },
      this
    )

    def noRedirectRules: Seq[NoRedirectRule] = field("NoRedirectRules", "noRedirectRules") match {
      case None => Nil
      case Some(n) if n.isArray => n.elements().asScala.toSeq.map(rule)
      case Some(_) => throw ErrorConditions.InvalidRedirect.rulesNotAList(where)
    }

    private def rule(node: JsonNode): NoRedirectRule = {
      val app = Option(node.get("AppName")).orElse(Option(node.get("appName")))
        .filter(_.isTextual).map(_.asText)
        .getOrElse(throw ErrorConditions.InvalidRedirect.ruleWithoutAppName(where))
      val ops = Option(node.get("AllowWrite")).orElse(Option(node.get("allowedOperations"))) match {
        case None => Nil
        case Some(a) if a.isArray => a.elements().asScala.map(_.asText).toSeq
        case Some(_) =>
          throw ErrorConditions.InvalidRedirect.ruleOperationsNotAList(table = where, app = app)
      }
      NoRedirectRule(app, ops)
    }

    private def text(node: JsonNode, what: String): String =
      if (node.isTextual) node.asText
      else throw ErrorConditions.InvalidRedirect.notAString(table = where, field = what)

    def missing(field: String): Nothing =
      throw ErrorConditions.InvalidRedirect.fieldMissing(table = where, field = field)
  }

  private object RedirectValue {
    def read(json: String, where: String): RedirectValue = {
      val root =
        try JsonUtils.mapper.readTree(json)
        catch {
          case NonFatal(e) =>
            throw ErrorConditions.InvalidRedirect.notJson(
              table = where,
              detail = e.getMessage.linesIterator.next()
            )
        }
      if (root == null || !root.isObject)
        throw ErrorConditions.InvalidRedirect.notAnObject(where)
      new RedirectValue(root, where)
    }
  }

  /** The `Spec` of a redirect property's value: where the redirect points, and its markers. */
  private final class RedirectSpecValue(node: JsonNode, value: RedirectValue) {

    def text(names: String*): Option[String] =
      names.iterator.map(node.get).find(n => n != null && n.isTextual).map(_.asText)

    private def required(name: String, missing: String): String =
      text(name).getOrElse(value.missing(missing))

    /** Where a redirect of `redirectType` points. */
    def target(redirectType: String): RedirectSpec = redirectType match {
      case t if t.equalsIgnoreCase(ObjectStoreType) =>
        RedirectSpec.Location(required("Location", "Spec.Location"))
      case t if t.equalsIgnoreCase(SessionCatalogType) =>
        RedirectSpec.Table(required("Table", "Spec.Table"), text("Location"))
      case t if t.equalsIgnoreCase(UnityCatalogType) => unityCatalogTable
      case PreviewPathType => RedirectSpec.Location(required("destPath", "spec.destPath"))
      case other => throw RedirectConfigErrors.redirectUnknownValue(
          value.where,
          "Type",
          other,
          Seq(ObjectStoreType, SessionCatalogType, UnityCatalogType, PreviewPathType)
        )
    }

    /**
     * The RFC's Unity Catalog spec: `Table` holds `TableId` (and `MetastoreId`), as an object or a
     * JSON string of one; `Name` and `Location` are what this project records besides. A redirect
     * being enabled has no id yet, so one of `TableId` and `Name` is enough.
     */
    private def unityCatalogTable: RedirectSpec.UnityCatalogTable = {
      val table = Option(node.get("Table")).filter(n => !n.isNull).map {
        case n if n.isObject => n
        case n if n.isTextual =>
          try JsonUtils.mapper.readTree(n.asText)
          catch {
            case NonFatal(_) => throw ErrorConditions.InvalidRedirect.specNotJson(value.where)
          }
        case _ => throw ErrorConditions.InvalidRedirect.notAString(
            table = value.where,
            field = "Spec.Table"
          )
      }
      def field(name: String): Option[String] =
        table.flatMap(t => Option(t.get(name))).filter(_.isTextual).map(_.asText)
      val spec = RedirectSpec.UnityCatalogTable(
        field("TableId"),
        field("MetastoreId"),
        text("Name"),
        text("Location")
      )
      if (spec.tableId.isEmpty && spec.name.isEmpty) value.missing("Spec.Table.TableId")
      spec
    }

    /** The feature the redirect takes on at READY, where it is not `mode`, the stored one. */
    def targetMode(mode: RedirectMode): Option[RedirectMode] = text("Mode").map { m =>
      RedirectMode.all.find(_.sqlName.equalsIgnoreCase(m.trim))
        .getOrElse(throw RedirectConfigErrors.redirectUnknownValue(
          value.where,
          "Spec.Mode",
          m,
          RedirectMode.all.map(_.sqlName)
        ))
    }.filter(_ != mode)
  }
}
