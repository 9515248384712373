package io.github.deltalifecycle.core

import org.apache.spark.ErrorClassesJsonReader
import org.apache.spark.sql.AnalysisException

/**
 * Every error this project raises on purpose. Its condition, message template and SQLSTATE come
 * from `error/delta-lifecycle-error-conditions.json`, read the way Spark and delta-spark read
 * theirs. It is an AnalysisException so that PySpark (classic and Spark Connect) surfaces it as a
 * typed exception that carries the condition, which the Python package maps to
 * `delta_lifecycle.errors`. Build one with its condition's factory in [[ErrorConditions]], which is
 * generated from the resource, or with the errors object of its area ([[LogErrors]],
 * `RedirectErrors`, ...) where the values need formatting or the failure picks the condition. The
 * resource holds every message's wording, the advice included; a factory passes values only, and
 * names that belong to the layers above (settings, classes) are passed in.
 *
 * A condition with sub-conditions (the JSON's `subClass`, as in Spark's) is raised with one of
 * them: the message is the condition's template followed by the sub-condition's. The condition
 * (`getCondition`, the message's `[...]` prefix) stays the main one, the name callers catch.
 */
class DeltaLifecycleException(
    val condition: String,
    val parameters: Map[String, String],
    cause: Option[Throwable] = None,
    val subCondition: Option[String] = None
) extends AnalysisException(
      message = LifecycleErrorConditions.message(condition, subCondition, parameters),
      line = None,
      startPosition = None,
      cause = cause,
      errorClass = Some(condition),
      messageParameters = parameters,
      context = Array.empty
    ) {

  // The condition is AnalysisException's error class (getCondition on Spark 4, getErrorClass on
  // 3.5, which has no getCondition). Spark's registry does not know these conditions; ours does.
  override def getSqlState: String = LifecycleErrorConditions.sqlState(condition)
}

/**
 * A value of an error message's parameter, as the factories of [[ErrorConditions]] take them: a
 * string, a number, or a list of strings, which a message shows joined by commas. Anything else (a
 * set, a time, an option) has no conversion, so that its caller formats it rather than its
 * `toString` reaching the message.
 */
final class ErrorParameter(val text: String) extends AnyVal

object ErrorParameter {
  import scala.language.implicitConversions

  implicit def fromString(value: String): ErrorParameter = new ErrorParameter(String.valueOf(value))
  implicit def fromLong(value: Long): ErrorParameter = new ErrorParameter(value.toString)
  implicit def fromInt(value: Int): ErrorParameter = new ErrorParameter(value.toString)
  implicit def fromStrings(values: Seq[String]): ErrorParameter =
    new ErrorParameter(values.mkString(", "))
}

/** The project's error conditions: one JSON resource, as Spark's and delta-spark's are. */
object LifecycleErrorConditions {
  val Resource = "error/delta-lifecycle-error-conditions.json"

  private lazy val reader = new ErrorClassesJsonReader(
    Seq(
      Option(getClass.getClassLoader.getResource(Resource))
        .getOrElse(throw new IllegalStateException(s"$Resource is missing from the jar"))
    )
  )

  def sqlState(condition: String): String = reader.getSqlState(condition)

  /**
   * The rendered message, prefixed with the condition as Spark prefixes its own. With a
   * sub-condition, Spark's reader renders the condition's template, a space, then the
   * sub-condition's (`CONDITION.SUB_CONDITION`); it refuses a sub-condition the JSON does not
   * define, and a condition that has sub-conditions raised without one.
   */
  def message(
      condition: String,
      subCondition: Option[String],
      parameters: Map[String, String]
  ): String = {
    val template = (condition +: subCondition.toSeq).mkString(".")
    s"[$condition] ${reader.getErrorMessage(template, parameters)}"
  }
}
