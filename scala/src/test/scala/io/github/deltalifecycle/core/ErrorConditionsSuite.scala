package io.github.deltalifecycle.core

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import io.github.deltalifecycle.features.compaction.LogMaintenanceErrors
import io.github.deltalifecycle.features.compatibility.ClientErrors
import io.github.deltalifecycle.features.dropfeature.DropFeatureErrors
import io.github.deltalifecycle.features.redirect.{RedirectConfigErrors, RedirectErrors}
import io.github.deltalifecycle.sql.StatementErrors
import io.github.deltalifecycle.sql.routing.RouteErrors
import org.scalatest.funsuite.AnyFunSuite

/**
 * The error-conditions resource and the errors objects of every area agree: every constructor names
 * a condition the resource defines, with all of its parameters, and every condition is raised by
 * some constructor. No Spark session: the resource is read the way the exception reads it.
 */
class ErrorConditionsSuite extends AnyFunSuite {

  private val root = {
    val in = getClass.getClassLoader.getResourceAsStream(LifecycleErrorConditions.Resource)
    try new ObjectMapper().readTree(in)
    finally in.close()
  }

  private def template(node: JsonNode): String = node.get("message").asScala.map(_.asText).mkString

  /** Condition -> (SQLSTATE, message template). */
  private val resource: Map[String, (String, String)] =
    root.fields().asScala.map { entry =>
      val info = entry.getValue
      entry.getKey -> (info.get("sqlState").asText(), template(info))
    }.toMap

  /** Condition -> its sub-conditions' message templates (none for most conditions). */
  private val subConditions: Map[String, Map[String, String]] =
    root.fields().asScala.map { entry =>
      entry.getKey -> Option(entry.getValue.get("subClass")).fold(Map.empty[String, String]) {
        _.fields().asScala.map(sub => sub.getKey -> template(sub.getValue)).toMap
      }
    }.toMap

  /** The errors object of every area: a new one goes here, or its conditions fail the suite. */
  private val errorsObjects: Seq[AnyRef] = Seq(
    LogErrors,
    CatalogErrors,
    LogMaintenanceErrors,
    DropFeatureErrors,
    ClientErrors,
    RedirectConfigErrors,
    RedirectErrors,
    RouteErrors,
    StatementErrors
  )

  /**
   * Every error the errors objects build, from one call of each constructor with sample arguments,
   * named `Object.constructor`.
   */
  private lazy val raised: Seq[(String, DeltaLifecycleException)] =
    errorsObjects.flatMap { errors =>
      errors.getClass.getDeclaredMethods.toSeq
        .filter(m =>
          m.getReturnType == classOf[DeltaLifecycleException] &&
            java.lang.reflect.Modifier.isPublic(m.getModifiers)
        )
        .map { m =>
          val args = m.getGenericParameterTypes.map(sampleArgument).toSeq
          val built =
            try m.invoke(errors, args: _*)
            catch { case e: java.lang.reflect.InvocationTargetException => throw e.getCause }
          s"${errors.getClass.getSimpleName.stripSuffix("$")}.${m.getName}" ->
            built.asInstanceOf[DeltaLifecycleException]
        }
    }

  // Scala 2.12 (Spark 3.5) declares Seq as scala.collection.Seq, 2.13 as its immutable one.
  private def sampleArgument(t: java.lang.reflect.Type): AnyRef =
    t.getTypeName.replace("scala.collection.immutable.Seq", "scala.collection.Seq") match {
      case "java.lang.String" => "sample"
      case "long" => java.lang.Long.valueOf(7L)
      case "scala.collection.Seq<java.lang.Object>" => Seq(3L, 4L)
      case "scala.collection.Seq<java.lang.String>" => Seq("a", "b")
      case "scala.collection.immutable.Set<java.lang.String>" => Set("a")
      case "java.lang.Throwable" => new RuntimeException("boom")
      case "scala.Option<java.lang.Throwable>" => None
      case "io.github.deltalifecycle.core.MaintenanceOperation" =>
        MaintenanceOperation.MetadataCleanup
      case other => fail(s"no sample argument for $other: extend sampleArgument")
    }

  test("every condition has a well-formed SQLSTATE and a message") {
    assert(resource.nonEmpty)
    resource.foreach { case (condition, (sqlState, message)) =>
      assert(condition.startsWith("DELTA_LIFECYCLE_"), condition)
      assert(sqlState.matches("[0-9A-Z]{5}"), s"$condition: SQLSTATE '$sqlState'")
      assert(sqlState != "KD000", s"$condition: KD000 says nothing; pick a fitting class")
      assert(message.nonEmpty, condition)
    }
  }

  test("every constructor renders its condition's template completely") {
    assert(raised.size >= resource.size)
    raised.foreach { case (name, e) =>
      withClue(s"$name: ") {
        assert(resource.contains(e.condition))
        // A condition with sub-conditions is raised with one of them, and only such a one is.
        assert(e.subCondition.isDefined === subConditions(e.condition).nonEmpty)
        e.subCondition.foreach(sub => assert(subConditions(e.condition).contains(sub)))
        assert(e.getSqlState === resource(e.condition)._1)
        assert(e.getMessage.startsWith(s"[${e.condition}] "))
        assert(!e.getMessage.matches("(?s).*<[A-Za-z0-9_]+>.*"), e.getMessage)
        assert(e.getMessageParameters.asScala.keySet.nonEmpty)
      }
    }
  }

  test("every condition in the resource is raised by some constructor") {
    assert(resource.keySet === raised.map(_._2.condition).toSet)
  }

  test("every sub-condition in the resource is raised by some constructor") {
    val defined = subConditions.toSeq.flatMap { case (c, subs) => subs.keys.map(c -> _) }.toSet
    assert(defined.nonEmpty)
    assert(defined === raised.flatMap { case (_, e) => e.subCondition.map(e.condition -> _) }.toSet)
  }

  test("a sub-condition: the condition's template, then the sub-condition's, under the condition") {
    val condition = "DELTA_LIFECYCLE_INVALID_ARGUMENT"
    val e = new DeltaLifecycleException(
      condition,
      Map("retentionMillis" -> "-5"),
      subCondition = Some("NEGATIVE_RETENTION")
    )
    val expected = resource(condition)._2 + " " +
      subConditions(condition)("NEGATIVE_RETENTION").replace("<retentionMillis>", "-5")
    assert(e.getMessage === s"[$condition] $expected")
    assert(e.getCondition === condition && e.condition === condition)
    assert(e.getSqlState === resource(condition)._1)
    assert(e.getMessageParameters.asScala === Map("retentionMillis" -> "-5"))
    // Spark's reader refuses a sub-condition the resource lacks, and a missing one.
    intercept[Throwable](new DeltaLifecycleException(condition, Map.empty, None, Some("NO_SUCH")))
    intercept[Throwable](new DeltaLifecycleException(condition, Map("reason" -> "x")))
  }
}
