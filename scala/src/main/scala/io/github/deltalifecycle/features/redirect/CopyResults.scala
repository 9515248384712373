package io.github.deltalifecycle.features.redirect

/**
 * What a copy did: files and bytes copied now, files found already copied (a resumed run), files
 * the log references outside the table root (not copied: the destination's log names them where
 * they are), and files that older retained versions reference but that no longer exist (vacuumed).
 * `route` is how the files were copied; `bytesThroughExecutors` the bytes the executors read and
 * wrote themselves (0 when the store copied every file); `refusedServerSide` the files the store
 * refused to copy itself, which went through streams instead (`refusal`: the store's first answer);
 * `logFilesCopied` how many of the files copied were log files.
 */
final case class CopyStats(
    filesCopied: Long,
    bytesCopied: Long,
    filesAlreadyThere: Long,
    filesReferencedInPlace: Long = 0L,
    filesGone: Long = 0L,
    bytesThroughExecutors: Long = 0L,
    route: Option[CopyRoute] = None,
    refusedServerSide: Long = 0L,
    refusal: Option[String] = None,
    logFilesCopied: Long = 0L
) {
  def +(o: CopyStats): CopyStats =
    CopyStats(
      filesCopied + o.filesCopied,
      bytesCopied + o.bytesCopied,
      filesAlreadyThere + o.filesAlreadyThere,
      filesReferencedInPlace + o.filesReferencedInPlace,
      filesGone + o.filesGone,
      bytesThroughExecutors + o.bytesThroughExecutors,
      route.orElse(o.route),
      refusedServerSide + o.refusedServerSide,
      refusal.orElse(o.refusal),
      logFilesCopied + o.logFilesCopied
    )
}

/**
 * What a copy would do (DRY RUN; nothing written): the files and bytes to copy, those already at
 * the destination with the source's size, those referenced in place or gone (as [[CopyStats]]), the
 * files the copied version reads that are missing at the source (the copy would fail; a few
 * `missingExamples`), the number of copy tasks, and the route.
 */
final case class CopyForecast(
    files: Long,
    bytes: Long,
    filesAlreadyThere: Long,
    bytesAlreadyThere: Long,
    filesReferencedInPlace: Long,
    filesGone: Long,
    filesMissing: Long,
    missingExamples: Vector[String],
    tasks: Int,
    route: CopyRoute
)

/**
 * What one copy task did; `problems` holds the first few mismatches it found (of `problemCount`),
 * which the driver turns into one error. `moved` counts the bytes that passed through the task;
 * `refused` the files the store refused to copy itself (`refusal`: its first answer); `logCopied`
 * the log files among those copied.
 */
private[redirect] final case class TaskOutcome(
    copied: Long,
    bytes: Long,
    alreadyThere: Long,
    gone: Long,
    timesNotKept: Long,
    problemCount: Long,
    problems: Vector[String],
    moved: Long = 0L,
    refused: Long = 0L,
    refusal: Option[String] = None,
    logCopied: Long = 0L
) {
  def +(o: TaskOutcome): TaskOutcome = TaskOutcome(
    copied + o.copied,
    bytes + o.bytes,
    alreadyThere + o.alreadyThere,
    gone + o.gone,
    timesNotKept + o.timesNotKept,
    problemCount + o.problemCount,
    (problems ++ o.problems).take(TaskOutcome.Examples),
    moved + o.moved,
    refused + o.refused,
    refusal.orElse(o.refusal),
    logCopied + o.logCopied
  )

  def problem(what: String): TaskOutcome =
    copy(problemCount = problemCount + 1, problems = (problems :+ what).take(TaskOutcome.Examples))
}

private[redirect] object TaskOutcome {
  val Examples = 3
  val Zero: TaskOutcome = TaskOutcome(0, 0, 0, 0, 0, 0, Vector.empty)
}

/**
 * What a DRY RUN's probe task found: files to copy and their bytes, files already there and their
 * bytes, files gone, and files the copied version reads that are missing (a few named).
 */
private[redirect] final case class ProbeOutcome(
    toCopy: Long,
    bytes: Long,
    there: Long,
    bytesThere: Long,
    gone: Long,
    missing: Long,
    examples: Vector[String]
) {
  def +(o: ProbeOutcome): ProbeOutcome = ProbeOutcome(
    toCopy + o.toCopy,
    bytes + o.bytes,
    there + o.there,
    bytesThere + o.bytesThere,
    gone + o.gone,
    missing + o.missing,
    (examples ++ o.examples).take(TaskOutcome.Examples)
  )
}

private[redirect] object ProbeOutcome {
  val Zero: ProbeOutcome = ProbeOutcome(0, 0, 0, 0, 0, 0, Vector.empty)
}
