package io.github.deltalifecycle.core

import org.scalatest.funsuite.AnyFunSuite

class TableNameSuite extends AnyFunSuite {

  test("parts: a quoted part keeps its dots and backticks") {
    assert(TableName.parts("db.t") === Seq("db", "t"))
    assert(TableName.parts("`my.db`.t") === Seq("my.db", "t"))
    assert(TableName.parts("`my.db`.`a.b`") === Seq("my.db", "a.b"))
    assert(TableName.parts("spark_catalog.`a``b`.t") === Seq("spark_catalog", "a`b", "t"))
  }

  test("sql quotes a part only when it must, and parts reads it back") {
    assert(TableName.sql(Seq("default", "events")) === "default.events")
    assert(TableName.sql(Seq("my.db", "t")) === "`my.db`.t")
    for (
      parts <- Seq(Seq("db", "t"), Seq("my.db", "t"), Seq("a`b", "c d"), Seq("1st", "t"), Seq("x"))
    ) assert(TableName.parts(TableName.sql(parts)) === parts)
  }
}
