package io.github.deltalifecycle.core

import org.apache.hadoop.fs.{FileStatus, Path}
import org.scalatest.funsuite.AnyFunSuite

/** Planning which files rebuild a version, on listings made up of file names only. */
class LogSegmentSuite extends AnyFunSuite {

  private def listing(names: String*): LogListing = {
    val files = names.flatMap(n =>
      LogFiles.classify(new FileStatus(1, false, 1, 1, 0, new Path("/t/_delta_log", n)))
    )
    LogListing(
      tablePath = new Path("/t"),
      logPath = new Path("/t/_delta_log"),
      commits = files.collect { case c: CommitFile => c }.sortBy(_.version).toVector,
      checkpoints = LogFiles.completeCheckpoints(files.collect { case c: CheckpointPartFile =>
        c
      }).toVector,
      compactions =
        files.collect { case c: CompactionFile => c }.sortBy(c => (c.start, c.end)).toVector,
      checksums = Map.empty
    )
  }

  private def commits(range: Range): Seq[String] = range.map(v => f"$v%020d.json")

  test("file names are classified by the protocol's patterns") {
    val l = listing(Seq(
      f"${3}%020d.checkpoint.parquet",
      f"${5}%020d.checkpoint.0000000001.0000000002.parquet",
      f"${5}%020d.checkpoint.0000000002.0000000002.parquet",
      f"${6}%020d.checkpoint.0000000001.0000000003.parquet", // incomplete: dropped
      f"${7}%020d.checkpoint.80a083e8-7026-4e79-81be-64bd76c43a11.json",
      f"${1}%020d.${2}%020d.compacted.json",
      f"${2}%020d.${2}%020d.compacted.json", // x == y is not a compaction
      "_last_checkpoint",
      "garbage.txt"
    ) ++ commits(0 to 7): _*)
    assert(l.checkpoints.map(c => (c.version, c.kind)) ===
      Seq((3L, CheckpointKind.Classic), (5L, CheckpointKind.MultiPart), (7L, CheckpointKind.V2)))
    assert(l.compactions.map(c => (c.start, c.end)) === Seq((1L, 2L)))
    assert(l.commits.size === 8)
  }

  test("the newest checkpoint at or before the version is used, and compactions after it") {
    val l = listing(commits(0 to 12) ++ Seq(
      f"${5}%020d.checkpoint.parquet",
      f"${3}%020d.${8}%020d.compacted.json",
      f"${6}%020d.${8}%020d.compacted.json",
      f"${9}%020d.${11}%020d.compacted.json",
      f"${9}%020d.${10}%020d.compacted.json"
    ): _*)
    val s = LogSegment.plan(l, 12)
    assert(s.checkpointVersion === 5)
    assert(s.compactions.map(c => (c.start, c.end)) === Seq((6L, 8L), (9L, 11L)))
    assert(s.steps.map(_.fold(c => s"c${c.start}-${c.end}", c => s"v${c.version}")) ===
      Seq("c6-8", "c9-11", "v12"))
    assert(LogSegment.plan(l, 10).compactions.map(c => (c.start, c.end)) ===
      Seq((6L, 8L), (9L, 10L)))
    assert(LogSegment.plan(l, 4).checkpoint.isEmpty)
    assert(LogSegment.plan(l, 4).compactions.isEmpty)
  }

  test("gaps and versions out of range are typed errors") {
    val gap = listing(commits(0 to 3) ++ commits(5 to 6): _*)
    val e = intercept[DeltaLifecycleException](LogSegment.plan(gap, 6))
    assert(e.getCondition === "DELTA_LIFECYCLE_NON_CONTIGUOUS_VERSIONS")
    assert(LogSegment.plan(gap, 3).commits.size === 4)

    val truncated = listing(commits(4 to 9) :+ f"${5}%020d.checkpoint.parquet": _*)
    assert(truncated.earliestReconstructableVersion === 5)
    val tooOld = intercept[DeltaLifecycleException](LogSegment.plan(truncated, 4))
    assert(tooOld.getCondition === "DELTA_LIFECYCLE_VERSION_NOT_FOUND")
    val tooNew = intercept[DeltaLifecycleException](LogSegment.plan(truncated, 10))
    assert(tooNew.getCondition === "DELTA_LIFECYCLE_VERSION_NOT_FOUND")
  }

  test("an excluded (unreadable) checkpoint makes the plan fall back to an older base") {
    val l = listing(commits(0 to 6) ++
      Seq(f"${2}%020d.checkpoint.parquet", f"${4}%020d.checkpoint.parquet"): _*)
    val newest = LogSegment.plan(l, 6).checkpoint.get
    assert(LogSegment.plan(l, 6, Set(newest)).checkpointVersion === 2)
  }

  test("ratified commits the log does not hold yet are listed as commits, backfilled ones win") {
    def staged(v: Long) = RatifiedCommit(
      v,
      new FileStatus(1, false, 1, 1, 0, new Path(f"/t/_delta_log/_staged_commits/$v%020d.u.json"))
    )
    val l = listing(commits(0 to 3) :+ f"${2}%020d.checkpoint.parquet": _*)
      .withRatified(Seq(staged(3), staged(4), staged(5)))
    assert(l.commits.map(_.version) === (0L to 5L))
    assert(l.commit(3).get.name === f"${3}%020d.json")
    assert(l.commit(5).get.status.getPath.getParent.getName === "_staged_commits")
    assert(l.unbackfilled === Set(4L, 5L))
    assert(l.latestVersion === 5 && l.backfilledThrough === 3)
    assert(LogSegment.plan(l, 5).commits.map(_.version) === Seq(3L, 4L, 5L))
    // A listing of the tail leaves out what it does not list.
    assert(l.copy(listedFrom = 5).withRatified(Seq(staged(4))).commits.size === 6)
    assert(listing(commits(0 to 1): _*).withRatified(Nil).backfilledThrough === 1)
  }
}
