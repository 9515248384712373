package io.github.deltalifecycle.core

import java.net.URI

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.{Column, DataFrame, SparkSession}
import org.apache.spark.sql.functions._
import org.apache.spark.sql.types.{LongType, StructType}

/**
 * The parts of [[FileState]] that run in Spark's tasks: the test that drops a checkpoint's rows of
 * the files a short tail names, and the reconciliation of a long tail. What the tasks need (the
 * table's [[FileKeys]], the tail's keys) is computed on the driver and shipped in the closures.
 */
private[core] object FileStateJob {

  /**
   * Whether a row of `query`'s kind names one of the files in `overridden`. Most rows are told
   * apart by their file name alone (a hash lookup in generated code); only a row whose name is one
   * of the tail's, or is percent-encoded and may spell one differently, gets its canonical key.
   */
  def overriddenBy(overridden: Set[FileKey], keys: FileKeys, query: FileQuery): Column =
    if (overridden.isEmpty) lit(false)
    else {
      val c = query.column
      val names = overridden.map(k => new Path(new URI(k.canonicalPath)).getName).toSeq
      val name = substring_index(col(s"$c.path"), "/", -1)
      val candidate = name.isin(names: _*) || instr(name, "%") > 0
      val exact = udf { (path: String, dv: String) =>
        overridden.contains(FileKey(keys.canonicalPath(path), Option(dv)))
      }
      when(candidate, exact(col(s"$c.path"), deletionVectorId(c))).otherwise(lit(false))
    }

  /** The unique id of the deletion vector of the action in column `c`, as delta-spark forms it. */
  private def deletionVectorId(c: String): Column = {
    val dv = s"$c.deletionVector"
    when(
      col(s"$dv.storageType").isNotNull,
      concat(
        col(s"$dv.storageType"),
        col(s"$dv.pathOrInlineDv"),
        coalesce(concat(lit("@"), col(s"$dv.offset").cast("string")), lit(""))
      )
    )
  }

  /**
   * A long tail (or a table without a checkpoint) reconciled in a Spark job, as delta-spark
   * reconciles a snapshot: every file action of the commits after the checkpoint and the
   * checkpoint's rows that `query` keeps, grouped by file, the newest action of each file winning.
   * The commits are read themselves, not their compactions: the job reads each once anyway.
   */
  def reconciled(
      spark: SparkSession,
      segment: LogSegment,
      query: FileQuery,
      schema: StructType,
      options: Map[String, String],
      keys: FileKeys,
      checkpoint: Option[DataFrame]
  ): DataFrame = {
    val c = query.column
    val asked = schema.head.dataType.asInstanceOf[StructType]
    val bare = StructType(asked.filter(f => f.name == "path" || f.name == "deletionVector"))
    val other = if (c == "add") "remove" else "add"
    val tailSchema = StructType(Seq(
      schema.head,
      schema.head.copy(name = other, dataType = bare)
    ))
    val key = udf { (path: String, dv: String) =>
      if (path == null) null else keys.canonicalPath(path) + "\u0000" + dv
    }
    def keyOf(a: String) = key(col(s"$a.path"), coalesce(deletionVectorId(a), lit("")))
    val commits = segment.commits.map(_.status.getPath.toString)
    val tail = spark.read.options(options).schema(tailSchema).json(commits: _*)
      .select(
        regexp_extract(col("_metadata.file_name"), "^0*(\\d+)\\.", 1).cast(LongType)
          .as("version"),
        monotonically_increasing_id().as("order"),
        col(c).isNotNull.as("isKind"),
        when(col(c).isNotNull, keyOf(c)).otherwise(keyOf(other)).as("key"),
        col(c).as("payload")
      )
      .where(col("key").isNotNull)
    val base = checkpoint.map(_.where(query.where).select(
      lit(segment.checkpointVersion).as("version"),
      lit(-1L).as("order"),
      lit(true).as("isKind"),
      keyOf(c).as("key"),
      col(c).as("payload")
    ))
    (base.toSeq :+ tail).reduce(_ unionByName _)
      .groupBy("key")
      .agg(max_by(struct(col("isKind"), col("payload")), struct(col("version"), col("order")))
        .as("last"))
      .where(col("last.isKind"))
      .select(col("last.payload").as(c))
      .where(query.where)
  }
}
