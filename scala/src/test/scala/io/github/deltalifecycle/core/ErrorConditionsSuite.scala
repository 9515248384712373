package io.github.deltalifecycle.core

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import io.github.deltalifecycle.features.dropfeature.DropFeatureErrors
import io.github.deltalifecycle.features.redirect.{RedirectConfigErrors, RedirectErrors}
import org.scalatest.funsuite.AnyFunSuite

/**
 * The error-conditions resource and the factories agree. Every condition and sub-condition has a
 * factory in the generated [[ErrorConditions]] that takes exactly its template's parameters, in the
 * order they first appear, and the errors objects of the areas, which format values for those
 * factories, raise conditions the resource defines with all of their parameters. No Spark session:
 * the resource is read the way the exception reads it.
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

  /** The factories the resource calls for: condition, sub-condition, parameters in order. */
  private val expected: Seq[(String, Option[String], Seq[String])] =
    resource.toSeq.flatMap { case (condition, (_, text)) =>
      val subs = subConditions(condition)
      if (subs.isEmpty) Seq((condition, None, parameters(text)))
      else subs.toSeq.map { case (sub, subText) =>
        (condition, Some(sub), parameters(s"$text $subText"))
      }
    }

  private def parameters(text: String): Seq[String] =
    "<([A-Za-z0-9_]+)>".r.findAllMatchIn(text).map(_.group(1)).toSeq.distinct

  private def camel(name: String): String = {
    val words = name.toLowerCase.split('_').toSeq
    words.head + words.tail.map(_.capitalize).mkString
  }

  private def factoryName(condition: String): String =
    camel(condition.stripPrefix("DELTA_LIFECYCLE_"))

  /**
   * The object nested in ErrorConditions that holds the factories of `condition`'s sub-conditions.
   */
  private def nestedObject(condition: String): AnyRef = Class
    .forName(s"${ErrorConditions.getClass.getName}${factoryName(condition).capitalize}$$")
    .getField("MODULE$")
    .get(null)

  private def factories(obj: AnyRef): Seq[java.lang.reflect.Method] =
    obj.getClass.getDeclaredMethods.toSeq.filter(m =>
      m.getReturnType == classOf[DeltaLifecycleException] &&
        java.lang.reflect.Modifier.isPublic(m.getModifiers)
    )

  private def invoke(obj: AnyRef, m: java.lang.reflect.Method, args: Seq[AnyRef]): AnyRef =
    try m.invoke(obj, args: _*)
    catch { case e: java.lang.reflect.InvocationTargetException => throw e.getCause }

  test("every condition and sub-condition has a factory that takes its template's parameters") {
    assert(expected.size > resource.size)
    expected.foreach { case (condition, sub, params) =>
      val obj = if (sub.isDefined) nestedObject(condition) else ErrorConditions
      val name = sub.fold(factoryName(condition))(camel)
      withClue(s"${(condition +: sub.toSeq).mkString(".")}, factory $name: ") {
        val overloads = factories(obj).filter(_.getName == name).sortBy(_.getParameterCount)
        // The values erase to strings; the overload with the cause takes it last.
        val strings = params.map(_ => classOf[String])
        assert(overloads.map(_.getParameterTypes.toSeq) ===
          Seq(strings, strings :+ classOf[Throwable]))
        val values = params.indices.map(i => s"value$i")
        val cause = new RuntimeException("boom")
        val Seq(plain, caused) = Seq(values, values :+ cause).zip(overloads).map {
          case (args, m) => invoke(obj, m, args).asInstanceOf[DeltaLifecycleException]
        }
        Seq(plain, caused).foreach { e =>
          assert(e.condition === condition && e.subCondition === sub)
          // Each value lands in the parameter of its position, and every parameter is filled.
          assert(e.parameters === params.zip(values).toMap)
          assert(e.getSqlState === resource(condition)._1)
          assert(!e.getMessage.matches("(?s).*<[A-Za-z0-9_]+>.*"), e.getMessage)
        }
        assert(plain.getCause === null && (caused.getCause eq cause))
      }
    }
  }

  test("ErrorConditions has the factories of the resource's conditions and no others") {
    val (flat, nested) = expected.partition(_._2.isEmpty)
    assert(factories(ErrorConditions).map(_.getName).toSet ===
      flat.map(e => factoryName(e._1)).toSet)
    nested.groupBy(_._1).foreach { case (condition, subs) =>
      val obj = nestedObject(condition)
      assert(factories(obj).map(_.getName).toSet === subs.map(e => camel(e._2.get)).toSet)
      assert(obj.getClass.getMethod("Condition").invoke(obj) === condition)
    }
  }

  /** The errors objects of the areas: a new one goes here, or its factories go unchecked. */
  private val errorsObjects: Seq[AnyRef] =
    Seq(LogErrors, DropFeatureErrors, RedirectConfigErrors, RedirectErrors)

  /**
   * Every error the errors objects build, from one call of each factory with sample arguments,
   * named `Object.factory`.
   */
  private lazy val raised: Seq[(String, DeltaLifecycleException)] =
    errorsObjects.flatMap { errors =>
      factories(errors).map { m =>
        val args = m.getGenericParameterTypes.map(sampleArgument).toSeq
        s"${errors.getClass.getSimpleName.stripSuffix("$")}.${m.getName}" ->
          invoke(errors, m, args).asInstanceOf[DeltaLifecycleException]
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

  test("every factory of an errors object renders its condition's template completely") {
    assert(raised.nonEmpty)
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
