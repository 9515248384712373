package io.github.deltalifecycle.core

import java.io.{BufferedReader, InputStreamReader}
import java.nio.charset.StandardCharsets

import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.JsonNode
import org.apache.hadoop.fs.{FileStatus, FileSystem, Path}
import org.apache.spark.sql.delta.actions.{Action, SingleAction}
import org.apache.spark.sql.delta.util.JsonUtils

/**
 * Reads the newline-delimited JSON files of the log (commits, compactions, V2 checkpoint manifests)
 * into delta-spark's own action classes, with delta-spark's Jackson mapper.
 */
object ActionReader {

  /** All actions of a JSON log file, in file order. Unknown action types are skipped. */
  def readJson(fs: FileSystem, file: FileStatus): Vector[Action] =
    readJsonLines(fs, file.getPath)(line =>
      Option(JsonUtils.mapper.readValue(line, classOf[SingleAction]).unwrap)
    )

  /**
   * Every line of a JSON log file with its action type (its top-level key) and, for the action
   * types delta-spark knows, the bound action. Writers that copy actions keep the line itself, so
   * fields delta-spark's classes do not model survive the copy.
   */
  def readJsonLinesWithActions(fs: FileSystem, file: FileStatus): Vector[LogLine] =
    readJsonLines(fs, file.getPath) { line =>
      val node = JsonUtils.mapper.readTree(line)
      Some(LogLine(firstKey(node).getOrElse(""), Option(toAction(node)), line))
    }

  /**
   * Only the actions whose top-level key is in `keys`; other lines are parsed to a tree but never
   * bound to action classes, which keeps history scans cheap on large commits.
   */
  def readJsonSelected(fs: FileSystem, file: FileStatus, keys: Set[String]): Vector[Action] =
    readJsonSelected(fs, file.getPath, keys)

  /** [[readJsonSelected]] by path, for a file whose status is not at hand. */
  def readJsonSelected(fs: FileSystem, file: Path, keys: Set[String]): Vector[Action] =
    readJsonLines(fs, file) { line =>
      val node = JsonUtils.mapper.readTree(line)
      if (firstKey(node).exists(keys.contains)) Option(toAction(node)) else None
    }

  /** Binds a JSON tree (from a commit line or a Parquet row) to a delta-spark action. */
  def toAction(node: JsonNode): Action =
    JsonUtils.mapper.treeToValue(node, classOf[SingleAction]).unwrap

  /** The action type of a log line: its first (and only) top-level key. */
  private def firstKey(node: JsonNode): Option[String] = {
    val names = node.fieldNames()
    if (names.hasNext) Some(names.next()) else None
  }

  private def readJsonLines[A](fs: FileSystem, file: Path)(
      parse: String => Option[A]
  ): Vector[A] = {
    val out = Vector.newBuilder[A]
    val reader =
      new BufferedReader(new InputStreamReader(fs.open(file), StandardCharsets.UTF_8))
    try {
      var lineNo = 0
      var line = reader.readLine()
      while (line != null) {
        lineNo += 1
        if (!line.isBlank) {
          try parse(line).foreach(out += _)
          catch {
            case NonFatal(e) =>
              val detail = e.getMessage.takeWhile(_ != '\n')
              // delta-spark's Protocol refuses inconsistent versions and feature lists when
              // it is constructed; that is an invalid protocol, not an unreadable file.
              if (
                scala.util.Try(JsonUtils.mapper.readTree(line)).toOption.flatMap(firstKey).contains(
                  "protocol"
                )
              ) {
                throw LogErrors.invalidProtocolIn(file.toString, detail)
              }
              throw ErrorConditions.corruptLog(
                file = file.toString,
                reason = s"line $lineNo is not a valid Delta action ($detail)",
                cause = e
              )
          }
        }
        line = reader.readLine()
      }
    } finally reader.close()
    out.result()
  }
}

/** One line of a JSON log file: its action type, the bound action if known, and the text. */
final case class LogLine(actionType: String, action: Option[Action], text: String)
