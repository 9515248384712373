package io.github.deltalifecycle.shims

import scala.language.implicitConversions

/**
 * The Scala 2.13 library members that the common sources use, for the Scala 2.12 build (Spark 3.5).
 * The packages that use them get it through their package object (Scala212Packages.scala), so the
 * common sources need no import; the 2.13 builds do not compile this folder.
 */
trait Scala212Compat {
  type IterableOnce[+A] = TraversableOnce[A]

  implicit final def stringCompat(s: String): Scala212Compat.StringCompat =
    new Scala212Compat.StringCompat(s)
  implicit final def iteratorCompat[A](it: Iterator[A]): Scala212Compat.IteratorCompat[A] =
    new Scala212Compat.IteratorCompat(it)
  implicit final def iterableCompat[A](xs: Iterable[A]): Scala212Compat.IterableCompat[A] =
    new Scala212Compat.IterableCompat(xs)
  implicit final def iterableOnceCompat[A](
      xs: TraversableOnce[A]
  ): Scala212Compat.IterableOnceCompat[A] =
    new Scala212Compat.IterableOnceCompat(xs)
  implicit final def optionCompanionCompat(o: Option.type): Scala212Compat.OptionCompanionCompat =
    new Scala212Compat.OptionCompanionCompat(o)

  // Spark 3.5, the one Scala 2.12 line, names an error's condition getErrorClass only.
  implicit final def conditionCompat(e: org.apache.spark.SparkThrowable): Scala212Compat.Condition =
    new Scala212Compat.Condition(e)
}

object Scala212Compat {
  final class Condition(private val e: org.apache.spark.SparkThrowable) {
    def getCondition: String = e.getErrorClass
  }

  final class StringCompat(private val s: String) extends AnyVal {
    def toIntOption: Option[Int] =
      try Some(java.lang.Integer.parseInt(s))
      catch { case _: NumberFormatException => None }
    def toLongOption: Option[Long] =
      try Some(java.lang.Long.parseLong(s))
      catch { case _: NumberFormatException => None }
    def toDoubleOption: Option[Double] =
      try Some(java.lang.Double.parseDouble(s))
      catch { case _: NumberFormatException => None }
  }

  final class IteratorCompat[A](private val it: Iterator[A]) extends AnyVal {
    def nextOption(): Option[A] = if (it.hasNext) Some(it.next()) else None
  }

  final class IterableCompat[A](private val xs: Iterable[A]) extends AnyVal {
    def maxByOption[B](f: A => B)(implicit ord: Ordering[B]): Option[A] =
      if (xs.isEmpty) None else Some(xs.maxBy(f))
  }

  final class IterableOnceCompat[A](private val xs: TraversableOnce[A]) extends AnyVal {
    def iterator: Iterator[A] = xs.toIterator
  }

  final class OptionCompanionCompat(private val o: Option.type) extends AnyVal {
    def when[A](cond: Boolean)(a: => A): Option[A] = if (cond) Some(a) else None
  }
}
