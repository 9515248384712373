package io.github.deltalifecycle.features.redirect

import io.github.deltalifecycle.core.DeltaLifecycleException
import org.apache.spark.sql.delta.util.JsonUtils
import org.scalatest.funsuite.AnyFunSuite

/** The redirect property's value, in the RFC's spelling and delta-spark's preview spelling. */
class RedirectConfigSuite extends AnyFunSuite {

  private def parse(json: String, mode: RedirectMode = RedirectMode.ReaderWriter) =
    RedirectConfig.parse(mode, json, "the test value")

  /** The value is refused with INVALID_REDIRECT, and the message names `detail`. */
  private def refused(json: String, detail: String): Unit = {
    val e = intercept[DeltaLifecycleException](parse(json))
    assert(e.getCondition === "DELTA_LIFECYCLE_INVALID_REDIRECT")
    assert(e.getMessage.contains("the test value") && e.getMessage.contains(detail), e.getMessage)
  }

  test("the RFC spelling: an Object Store location, every state, NoRedirectRules") {
    for (state <- RedirectState.all) {
      val c = parse(
        s"""{"Type":"Object Store","State":"${state.name}","Spec":{"Location":"s3://b/t"},
           |"NoRedirectRules":[{"AppName":"nightly","AllowWrite":["VACUUM","OPTIMIZE"]}]}"""
          .stripMargin
      )
      assert(c === RedirectConfig(
        RedirectMode.ReaderWriter,
        RedirectConfig.ObjectStoreType,
        state,
        RedirectSpec.Location("s3://b/t"),
        Seq(NoRedirectRule("nightly", Seq("VACUUM", "OPTIMIZE")))
      ))
    }
  }

  test("the RFC spelling: a Session Catalog table, with and without its recorded location") {
    assert(parse("""{"Type":"Session Catalog","State":"READY","Spec":{"Table":"`my.db`.t"}}""")
      .spec === RedirectSpec.Table("`my.db`.t", None))
    assert(parse(
      """{"Type":"Session Catalog","State":"READY","Spec":{"Table":"db.t","Location":"/w/t"}}"""
    ).spec === RedirectSpec.Table("db.t", Some("/w/t")))
  }

  test("the RFC's Unity Catalog type: its Table's ids, as an object or a JSON string") {
    val uc = RedirectSpec.UnityCatalogTable(Some("fba8"), Some("c535"), None, None)
    assert(parse(
      """{"Type":"Unity Catalog","State":"READY",
        |"Spec":{"Table":{"MetastoreId":"c535","TableId":"fba8"}}}""".stripMargin
    ).spec === uc)
    // The RFC's own example: Spec and Table as JSON strings, the type in capitals.
    val table = JsonUtils.toJson(Map("MetastoreId" -> "c535", "TableId" -> "fba8"))
    val spec = JsonUtils.toJson(Map("Table" -> table))
    assert(parse(
      JsonUtils.toJson(Map("Type" -> "UNITY CATALOG", "State" -> "READY", "Spec" -> spec))
    ).spec === uc)
    // While it is being enabled the table has no id yet: this project records its name.
    assert(parse(
      """{"Type":"Unity Catalog","State":"ENABLE-REDIRECT-IN-PROGRESS",
        |"Spec":{"Name":"lake.s.t","Location":"/w/t"}}""".stripMargin
    ).spec === RedirectSpec.UnityCatalogTable(None, None, Some("lake.s.t"), Some("/w/t")))
    refused("""{"Type":"Unity Catalog","State":"READY","Spec":{}}""", "Spec.Table.TableId")
  }

  test("a Spec given as a JSON string holding an object, as the RFC's examples show it") {
    val c = parse("""{"Type":"Object Store","State":"READY","Spec":"{\"Location\":\"/d\"}"}""")
    assert(c.spec === RedirectSpec.Location("/d") && c.noRedirectRules.isEmpty)
  }

  test("delta-spark's preview spelling") {
    val c = parse(
      """{"type":"PathBasedRedirect","state":"REDIRECT-READY",
        |"spec":"{\"sourcePath\":\"/a\",\"destPath\":\"/b\"}",
        |"noRedirectRules":[{"appName":"m","allowedOperations":["DELETE"]}]}""".stripMargin,
      RedirectMode.WriterOnly
    )
    assert(c === RedirectConfig(
      RedirectMode.WriterOnly,
      RedirectConfig.PreviewPathType,
      RedirectState.Ready,
      RedirectSpec.Location("/b"),
      Seq(NoRedirectRule("m", Seq("DELETE")))
    ))
  }

  test("this project's Spec additions: Role DESTINATION and the Mode taken on at READY") {
    val c = parse(
      """{"Type":"Object Store","State":"ENABLE-REDIRECT-IN-PROGRESS",
        |"Spec":{"Location":"/d","Role":"DESTINATION","Mode":"READER WRITER"}}""".stripMargin,
      RedirectMode.WriterOnly
    )
    assert(c.isDestinationMarker)
    assert(c.mode === RedirectMode.WriterOnly && c.targetMode === RedirectMode.ReaderWriter)
  }

  test("toJson is read back as the same value") {
    val values = Seq(
      RedirectConfig(
        RedirectMode.WriterOnly,
        RedirectConfig.ObjectStoreType,
        RedirectState.DropInProgress,
        RedirectSpec.Location("file:/d"),
        Seq(NoRedirectRule("a", Nil), NoRedirectRule("b", Seq("INSERT"))),
        isDestinationMarker = true
      ),
      RedirectConfig(
        RedirectMode.ReaderWriter,
        RedirectConfig.SessionCatalogType,
        RedirectState.EnableInProgress,
        RedirectSpec.Table("`my.db`.t", Some("file:/w/t")),
        Nil
      ).storedAs(RedirectMode.WriterOnly),
      RedirectConfig(
        RedirectMode.ReaderWriter,
        RedirectConfig.UnityCatalogType,
        RedirectState.Ready,
        RedirectSpec.UnityCatalogTable(Some("id"), Some("m"), Some("lake.s.t"), Some("file:/t")),
        Nil
      )
    )
    for (c <- values) assert(RedirectConfig.parse(c.mode, c.toJson, "round trip") === c)
  }

  test("malformed values are refused, naming the problem") {
    refused("{not json", "not JSON")
    refused("""["Type","State"]""", "must be a JSON object")
    refused(""""READY"""", "must be a JSON object")
    refused("""{"State":"READY","Spec":{"Location":"/d"}}""", "Type is missing")
    refused("""{"Type":"Object Store","Spec":{"Location":"/d"}}""", "State is missing")
    refused("""{"Type":7,"State":"READY"}""", "Type must be a string")
    refused("""{"Type":"Object Store","State":"READY","Spec":{}}""", "Spec.Location is missing")
    refused("""{"Type":"Session Catalog","State":"READY","Spec":{}}""", "Spec.Table is missing")
    refused("""{"type":"PathBasedRedirect","state":"READY","spec":{}}""", "destPath is missing")
    refused(
      """{"Type":"Object Store","State":"READY","Spec":{"Location":"/d"},"NoRedirectRules":{}}""",
      "NoRedirectRules must be a list"
    )
    refused(
      """{"Type":"Object Store","State":"READY","Spec":{"Location":"/d"},
        |"NoRedirectRules":[{"AllowWrite":[]}]}""".stripMargin,
      "has no AppName"
    )
    refused(
      """{"Type":"Object Store","State":"READY","Spec":{"Location":"/d"},
        |"NoRedirectRules":[{"AppName":"a","AllowWrite":"INSERT"}]}""".stripMargin,
      "AllowWrite of rule 'a' must be a list"
    )
  }

  test("an unknown State, Type or Spec.Mode is refused rather than guessed") {
    refused("""{"Type":"Object Store","State":"MOVING","Spec":{"Location":"/d"}}""", "'MOVING'")
    refused("""{"Type":"Tape","State":"READY"}""", "unknown Type 'Tape'")
    refused(
      """{"Type":"Object Store","State":"READY","Spec":{"Location":"/d","Mode":"SOMETIMES"}}""",
      "unknown Spec.Mode 'SOMETIMES'"
    )
  }
}
