package io.github.deltalifecycle.core

import org.apache.spark.sql.SparkSession

/**
 * TEST ONLY. Kills the JVM at a named step of a multi-step operation, so tests can prove that a
 * crash there leaves every table readable and that a re-run completes. A step halts only when the
 * session's `spark.deltaLifecycle.test.haltAtStep` names it (the active session, unless the caller
 * runs on a thread that has none and passes its own), and only in a JVM started for tests: one
 * whose system property [[TestingProperty]] is `true`, which only this project's test harnesses set
 * (build.sbt's forked test JVM, tests/conftest.py's sessions). Anywhere else every switch here is
 * off whatever a session sets, and SQL `SET` of one is refused (`SettingsGuard`): a user of a
 * shared server must not be able to halt it. `Runtime.halt` skips shutdown hooks and finally
 * blocks, as a crash or `kill -9` would. It can also slow a table copy down ([[CopyDelayKey]]), so
 * a test can watch or cancel the copy while it runs.
 */
object FaultInjection {
  val HaltAtStepKey = "spark.deltaLifecycle.test.haltAtStep"

  /** TEST ONLY: the setting that makes each file of a table copy wait this many milliseconds. */
  val CopyDelayKey = "spark.deltaLifecycle.test.copyDelayMillis"

  /**
   * TEST ONLY: the setting that makes a server-side copy of an object larger than this many bytes
   * go in parts of this size (UploadPartCopy), as objects over 5 GB do; tests copy small objects.
   */
  val ServerSideCopyPartKey = "spark.deltaLifecycle.test.serverSideCopyPartBytes"

  /**
   * TEST ONLY: the step at which an operation waits until the test lets it go on, so the test can
   * act (commit as another writer) at exactly that point. The operation writes `<step>.paused` in
   * the folder [[PauseDirKey]] names and waits for `<step>.resume` there.
   */
  val PauseAtStepKey = "spark.deltaLifecycle.test.pauseAtStep"

  /** TEST ONLY: the folder of a pause's `.paused` and `.resume` files ([[PauseAtStepKey]]). */
  val PauseDirKey = "spark.deltaLifecycle.test.pauseDir"

  /** How long a paused step waits for the test before it gives up with an error. */
  val MaxPauseMillis: Long = 300000L

  /** Every test switch: settings that do something only in a JVM started for tests. */
  val Keys: Seq[String] =
    Seq(HaltAtStepKey, CopyDelayKey, ServerSideCopyPartKey, PauseAtStepKey, PauseDirKey)

  /**
   * The JVM system property that turns the switches on. Executors read their own JVM's, so a test
   * on a cluster sets it in `spark.executor.defaultJavaOptions` as well as the driver's.
   */
  val TestingProperty = "deltaLifecycle.testing"

  /** The exit status of a halted JVM, so a test can tell the injected crash from a failure. */
  val HaltExitCode = 86

  /** Whether this JVM was started for tests; read on each call, so a test can turn it off. */
  def inTestJvm: Boolean = java.lang.Boolean.getBoolean(TestingProperty)

  def step(name: String, session: Option[SparkSession] = SparkSession.getActiveSession): Unit = {
    if (armed(name, session)) halt(name)
    if (inTestJvm && session.flatMap(_.conf.getOption(PauseAtStepKey)).contains(name))
      session.flatMap(_.conf.getOption(PauseDirKey)).foreach(pause(name, _))
  }

  /** Waits at step `name` until the test writes `<name>.resume` in `dir`. */
  private def pause(name: String, dir: String): Unit = {
    val folder = java.nio.file.Paths.get(dir)
    val paused = folder.resolve(s"$name.paused")
    if (!java.nio.file.Files.exists(paused)) java.nio.file.Files.createFile(paused)
    val resume = folder.resolve(s"$name.resume")
    val deadline = System.currentTimeMillis() + MaxPauseMillis
    while (!java.nio.file.Files.exists(resume)) {
      if (System.currentTimeMillis() > deadline)
        throw new IllegalStateException(s"paused at step $name and nobody wrote $resume")
      Thread.sleep(50)
    }
  }

  /**
   * Whether the session asks to halt at `name`: for a step reached in a Spark task, where no
   * session is active; the driver passes the answer into the task, which calls `halt`.
   */
  def armed(name: String, session: Option[SparkSession] = SparkSession.getActiveSession): Boolean =
    inTestJvm && session.flatMap(_.conf.getOption(HaltAtStepKey)).contains(name)

  /**
   * How long each file of a table copy waits before it is copied: 0 unless a test sets
   * [[CopyDelayKey]], to watch a copy while it runs or cancel it.
   */
  def copyDelayMillis(session: Option[SparkSession] = SparkSession.getActiveSession): Long =
    if (!inTestJvm) 0L
    else session.flatMap(_.conf.getOption(CopyDelayKey)).flatMap(_.toLongOption).getOrElse(0L)

  /** The part size of a server-side copy a test asks for ([[ServerSideCopyPartKey]]), if any. */
  def serverSideCopyPartBytes(
      session: Option[SparkSession] = SparkSession.getActiveSession
  ): Option[Long] =
    if (!inTestJvm) None
    else session.flatMap(_.conf.getOption(ServerSideCopyPartKey)).flatMap(_.toLongOption)

  /**
   * Halts this JVM, if it was started for tests; elsewhere nothing happens. On an executor this
   * reads the executor's own JVM property, whatever the task was handed.
   */
  def halt(name: String): Unit = if (inTestJvm) {
    System.err.println(s"delta-lifecycle: halting at step $name ($HaltAtStepKey)")
    System.err.flush()
    Runtime.getRuntime.halt(HaltExitCode)
  }

  /** A wait of a copy task, in a JVM started for tests only (the executor's own property). */
  def delay(millis: Long): Unit = if (millis > 0 && inTestJvm) Thread.sleep(millis)
}
