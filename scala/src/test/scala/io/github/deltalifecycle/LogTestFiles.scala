package io.github.deltalifecycle

import java.io.File
import java.util.concurrent.TimeUnit

/** Looking at and ageing the files of a test table's `_delta_log`. */
object LogTestFiles {
  def logDir(path: String): File = new File(path, "_delta_log")

  def logNames(path: String): Set[String] = logDir(path).list().filterNot(_.startsWith(".")).toSet

  def name(version: Long, suffix: String): String = f"$version%020d.$suffix"

  /** Makes every log file of versions up to `through` look `hours` old, keeping commit order. */
  def age(path: String, through: Long, hours: Long): Unit = {
    val base = System.currentTimeMillis() - TimeUnit.HOURS.toMillis(hours)
    logDir(path).listFiles().filter(_.getName.matches("""\d{20}\..*""")).foreach { f =>
      val v = f.getName.take(20).toLong
      if (v <= through) assert(f.setLastModified(base + v * 1000))
    }
  }
}
