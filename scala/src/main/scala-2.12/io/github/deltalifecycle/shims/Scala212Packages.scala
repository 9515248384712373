// The package objects that give the Scala 2.12 build the members of Scala212Compat.
package io.github.deltalifecycle {
  package object core extends shims.Scala212Compat
  package object sql extends shims.Scala212Compat

  package features {
    package object cleanup extends shims.Scala212Compat
    package object compaction extends shims.Scala212Compat
    package object compatibility extends shims.Scala212Compat
    package object dropfeature extends shims.Scala212Compat
  }

  package sql {
    package object observation extends shims.Scala212Compat
    package object parser extends shims.Scala212Compat
    package object routing extends shims.Scala212Compat
  }
}
