// Scala212Compat for the test packages that have no package object in the main sources
// (main's Scala212Packages.scala covers the others).
package io.github.deltalifecycle {
  package features {
    package object redirect extends shims.Scala212Compat
  }
}
