package io.github.deltalifecycle.sql.unitycatalog

import io.unitycatalog.hadoop.UCCredentialHadoopConfs
import org.scalatest.funsuite.AnyFunSuite

/**
 * Path operations are named without Unity Catalog's classes (sessions without its connector name
 * them too), so each name must be one of the operations Unity Catalog's client knows.
 */
class PathOperationSuite extends AnyFunSuite {

  test("every path operation names one of Unity Catalog's") {
    val known = UCCredentialHadoopConfs.PathOperation.values.map(_.name).toSet
    val ours = Seq(PathOperation.Read, PathOperation.ReadWrite, PathOperation.CreateTable)
    assert(ours.map(_.name).toSet.subsetOf(known))
    assert(ours.map(_.name).distinct.size === ours.size)
  }
}
