package io.github.deltalifecycle.core

import org.apache.spark.sql.delta.actions.{Metadata, Protocol}
import org.scalatest.funsuite.AnyFunSuite

/**
 * Which protocol and metadata make a table's commits go through a catalog or a coordinator, and the
 * error that refuses a direct write. No Spark session: only the actions.
 */
class CommitCoordinationSuite extends AnyFunSuite {
  private val plain = Protocol(1, 2)
  private val noProperties = Metadata()

  private def readerWriter(features: String*) =
    Protocol(3, 7, Some(features.toSet), Some(features.toSet + "appendOnly"))
  private def writerOnly(features: String*) =
    Protocol(1, 7, None, Some(features.toSet + "appendOnly"))
  private def withProperties(entries: (String, String)*) = Metadata(configuration = entries.toMap)

  private def owner(p: Protocol, m: Metadata = noProperties) = CommitCoordination.ownerOf(p, m)

  test("plain protocols, other features and other properties commit directly") {
    assert(owner(plain) === None)
    assert(owner(readerWriter("deletionVectors", "v2Checkpoint")) === None)
    assert(owner(writerOnly("inCommitTimestamp")) === None)
    assert(owner(plain, withProperties("delta.appendOnly" -> "true")) === None)
    // Only the coordinator's own keys count, not every key that mentions one.
    assert(owner(plain, withProperties("delta.coordinatedCommits.other" -> "x")) === None)
  }

  test("catalog-managed features, as reader or writer features, in any case") {
    Seq("catalogManaged", "catalogOwned-preview").foreach { f =>
      assert(owner(readerWriter(f)) === Some(CommitOwner("table feature", f, "its catalog")))
      assert(owner(writerOnly(f)).map(_.name) === Some(f))
      assert(owner(Protocol(3, 7, Some(Set(f)), Some(Set.empty))).map(_.name) === Some(f))
    }
    assert(owner(readerWriter("CATALOGMANAGED")).map(_.name) === Some("CATALOGMANAGED"))
  }

  test("the coordinated-commits feature and each coordinator property") {
    assert(owner(writerOnly("coordinatedCommits-preview")) ===
      Some(CommitOwner("table feature", "coordinatedCommits-preview", "its commit coordinator")))
    assert(owner(
      plain,
      withProperties(
        "delta.coordinatedCommits.commitCoordinator-preview" -> " dynamodb "
      )
    ) === Some(CommitOwner(
      "table property",
      "delta.coordinatedCommits.commitCoordinator-preview",
      "the commit coordinator 'dynamodb'"
    )))
    Seq(
      "delta.coordinatedCommits.commitCoordinatorConf-preview",
      "delta.coordinatedCommits.tableConf-preview"
    ).foreach { key =>
      assert(owner(plain, withProperties(key -> "{}")) ===
        Some(CommitOwner("table property", key, "its commit coordinator")))
    }
    assert(CommitCoordination.Properties.toSet === Set(
      "delta.coordinatedCommits.commitCoordinator-preview",
      "delta.coordinatedCommits.commitCoordinatorConf-preview",
      "delta.coordinatedCommits.tableConf-preview"
    ))
  }

  test("a feature is reported before a property") {
    val both = owner(
      readerWriter("catalogManaged"),
      withProperties("delta.coordinatedCommits.commitCoordinator-preview" -> "dynamodb")
    )
    assert(both.map(_.name) === Some("catalogManaged"))
  }

  test("requireDirectCommits throws the typed error naming the table, operation and reason") {
    CommitCoordination.requireDirectCommits("events", plain, noProperties, "compact the log of")
    val e = intercept[DeltaLifecycleException] {
      CommitCoordination.requireDirectCommits(
        "events",
        readerWriter("catalogManaged"),
        noProperties,
        "compact the log of"
      )
    }
    assert(e.condition === "DELTA_LIFECYCLE_COORDINATED_TABLE")
    assert(e.getSqlState === "0AKDC")
    assert(e.getMessage.startsWith(
      "[DELTA_LIFECYCLE_COORDINATED_TABLE] Cannot compact the log of events: its table feature " +
        "'catalogManaged' means its commits go through its catalog"
    ))
    assert(e.parameters("name") === "catalogManaged")
  }

  test("background work skips such tables instead of failing") {
    assert(!CommitCoordination.skipsBackgroundWrites("/t", plain, noProperties))
    assert(CommitCoordination.skipsBackgroundWrites(
      "/t",
      writerOnly("catalogManaged"),
      noProperties
    ))
    // Asked again after every commit: still skipped, without an error.
    assert(CommitCoordination.skipsBackgroundWrites(
      "/t",
      writerOnly("catalogManaged"),
      noProperties
    ))
  }
}
