package io.github.deltalifecycle.features.compatibility

import java.util.Locale

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}

import io.github.deltalifecycle.core.ErrorConditions

/**
 * What one side (reads or writes) of a client does with table features.
 *
 * @param unknown
 *   features the client knows but accepts or refuses depending on the table's schema or properties
 *   (Delta Kernel writes to a table with `checkConstraints` only while it has no constraint), so
 *   the protocol alone cannot say; they stay unknown even under a closed registry
 */
final case class FeatureSupport(
    supported: Set[String],
    unsupported: Set[String],
    unlistedUnsupported: Boolean,
    unknown: Set[String] = Set.empty
) {

  /** Some(true) supported, Some(false) refused, None unknown. */
  def supports(feature: String, explicitInProtocol: Boolean): Option[Boolean] =
    if (supported.contains(feature)) Some(true)
    else if (unsupported.contains(feature)) Some(false)
    else if (unknown.contains(feature)) None
    // A closed registry refuses the feature names it does not know; features only implied by a
    // legacy protocol version are checked by version there, so they stay unknown.
    else if (unlistedUnsupported && explicitInProtocol) Some(false)
    else None
}

/** A public statement an entry rests on. */
final case class CapabilitySource(url: String, says: String)

/**
 * One client and version range of the capability file (resources/compatibility/clients.json).
 *
 * @param readOnly
 *   the client has no way to write a Delta table at all (Athena), whatever its protocol
 */
final case class ClientCapability(
    id: String,
    family: String,
    name: String,
    versions: String,
    evidence: String,
    maxReaderVersion: Option[Int],
    maxWriterVersion: Option[Int],
    read: FeatureSupport,
    write: FeatureSupport,
    sources: Seq[CapabilitySource],
    readOnly: Boolean = false
)

/**
 * The capability file bundled in the jar: which clients read and write which table features. Also
 * read by scripts/render_compatibility.py for the README's matrix, so both show the same data.
 */
object ClientCapabilities {
  val Resource = "/compatibility/clients.json"

  lazy val all: Seq[ClientCapability] = {
    val in = getClass.getResourceAsStream(Resource)
    require(in != null, s"$Resource is missing from the jar")
    try parse(new ObjectMapper().readTree(in))
    finally in.close()
  }

  def parse(root: JsonNode): Seq[ClientCapability] =
    root.get("clients").elements().asScala.map { c =>
      def text(field: String) = c.get(field).asText()
      def version(field: String) = Option(c.get(field)).filterNot(_.isNull).map(_.asInt())
      ClientCapability(
        id = text("id"),
        family = text("family"),
        name = text("name"),
        versions = text("versions"),
        evidence = text("evidence"),
        maxReaderVersion = version("maxReaderVersion"),
        maxWriterVersion = version("maxWriterVersion"),
        read = support(c.get("read")),
        write = support(c.get("write")),
        sources = c.get("sources").elements().asScala.map(s =>
          CapabilitySource(s.get("url").asText(), s.get("says").asText())
        ).toSeq,
        readOnly = Option(c.get("readOnly")).exists(_.asBoolean())
      )
    }.toSeq

  private def support(node: JsonNode): FeatureSupport = {
    def names(field: String): Set[String] =
      Option(node.get(field)).map(_.elements().asScala.map(_.asText()).toSet).getOrElse(Set.empty)
    val unlisted = node.get("unlisted").asText()
    require(
      unlisted == "unsupported" || unlisted == "unknown",
      s"'unlisted' must be 'unsupported' or 'unknown', not '$unlisted'"
    )
    FeatureSupport(
      names("supported"),
      names("unsupported"),
      unlisted == "unsupported",
      names("unknown")
    )
  }

  /**
   * The entries `client` names: an entry's id, or a family (all its version ranges), in any case; a
   * typed error listing the known ids otherwise.
   */
  def lookup(client: String): Seq[ClientCapability] = {
    val key = client.trim.toLowerCase(Locale.ROOT)
    val byId = all.filter(_.id.toLowerCase(Locale.ROOT) == key)
    val found = if (byId.nonEmpty) byId else all.filter(_.family.toLowerCase(Locale.ROOT) == key)
    if (found.isEmpty) throw ErrorConditions.unknownClient(client = client, known = all.map(_.id))
    found
  }
}
