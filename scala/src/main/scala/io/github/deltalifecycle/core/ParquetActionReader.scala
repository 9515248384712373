package io.github.deltalifecycle.core

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.JsonNode
import com.fasterxml.jackson.databind.node.{JsonNodeFactory, ObjectNode}
import org.apache.hadoop.fs.{FileStatus, FileSystem}
import org.apache.parquet.example.data.Group
import org.apache.parquet.example.data.simple.convert.GroupRecordConverter
import org.apache.parquet.hadoop.ParquetFileReader
import org.apache.parquet.hadoop.util.HadoopStreams
import org.apache.parquet.io.{ColumnIOFactory, InputFile, SeekableInputStream}
import org.apache.parquet.schema.{
  GroupType,
  LogicalTypeAnnotation,
  MessageType,
  PrimitiveType,
  Type
}
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName
import org.apache.spark.sql.delta.actions.Action

/**
 * Reads checkpoint and sidecar Parquet files with parquet-hadoop, in-process (no Spark job),
 * turning each row into the same JSON tree a commit line would give, so one binding to
 * delta-spark's action classes serves both formats.
 */
object ParquetActionReader {

  /** Columns a checkpoint may hold; `*_parsed` stats columns are never read. */
  val AllActionColumns: Set[String] =
    Set(
      "add",
      "remove",
      "metaData",
      "protocol",
      "txn",
      "domainMetadata",
      "checkpointMetadata",
      "sidecar"
    )

  private val skippedNestedFields = Set("stats_parsed", "partitionValues_parsed")
  private val json = JsonNodeFactory.instance

  /** The actions in `file` restricted to the top-level `columns`, in row order. */
  def read(fs: FileSystem, file: FileStatus, columns: Set[String]): Iterator[Action] = {
    val reader = ParquetFileReader.open(inputFile(fs, file))
    val fileSchema = reader.getFooter.getFileMetaData.getSchema
    val projected = project(fileSchema, columns)
    if (projected.getFieldCount == 0) {
      reader.close()
      return Iterator.empty
    }
    reader.setRequestedSchema(projected)
    val columnIO = new ColumnIOFactory().getColumnIO(projected)

    new Iterator[Action] {
      private var rowsLeft = 0L
      private var recordReader: org.apache.parquet.io.RecordReader[Group] = _
      private var nextAction: Action = _
      private var closed = false

      private def advance(): Unit = {
        nextAction = null
        while (nextAction == null && !closed) {
          if (rowsLeft == 0) {
            val pages = reader.readNextRowGroup()
            if (pages == null) {
              reader.close()
              closed = true
            } else {
              rowsLeft = pages.getRowCount
              recordReader = columnIO.getRecordReader(pages, new GroupRecordConverter(projected))
            }
          } else {
            rowsLeft -= 1
            val row = rowToJson(recordReader.read(), projected)
            if (row.size() > 0) nextAction = ActionReader.toAction(row)
          }
        }
      }
      advance()

      override def hasNext: Boolean = nextAction != null
      override def next(): Action = {
        val a = nextAction
        advance()
        a
      }
    }
  }

  /** A Parquet input over the given file system (which may be a raw, checksum-free one). */
  private def inputFile(fs: FileSystem, file: FileStatus): InputFile = new InputFile {
    override def getLength: Long = file.getLen
    override def newStream(): SeekableInputStream = HadoopStreams.wrap(fs.open(file.getPath))
  }

  private def project(schema: MessageType, columns: Set[String]): MessageType = {
    val kept = schema.getFields.asScala.filter(f => columns.contains(f.getName)).map {
      case g: GroupType if !g.isPrimitive =>
        val children = g.getFields.asScala.filterNot(c => skippedNestedFields.contains(c.getName))
        g.withNewFields(children.asJava): Type
      case other => other
    }
    new MessageType(schema.getName, kept.asJava)
  }

  private def rowToJson(g: Group, t: GroupType): ObjectNode = {
    val node = json.objectNode()
    var i = 0
    while (i < t.getFieldCount) {
      if (g.getFieldRepetitionCount(i) > 0)
        node.set[JsonNode](t.getFieldName(i), value(g, i, 0, t.getType(i)))
      i += 1
    }
    node
  }

  private def value(parent: Group, field: Int, index: Int, t: Type): JsonNode = {
    if (t.isPrimitive) primitive(parent, field, index, t.asPrimitiveType())
    else {
      val g = parent.getGroup(field, index)
      val gt = t.asGroupType()
      gt.getLogicalTypeAnnotation match {
        case _: LogicalTypeAnnotation.ListLogicalTypeAnnotation => list(g, gt)
        case _: LogicalTypeAnnotation.MapLogicalTypeAnnotation |
            _: LogicalTypeAnnotation.MapKeyValueTypeAnnotation => map(g, gt)
        case _ => rowToJson(g, gt)
      }
    }
  }

  // Parquet's LIST backward-compatibility rules: a repeated group with several fields, or
  // named "array" / "<list>_tuple", is itself the element; otherwise its single field is.
  private def list(g: Group, listType: GroupType): JsonNode = {
    val out = json.arrayNode()
    val repeated = listType.getType(0)
    val n = g.getFieldRepetitionCount(0)
    var j = 0
    while (j < n) {
      if (repeated.isPrimitive) out.add(primitive(g, 0, j, repeated.asPrimitiveType()))
      else {
        val rg = repeated.asGroupType()
        val elementIsGroup = rg.getFieldCount > 1 || rg.getName == "array" ||
          rg.getName == listType.getName + "_tuple"
        val element = g.getGroup(0, j)
        if (elementIsGroup) out.add(rowToJson(element, rg))
        else if (element.getFieldRepetitionCount(0) == 0) out.addNull()
        else out.add(value(element, 0, 0, rg.getType(0)))
      }
      j += 1
    }
    out
  }

  private def map(g: Group, mapType: GroupType): JsonNode = {
    val out = json.objectNode()
    val kv = mapType.getType(0).asGroupType()
    val n = g.getFieldRepetitionCount(0)
    var j = 0
    while (j < n) {
      val entry = g.getGroup(0, j)
      val key = value(entry, 0, 0, kv.getType(0)).asText()
      val v = if (kv.getFieldCount > 1 && entry.getFieldRepetitionCount(1) > 0)
        value(entry, 1, 0, kv.getType(1))
      else json.nullNode()
      out.set[JsonNode](key, v)
      j += 1
    }
    out
  }

  private def primitive(g: Group, field: Int, index: Int, t: PrimitiveType): JsonNode =
    t.getPrimitiveTypeName match {
      case PrimitiveTypeName.BOOLEAN => json.booleanNode(g.getBoolean(field, index))
      case PrimitiveTypeName.INT32 => json.numberNode(g.getInteger(field, index))
      case PrimitiveTypeName.INT64 => json.numberNode(g.getLong(field, index))
      case PrimitiveTypeName.FLOAT => json.numberNode(g.getFloat(field, index))
      case PrimitiveTypeName.DOUBLE => json.numberNode(g.getDouble(field, index))
      case _ => json.textNode(g.getString(field, index))
    }
}
