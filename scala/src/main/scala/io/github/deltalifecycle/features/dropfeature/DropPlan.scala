package io.github.deltalifecycle.features.dropfeature

/**
 * A drop as its named steps, starting from `startVersion`, and what it leaves if no other writer
 * commits meanwhile. DRY RUN reports it; a run executes its steps in order ([[DropFeature]]).
 */
private[dropfeature] final case class DropPlan(
    feature: DroppableFeature,
    mode: DropMode,
    startVersion: Long,
    steps: Seq[DropPlan.Step],
    downgradeVersion: Option[Long],
    protectedBefore: Option[Long],
    historyTruncatedBefore: Option[Long]
) {
  def commitVersions: Seq[Long] = startVersion + 1 to startVersion + steps.map(_.commits).sum

  def checkpointVersions: Seq[Long] = {
    val lastVersions = steps.scanLeft(startVersion)(_ + _.commits).tail
    steps.zip(lastVersions).flatMap {
      case (step, last) if step.checkpointed =>
        if (step.commits == 0) Seq(last) else last - step.commits + 1 to last
      case _ => Nil
    }
  }
}

private[dropfeature] object DropPlan {

  /**
   * One step of a drop: its progress label, the lines it adds to the result (the preparation is one
   * step that delta-spark may run as several commits), whether each commit it makes gets a
   * checkpoint (a step without commits checkpoints the latest version), and the work itself.
   */
  final case class Step(
      label: String,
      reports: Seq[DropStep],
      checkpointed: Boolean = false
  )(val work: DropRun => Unit) {
    def commits: Int = reports.map(_.commits).sum
  }
}

/** What the steps of a running drop wrote. */
private[dropfeature] final class DropRun(val barrier: BarrierCheckpoints) {
  var filesRewritten = 0L
  var bytesRewritten = 0L
  var checkpoints: Vector[Long] = Vector.empty
  var downgrade: Option[Long] = None
}
