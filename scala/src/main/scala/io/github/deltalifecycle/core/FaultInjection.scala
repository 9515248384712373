package io.github.deltalifecycle.core

import org.apache.spark.sql.SparkSession

/**
 * TEST ONLY. Kills the JVM at a named step of a multi-step operation, so tests can prove that a
 * crash there leaves every table readable and that a re-run completes. A step halts only when the
 * session's `spark.deltaLifecycle.test.haltAtStep` names it (the active session, unless the caller
 * runs on a thread that has none and passes its own); nothing else reads that setting, and with it
 * unset (always, outside tests) a step is a no-op. `Runtime.halt` skips shutdown hooks and finally
 * blocks, as a crash or `kill -9` would. It can also slow a table copy down ([[CopyDelayKey]]), so
 * a test can watch or cancel the copy while it runs.
 */
object FaultInjection {
  val HaltAtStepKey = "spark.deltaLifecycle.test.haltAtStep"

  /** The exit status of a halted JVM, so a test can tell the injected crash from a failure. */
  val HaltExitCode = 86

  def step(name: String, session: Option[SparkSession] = SparkSession.getActiveSession): Unit =
    if (armed(name, session)) halt(name)

  /**
   * Whether the session asks to halt at `name`: for a step reached in a Spark task, where no
   * session is active; the driver passes the answer into the task, which calls `halt`.
   */
  def armed(name: String, session: Option[SparkSession] = SparkSession.getActiveSession): Boolean =
    session.flatMap(_.conf.getOption(HaltAtStepKey)).contains(name)

  /** TEST ONLY: the setting that makes each file of a table copy wait this many milliseconds. */
  val CopyDelayKey = "spark.deltaLifecycle.test.copyDelayMillis"

  /**
   * How long each file of a table copy waits before it is copied: 0 unless a test sets
   * [[CopyDelayKey]], to watch a copy while it runs or cancel it.
   */
  def copyDelayMillis(session: Option[SparkSession] = SparkSession.getActiveSession): Long =
    session.flatMap(_.conf.getOption(CopyDelayKey)).flatMap(_.toLongOption).getOrElse(0L)

  def halt(name: String): Unit = {
    System.err.println(s"delta-lifecycle: halting at step $name ($HaltAtStepKey)")
    System.err.flush()
    Runtime.getRuntime.halt(HaltExitCode)
  }
}
