package io.github.deltalifecycle.shims

import scala.util.Try

import io.github.deltalifecycle.features.redirect.S3CopyParts
import org.apache.hadoop.fs.{FileSystem, Path}
import org.apache.hadoop.fs.s3a.S3AFileSystem

/**
 * The S3 requests of a server-side copy, made with the S3 client of an S3A file system instance, so
 * its endpoint, credentials and per-bucket settings apply. What every Hadoop line shares is here;
 * each line's `S3CopyShim` makes the requests with the AWS SDK its S3A is built on. Only
 * [[io.github.deltalifecycle.features.redirect.S3Copy]] calls this, and only for `s3a://` file
 * systems: nothing else loads hadoop-aws or the SDK.
 */
private[deltalifecycle] abstract class S3CopyRequests[Client, CopiedPart] {

  /** An object of a bucket. */
  type Location = (String, String)

  /** The multipart upload `id` that copies `from` to `to` part by part. */
  protected case class Upload(from: Location, to: Location, id: String)

  protected def client(fs: S3AFileSystem): Client

  /** The size of `bucket/key` (a HEAD with `clientFs`'s client); None when there is none. */
  def length(clientFs: FileSystem, bucket: String, key: String): Option[Long]

  /** One CopyObject request: the store copies the object (up to 5 GB) itself. */
  def copyObject(clientFs: FileSystem, from: Location, to: Location): Unit

  /**
   * The store's answer when `e` is one: its error code and HTTP status (a refusal, such as
   * AccessDenied or NotImplemented); None for anything else (a network failure, a bug).
   */
  def storeError(e: Throwable): Option[String]

  /** Starts a multipart upload to `to`: its id. */
  protected def startUpload(s3: Client, to: Location): String

  /** Copies `part` (its number, first and last byte) of the source as that part of `upload`. */
  protected def copyPart(s3: Client, upload: Upload, part: (Int, Long, Long)): CopiedPart

  protected def completeUpload(s3: Client, upload: Upload, parts: Seq[CopiedPart]): Unit

  protected def abortUpload(s3: Client, upload: Upload): Unit

  def bucket(fs: FileSystem): String = s3a(fs).getBucket

  def key(fs: FileSystem, p: Path): String = s3a(fs).pathToKey(p)

  /**
   * A multipart upload whose parts are UploadPartCopy requests of `partSize` bytes of the source;
   * the upload is aborted when a part fails, so no parts are left behind.
   */
  def copyParts(
      clientFs: FileSystem,
      from: Location,
      to: Location,
      length: Long,
      partSize: Long
  ): Unit = {
    val s3 = client(s3a(clientFs))
    val upload = Upload(from, to, startUpload(s3, to))
    try {
      val parts = S3CopyParts.ranges(length, partSize).map(copyPart(s3, upload, _))
      completeUpload(s3, upload, parts)
    } catch {
      case e: Throwable =>
        Try(abortUpload(s3, upload))
        throw e
    }
  }

  protected def s3a(fs: FileSystem): S3AFileSystem = fs.asInstanceOf[S3AFileSystem]

  /** The name S3A's client is handed out under. */
  protected val Purpose = "delta-lifecycle server-side copy"
}
