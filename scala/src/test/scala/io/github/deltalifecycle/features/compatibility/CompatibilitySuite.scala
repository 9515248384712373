package io.github.deltalifecycle.features.compatibility

import io.github.deltalifecycle.features.dropfeature.DroppableFeatures
import io.github.deltalifecycle.core.DeltaLifecycleException
import org.apache.spark.sql.delta.{
  CheckpointProtectionTableFeature,
  ColumnMappingTableFeature,
  DeletionVectorsTableFeature,
  DomainMetadataTableFeature,
  IcebergCompatV2TableFeature,
  RowTrackingFeature,
  TableFeature,
  V2CheckpointTableFeature
}
import org.apache.spark.sql.delta.actions.Protocol
import org.scalatest.funsuite.AnyFunSuite

/** The capability file and the decisions made from it, on protocols built in memory (no Spark). */
class CompatibilitySuite extends AnyFunSuite {
  private def client(id: String) = ClientCapabilities.lookup(id).head
  private def features(fs: TableFeature*) = Protocol(3, 7).withFeatures(fs)
  private def verdict(p: Protocol, id: String) = Compatibility.evaluate(p, client(id))

  test("every entry of the capability file is complete and sourced") {
    val all = ClientCapabilities.all
    assert(all.map(_.id).distinct.size === all.size, "ids are unique")
    all.foreach { c =>
      assert(c.sources.nonEmpty, s"${c.id} has no source")
      assert(c.sources.forall(_.url.startsWith("https://")), c.id)
      assert(Set("verified", "documented").contains(c.evidence), c.id)
      assert((c.read.supported intersect c.read.unsupported).isEmpty, c.id)
      assert((c.write.supported intersect c.write.unsupported).isEmpty, c.id)
      Seq(c.read, c.write).foreach { side =>
        assert((side.unknown intersect (side.supported ++ side.unsupported)).isEmpty, c.id)
      }
      if (c.readOnly) assert(c.write.supported.isEmpty, s"${c.id} is read-only")
    }
  }

  test("a read-only client reads what its sources list and never writes; no drop helps it") {
    val v = verdict(features(DeletionVectorsTableFeature), "athena")
    assert(v.canRead === AccessAnswer.Yes)
    assert(v.canWrite === AccessAnswer.No)
    assert(v.writeBlockers === Seq(Compatibility.ReadOnlyClient))
    assert(v.dropForWrite.isEmpty && v.unknownForWrite.isEmpty && !v.writeNeedsTruncateHistory)
    // Even a legacy protocol that any writer handles.
    assert(verdict(Protocol(1, 1), "athena").canWrite === AccessAnswer.No)
  }

  test("a feature whose check depends on the table's schema stays unknown in a closed registry") {
    // Delta Kernel 4.4 writes to a table with checkConstraints (and the invariants writer version 3
    // implies) only while it has no constraint.
    val constraints = Protocol(1, 3)
    val kernel = verdict(constraints, "delta-kernel-java-4.4")
    assert(kernel.canWrite === AccessAnswer.Unknown)
    assert(kernel.unknownForWrite === Seq("checkConstraints", "invariants"))
    // Kernel 3.3 refuses writer versions 3 to 6 outright.
    assert(verdict(constraints, "delta-kernel-java-3.3").writeBlockers === Seq("checkConstraints"))
    // delta-kernel-rs does not know checkpointProtection: it reads after a fast drop, not writes.
    val rs = verdict(features(CheckpointProtectionTableFeature), "delta-kernel-rs-0.27")
    assert(rs.canRead === AccessAnswer.Yes && rs.canWrite === AccessAnswer.No)
    // Trino reads v2 checkpoints but its writer set does not name them.
    val trino = verdict(features(V2CheckpointTableFeature), "trino")
    assert(trino.canRead === AccessAnswer.Yes && trino.writeBlockers === Seq("v2Checkpoint"))
  }

  test("the delta-spark entry of the jar's own line lists exactly features its registry knows") {
    // The registry is the source of the delta-spark entries; check it against the running one:
    // delta-spark 3.3 on Spark 3.5, 4.4 on the Spark 4 lines.
    val entry =
      client(if (org.apache.spark.SPARK_VERSION.startsWith("3.5")) "delta-spark-3.3"
      else "delta-spark-4.4")
    val unknownToRegistry = (entry.read.supported ++ entry.write.supported).filter(
      TableFeature.featureNameToFeature(
        _
      ).isEmpty
    )
    assert(unknownToRegistry.isEmpty)
    val registry = Seq(
      DeletionVectorsTableFeature,
      V2CheckpointTableFeature,
      CheckpointProtectionTableFeature,
      RowTrackingFeature,
      DomainMetadataTableFeature,
      ColumnMappingTableFeature
    ).map(_.name)
    assert(registry.forall(entry.write.supported.contains))
  }

  test("deletion vectors: delta-spark 2.4 reads them, deltalake 0.25 needs them dropped") {
    val p = features(DeletionVectorsTableFeature)
    val spark24 = verdict(p, "delta-spark-2.4")
    assert(spark24.canRead === AccessAnswer.Yes && spark24.canWrite === AccessAnswer.Yes)
    val rs = verdict(p, "deltalake-0.25")
    assert(rs.canRead === AccessAnswer.No)
    assert(rs.readBlockers === Seq("deletionVectors"))
    assert(rs.dropForRead === Seq(FeatureToDrop("deletionVectors", droppable = true)))
    // 0.25 writes past checkpointProtection (checked here); 1.x refuses it, so dropping for
    // its writes the fast way, which adds the feature, would not help.
    assert(!rs.writeNeedsTruncateHistory)
    assert(verdict(p, "deltalake-1.x").writeNeedsTruncateHistory)
  }

  test("after a fast drop, deltalake 1.x reads but cannot write until checkpointProtection goes") {
    val p = features(CheckpointProtectionTableFeature)
    val v = verdict(p, "deltalake-1.x")
    assert(v.canRead === AccessAnswer.Yes)
    assert(v.canWrite === AccessAnswer.No)
    assert(v.writeBlockers === Seq("checkpointProtection"))
    assert(v.dropForWrite === Seq(FeatureToDrop("checkpointProtection", droppable = true)))
    assert(v.writeNeedsTruncateHistory)
    // delta-spark 3.3 knows the feature; 3.2 (Fabric Runtime 1.3) does not.
    assert(verdict(p, "delta-spark-3.3").canWrite === AccessAnswer.Yes)
    assert(verdict(p, "delta-spark-3.2").writeBlockers === Seq("checkpointProtection"))
    assert(verdict(p, "fabric-runtime-1.3").canWrite === AccessAnswer.No)
  }

  test("features that depend on a blocker are dropped first, and undroppable ones are named") {
    val p = features(RowTrackingFeature, DomainMetadataTableFeature)
    val v = verdict(p, "delta-spark-2.4")
    assert(v.canRead === AccessAnswer.Yes, "rowTracking and domainMetadata are writer features")
    assert(v.writeBlockers === Seq("domainMetadata", "rowTracking"))
    assert(v.dropForWrite.map(_.feature) === Seq("rowTracking", "domainMetadata"))
    // Droppable exactly where the running delta-spark removes them: on 4.x (delta-spark 4.4),
    // not on 3.5 (delta-spark 3.3 has no downgrade for them).
    assert(v.dropForWrite.map(_.droppable) === v.dropForWrite.map(f =>
      DroppableFeatures.Names.contains(f.feature)
    ))
  }

  test("a legacy protocol's implied features: refused where listed, unknown where not") {
    val columnMapping = Protocol(2, 5)
    val rs = verdict(columnMapping, "deltalake-0.25")
    assert(rs.canRead === AccessAnswer.No && rs.readBlockers === Seq("columnMapping"))
    // Polars 1.33 reads column mapping (checked by tests/test_compatibility_clients.py).
    assert(verdict(columnMapping, "polars").canRead === AccessAnswer.Yes)
    // duckdb-delta 0.3: its delta-kernel-rs lets column mapping through, but no source says
    // whether DuckDB applies it.
    val duck = verdict(columnMapping, "duckdb-delta")
    assert(duck.canRead === AccessAnswer.Unknown && duck.unknownForRead.contains("columnMapping"))
    assert(verdict(Protocol(1, 2), "duckdb-delta").canRead === AccessAnswer.Yes)
  }

  test("icebergCompatV2 needs columnMapping: both go, the dependent first") {
    val p = features(ColumnMappingTableFeature, IcebergCompatV2TableFeature)
    val v = verdict(p, "deltalake-0.25")
    assert(v.dropForRead.map(_.feature) === Seq("icebergCompatV2", "columnMapping"))
    assert(!v.dropForRead.head.droppable)
  }

  test("a table beyond a client's protocol versions is blocked by the version itself") {
    val narrow = client("delta-spark-2.4").copy(maxReaderVersion = Some(1))
    val v = Compatibility.evaluate(Protocol(2, 5), narrow)
    assert(v.canRead === AccessAnswer.No && v.readBlockers.contains("minReaderVersion=2"))
  }

  test("clients are named by id or by family, in any case; others get a typed error") {
    assert(ClientCapabilities.lookup("DeltaLake-0.25").map(_.id) === Seq("deltalake-0.25"))
    assert(ClientCapabilities.lookup("delta-spark").size === 7)
    val e = intercept[DeltaLifecycleException](ClientCapabilities.lookup("spark-nope"))
    assert(e.condition === "DELTA_LIFECYCLE_UNKNOWN_CLIENT")
    assert(e.getMessage.contains("deltalake-1.x"))
  }

  test("a drop's impact: who gains access each way, and whom checkpointProtection blocks") {
    val impact = DropImpact.of(features(DeletionVectorsTableFeature), "deletionVectors")
    assert(impact.gains.contains("deltalake-1.x: read (fast), read+write (truncate-history)"))
    assert(
      impact.gains.contains("deltalake-0.25: read+write (fast), read+write (truncate-history)")
    )
    assert(impact.protectionBlocksWrites.contains("deltalake-1.x"))
    assert(!impact.protectionBlocksWrites.contains("deltalake-0.25"))
    assert(!impact.protectionBlocksWrites.contains("delta-spark-3.3"))
    assert(DropImpact.of(Protocol(1, 2), "deletionVectors") === DropImpact(Nil, Nil))
  }
}
