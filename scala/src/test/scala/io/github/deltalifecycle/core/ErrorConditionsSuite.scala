package io.github.deltalifecycle.core

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.ObjectMapper
import org.scalatest.funsuite.AnyFunSuite

/**
 * The error-conditions resource and `LifecycleErrors` agree: every constructor names a condition
 * the resource defines, with all of its parameters, and every condition is raised by some
 * constructor. No Spark session: the resource is read the way the exception reads it.
 */
class ErrorConditionsSuite extends AnyFunSuite {

  private val resource: Map[String, (String, String)] = {
    val in = getClass.getClassLoader.getResourceAsStream(LifecycleErrorConditions.Resource)
    val root = try new ObjectMapper().readTree(in)
    finally in.close()
    root.fields().asScala.map { entry =>
      val info = entry.getValue
      entry.getKey ->
        (info.get("sqlState").asText(), info.get("message").asScala.map(_.asText()).mkString)
    }.toMap
  }

  /**
   * Every error `LifecycleErrors` builds, from one call of each constructor with sample arguments.
   */
  private lazy val raised: Seq[(String, DeltaLifecycleException)] =
    LifecycleErrors.getClass.getDeclaredMethods.toSeq
      .filter(m =>
        m.getReturnType == classOf[DeltaLifecycleException] &&
          java.lang.reflect.Modifier.isPublic(m.getModifiers)
      )
      .map { m =>
        val args = m.getGenericParameterTypes.map(sampleArgument).toSeq
        val built =
          try m.invoke(LifecycleErrors, args: _*)
          catch { case e: java.lang.reflect.InvocationTargetException => throw e.getCause }
        m.getName -> built.asInstanceOf[DeltaLifecycleException]
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
      withClue(s"LifecycleErrors.$name: ") {
        assert(resource.contains(e.condition))
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
}
