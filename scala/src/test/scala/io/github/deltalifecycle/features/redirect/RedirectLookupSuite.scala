package io.github.deltalifecycle.features.redirect

import io.github.deltalifecycle.LifecycleSparkSession
import org.apache.hadoop.fs.Path
import org.scalatest.funsuite.AnyFunSuite

/**
 * The redirect lookup's remembered facts: reused only while they still describe the table's latest
 * version, refreshed from the commits that landed since (one by one for a few, by listing for
 * more), and dropped when the table at the path is a different one.
 */
class RedirectLookupSuite extends AnyFunSuite with LifecycleSparkSession {

  private def read(path: String): RedirectInfo =
    RedirectLookup.read(spark.sessionState.newHadoopConf(), new Path(path)).get

  private def create(path: String, properties: String = ""): Unit = {
    val props = if (properties.isEmpty) "" else s" TBLPROPERTIES ($properties)"
    spark.sql(s"CREATE TABLE delta.`$path` (id BIGINT) USING delta$props")
  }

  private def setProperty(path: String, key: String, value: String): Unit =
    spark.sql(s"ALTER TABLE delta.`$path` SET TBLPROPERTIES ('$key' = '$value')")

  private def append(path: String, commits: Int): Unit = (1 to commits).foreach(i =>
    spark.sql(s"INSERT INTO delta.`$path` VALUES ($i)")
  )

  for (newCommits <- Seq(1, 3, 30)) {
    test(s"after $newCommits new commits the facts are those of the latest version") {
      val path = newTableDir(s"refresh-$newCommits")
      create(path)
      val first = read(path)
      append(path, newCommits - 1)
      // The newest commit changes the metadata: a refresh that kept the remembered facts fails.
      setProperty(path, "lookup.mark", s"m$newCommits")
      val refreshed = read(path)
      assert(refreshed.version === first.version + newCommits)
      assert(refreshed.metadata.configuration.get("lookup.mark") === Some(s"m$newCommits"))
      // A metadata change older than the newest commit is kept as well.
      setProperty(path, "lookup.older", "o")
      append(path, 2)
      val later = read(path)
      assert(later.version === refreshed.version + 3)
      assert(later.metadata.configuration.get("lookup.older") === Some("o"))
      assert(later.metadata.configuration.get("lookup.mark") === Some(s"m$newCommits"))
      // Nothing new: the same facts.
      assert(read(path) === later)
    }
  }

  test("a table deleted and created again at the same path is read afresh") {
    val path = newTableDir("recreated")
    create(path, "'lookup.generation' = 'first'")
    append(path, 4)
    val before = read(path)
    assert(before.version === 4)

    val dir = new Path(path)
    def recreate(generation: String, commits: Int): RedirectInfo = {
      // A commit file is told apart by its length and its time in whole seconds (object stores
      // give no finer time in a file-status call), and the statements in between no longer
      // refresh the lookup: the new table's commits must be written in a later second.
      Thread.sleep(1100)
      dir.getFileSystem(spark.sessionState.newHadoopConf()).delete(dir, true)
      org.apache.spark.sql.delta.DeltaLog.clearCache()
      create(path, s"'lookup.generation' = '$generation'")
      append(path, commits)
      read(path)
    }
    // More versions than before: the remembered version exists again, as another file.
    val longer = recreate("second", 6)
    assert(longer.version === 6)
    assert(longer.metadata.id !== before.metadata.id)
    assert(longer.metadata.configuration.get("lookup.generation") === Some("second"))
    // Fewer: the remembered version's commit file is gone.
    val shorter = recreate("third", 0)
    assert(shorter.version === 0)
    assert(shorter.metadata.id !== longer.metadata.id)
    assert(shorter.metadata.configuration.get("lookup.generation") === Some("third"))
  }
}
