package io.github.deltalifecycle.features.redirect

import java.nio.file.Files

import io.github.deltalifecycle.core.DeltaLifecycleException
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.delta.actions.{Metadata, Protocol}
import io.github.deltalifecycle.sql.routing.Router
import org.scalatest.funsuite.AnyFunSuite

/**
 * Routing decisions on hand-built redirect facts, per the Table Redirection RFC's states and Query
 * Redirection Flow. No session and no table: the only I/O is the check that a destination is not
 * redirected itself, which finds no Delta log at the (absent) local destinations used here.
 */
class RedirectRoutingSuite extends AnyFunSuite {
  import RedirectRoutingSuite._
  import RedirectState._

  private val root = Files.createTempDirectory("redirect-routing").toUri.getPath.stripSuffix("/")
  private val source = new Path(s"$root/source")
  private val destination = s"$root/destination"
  private val app = "this-app"

  private def context(
      allowedPrefixes: Seq[String] = Nil,
      catalog: Map[String, Path] = Map.empty
  ): RoutingContext =
    RoutingContext(
      StorageAccess.uniform(new Configuration()),
      app,
      allowedPrefixes,
      "allowed",
      catalog.get
    )

  private def redirect(
      state: RedirectState,
      mode: RedirectMode = RedirectMode.ReaderWriter,
      rules: Seq[NoRedirectRule] = Nil,
      spec: RedirectSpec = RedirectSpec.Location(destination),
      destinationMarker: Boolean = false
  ): RedirectInfo = {
    val config = RedirectConfig(
      mode,
      RedirectConfig.ObjectStoreType,
      state,
      spec,
      rules,
      destinationMarker
    )
    RedirectInfo(source, 3, Protocol(1, 2), Metadata(), Some(config))
  }

  private def route(info: RedirectInfo, access: Access, ctx: RoutingContext = context()): Route =
    Router.route(ctx, info, access, "the table")

  private def refusal(info: RedirectInfo, access: Access, ctx: RoutingContext = context()) =
    intercept[DeltaLifecycleException](route(info, access, ctx)).getCondition

  private val insert = Access.Write(Set("INSERT"))
  private val insertAndDelete = Access.Write(Set("INSERT", "DELETE"))
  private val unnamedWrite = Access.Write(Set.empty)
  private val accesses = Seq(Access.Read, insert, insertAndDelete, unnamedWrite)

  private val ruleSets = Seq(
    "no rules" -> Nil,
    "a rule for another application" -> Seq(NoRedirectRule("other-app", Seq("INSERT", "DELETE"))),
    "a rule for this application allowing INSERT" -> Seq(NoRedirectRule(app, Seq("insert")))
  )

  private val WriteRefused = Refused("DELTA_LIFECYCLE_REDIRECT_WRITE_REFUSED")

  private def outcome(info: RedirectInfo, access: Access): Expected =
    try route(info, access) match {
        case Route.Direct => Source
        case Route.Destination(p) if p == new Path(destination) => Destination
        case other => fail(s"unexpected route $other")
      }
    catch { case e: DeltaLifecycleException => Refused(e.getCondition) }

  /**
   * Where each access goes without a NoRedirectRule for this application: reads stay on the source
   * until READY and follow the destination from then on; writes go to the destination at READY and
   * are refused in both IN-PROGRESS states.
   */
  private def expectedWithoutRule(
      state: RedirectState,
      mode: RedirectMode,
      access: Access
  ): Expected = (state, access) match {
    case (EnableInProgress, Access.Read) =>
      // delta-spark cannot read a source whose protocol names redirectReaderWriter.
      if (mode.readerWriter) Refused("DELTA_LIFECYCLE_REDIRECT_STATE") else Source
    case (Ready, _) | (DropInProgress, Access.Read) => Destination
    case _ => WriteRefused
  }

  for (state <- RedirectState.all; mode <- RedirectMode.all) {
    test(s"$state ${mode.sqlName}: every access, with and without NoRedirectRules") {
      for ((rulesName, rules) <- ruleSets; access <- accesses) {
        val info = redirect(state, mode, rules)
        val ruleKeepsOnSource = rules.exists(_.appName == app) &&
          (access match {
            case Access.Read => true
            case Access.Write(ops) => ops == Set("INSERT")
          })
        val expected =
          if (!ruleKeepsOnSource) expectedWithoutRule(state, mode, access)
          // The IN-PROGRESS states block every write, a rule's included.
          else if (access != Access.Read && state != Ready) WriteRefused
          // A reader-writer source cannot be read or written by delta-spark: explained, not used.
          else if (mode.readerWriter) Refused("DELTA_LIFECYCLE_REDIRECT_STATE")
          else Source
        assert(outcome(info, access) === expected, s"($rulesName, $access)")
      }
    }
  }

  test("NoRedirectRules do not open writes in the IN-PROGRESS states, which block every write") {
    for (state <- Seq(EnableInProgress, DropInProgress)) {
      val info = redirect(state, RedirectMode.WriterOnly, Seq(NoRedirectRule(app, Seq("INSERT"))))
      assert(outcome(info, insert) === WriteRefused, state)
    }
  }

  test("without a redirect every access stays on the table") {
    val normal = RedirectInfo(source, 0, Protocol(1, 2), Metadata(), None)
    for (access <- accesses) assert(route(normal, access) === Route.Direct)
  }

  test("a destination marked while its redirect is dropped is read in place and never written") {
    for (state <- RedirectState.all; mode <- RedirectMode.all; (_, rules) <- ruleSets) {
      val marker = redirect(state, mode, rules, destinationMarker = true)
      assert(route(marker, Access.Read) === Route.Direct)
      for (write <- Seq(insert, insertAndDelete, unnamedWrite))
        assert(refusal(marker, write) === "DELTA_LIFECYCLE_REDIRECT_WRITE_REFUSED")
    }
  }

  test("a catalog table destination: the catalog's location, else the recorded one") {
    val name = "`my.db`.t"
    val inCatalog = new Path(s"$root/in-catalog")
    val recorded = s"$root/recorded"
    val info = redirect(Ready, spec = RedirectSpec.Table(name, Some(recorded)))
    assert(route(info, Access.Read, context(catalog = Map(name -> inCatalog))) ===
      Route.DestinationTable(name, inCatalog))
    assert(route(info, insert) === Route.DestinationTable(name, new Path(recorded)))
    val nowhere = redirect(Ready, spec = RedirectSpec.Table(name, None))
    val e = intercept[DeltaLifecycleException](route(nowhere, Access.Read))
    assert(e.getCondition === "DELTA_LIFECYCLE_INVALID_REDIRECT" &&
      e.getMessage.contains(s"the destination table $name does not exist"))
  }

  test("a destination location that is not a path is an invalid redirect") {
    val info = redirect(Ready, spec = RedirectSpec.Location(" "))
    assert(refusal(info, Access.Read) === "DELTA_LIFECYCLE_INVALID_REDIRECT")
  }

  test("allowed prefixes: compared qualified, for locations and catalog tables alike") {
    val ready = redirect(Ready)
    for (prefix <- Seq(root, s"file:$root", s"file://$root/")) {
      assert(
        route(ready, Access.Read, context(allowedPrefixes = Seq(prefix))) ===
          Route.Destination(new Path(destination)),
        prefix
      )
    }
    // A prefix is a whole path component: $root/dest does not allow $root/destination.
    val partOfAName = context(allowedPrefixes = Seq(s"$root/dest"))
    assert(refusal(ready, Access.Read, partOfAName) ===
      "DELTA_LIFECYCLE_REDIRECT_LOCATION_NOT_ALLOWED")
    val elsewhere = context(allowedPrefixes = Seq("/somewhere/else", "s3://bucket/"))
    assert(refusal(ready, Access.Read, elsewhere) ===
      "DELTA_LIFECYCLE_REDIRECT_LOCATION_NOT_ALLOWED")
    assert(refusal(ready, insert, elsewhere) === "DELTA_LIFECYCLE_REDIRECT_LOCATION_NOT_ALLOWED")
    val table = redirect(Ready, spec = RedirectSpec.Table("db.t", Some(destination)))
    assert(refusal(table, Access.Read, elsewhere) ===
      "DELTA_LIFECYCLE_REDIRECT_LOCATION_NOT_ALLOWED")
  }
}

object RedirectRoutingSuite {

  /** Where an access goes: the source itself, the destination, or nowhere (the condition). */
  sealed trait Expected
  case object Source extends Expected
  case object Destination extends Expected
  final case class Refused(condition: String) extends Expected
}
