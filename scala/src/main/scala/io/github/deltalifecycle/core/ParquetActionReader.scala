package io.github.deltalifecycle.core

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.JsonNode
import com.fasterxml.jackson.databind.node.{JsonNodeFactory, ObjectNode}
import org.apache.hadoop.fs.{FileStatus, FileSystem}
import org.apache.parquet.example.data.Group
import org.apache.parquet.example.data.simple.convert.GroupRecordConverter
import org.apache.parquet.{HadoopReadOptions, ParquetReadOptions}
import org.apache.parquet.filter2.compat.FilterCompat
import org.apache.parquet.filter2.predicate.{FilterApi, FilterPredicate}
import org.apache.parquet.hadoop.ParquetFileReader
import org.apache.parquet.hadoop.metadata.ParquetMetadata
import org.apache.parquet.hadoop.util.HadoopStreams
import org.apache.parquet.io.{ColumnIOFactory, InputFile, SeekableInputStream}
import org.apache.parquet.io.api.Binary
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

  /**
   * The actions in `file` restricted to the top-level `columns`, in row order. Rows where none of
   * `columns` is set are skipped, and so are row groups and pages where the file's statistics and
   * page indexes show no such row: reading a checkpoint's protocol and metadata does not assemble
   * one record per file of the table.
   */
  def read(fs: FileSystem, file: FileStatus, columns: Set[String]): Iterator[Action] = {
    val footer = ParquetFileReader.open(inputFile(fs, file), readOptions(fs).build())
    val fileSchema = footer.getFooter.getFileMetaData.getSchema
    val projected = project(fileSchema, columns)
    val presence = present(projected, columns)
    val reader = presence.fold(footer) { predicate =>
      footer.close()
      val options = readOptions(fs).withRecordFilter(FilterCompat.get(predicate))
        .useStatsFilter(true).useDictionaryFilter(true).useColumnIndexFilter(true).build()
      ParquetFileReader.open(inputFile(fs, file), options)
    }
    if (projected.getFieldCount == 0) {
      reader.close()
      return Iterator.empty
    }
    reader.setRequestedSchema(projected)
    val columnIO = new ColumnIOFactory().getColumnIO(projected)
    val rowFilter = presence.fold(FilterCompat.NOOP)(FilterCompat.get)

    new Iterator[Action] {
      private var rowsLeft = 0L
      private var recordReader: org.apache.parquet.io.RecordReader[Group] = _
      private var nextAction: Action = _
      private var closed = false

      private def advance(): Unit = {
        nextAction = null
        while (nextAction == null && !closed) {
          if (rowsLeft == 0) {
            val pages =
              if (presence.isDefined) reader.readNextFilteredRowGroup()
              else reader.readNextRowGroup()
            if (pages == null) {
              reader.close()
              closed = true
            } else {
              rowsLeft = pages.getRowCount
              recordReader =
                columnIO.getRecordReader(pages, new GroupRecordConverter(projected), rowFilter)
            }
          } else {
            rowsLeft -= 1
            val group = recordReader.read()
            if (group != null && !recordReader.shouldSkipCurrentRecord) {
              val row = rowToJson(group, projected)
              if (row.size() > 0) nextAction = ActionReader.toAction(row)
            }
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

  /** A field of each action that is set whenever the action is. */
  private val KeyFields = Map(
    "add" -> "path",
    "remove" -> "path",
    "metaData" -> "id",
    "protocol" -> "minReaderVersion",
    "txn" -> "appId",
    "domainMetadata" -> "domain",
    "checkpointMetadata" -> "version",
    "sidecar" -> "path"
  )

  /**
   * A filter keeping the rows where one of `columns` is set, built on the file's own types of their
   * key fields; none when a column has no key field Parquet can filter on.
   */
  private def present(schema: MessageType, columns: Set[String]): Option[FilterPredicate] = {
    val inFile = columns.filter(c => schema.containsField(c))
    val tests: Seq[Option[FilterPredicate]] = inFile.toSeq.map { c =>
      KeyFields.get(c).filter(k => schema.containsPath(Array(c, k))).flatMap { k =>
        val path = s"$c.$k"
        schema.getType(c, k).asPrimitiveType().getPrimitiveTypeName match {
          case PrimitiveTypeName.INT32 =>
            Some(FilterApi.notEq(FilterApi.intColumn(path), null: Integer))
          case PrimitiveTypeName.INT64 =>
            Some(FilterApi.notEq(FilterApi.longColumn(path), null: java.lang.Long))
          case PrimitiveTypeName.BINARY =>
            Some(FilterApi.notEq(FilterApi.binaryColumn(path), null: Binary))
          case _ => None
        }
      }
    }
    Option.when(tests.nonEmpty && tests.forall(_.isDefined))(
      tests.flatten.reduce[FilterPredicate](FilterApi.or(_, _))
    )
  }

  /** Fails unless `file` opens as Parquet (its footer reads). */
  def checkReadable(fs: FileSystem, file: FileStatus): Unit = footer(fs, file)

  /** The footer of the Parquet file `file`: its schema and its row groups' statistics. */
  def footer(fs: FileSystem, file: FileStatus): ParquetMetadata = {
    val reader = ParquetFileReader.open(inputFile(fs, file), readOptions(fs).build())
    try reader.getFooter
    finally reader.close()
  }

  /**
   * Options over the file system's own Hadoop configuration: parquet-hadoop's default builder loads
   * a new `Configuration` (every default resource parsed again), which cost a small table's
   * statement more than reading its checkpoint.
   */
  private def readOptions(fs: FileSystem): ParquetReadOptions.Builder =
    HadoopReadOptions.builder(fs.getConf)

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
