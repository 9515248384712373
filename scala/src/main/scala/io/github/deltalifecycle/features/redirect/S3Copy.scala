package io.github.deltalifecycle.features.redirect

import java.util.Locale

import scala.util.Try
import scala.util.control.NonFatal

import io.github.deltalifecycle.shims.S3CopyShim
import org.apache.hadoop.fs.{FileSystem, Path}

/**
 * Server-side copies between `s3a://` locations: the store copies each object itself, CopyObject up
 * to 5 GB and a multipart upload of UploadPartCopy requests beyond, so no data byte passes through
 * an executor. The requests go through the S3 client of the destination's S3A file system
 * (`S3CopyShim`, per Spark line), so S3A's own settings (endpoint, path style, credential
 * providers, per-bucket options) apply; nothing here builds a client or reads credentials.
 *
 * Nothing in this object touches hadoop-aws or the AWS SDK until [[isS3A]] holds for both file
 * systems, so the jar works where hadoop-aws is absent.
 */
private[redirect] object S3Copy {

  /** CopyObject's limit: larger objects are copied in parts. */
  val MaxSingleCopyBytes: Long = 5L << 30

  /** A multipart upload holds at most this many parts. */
  private val MaxParts = 10000

  private val S3AFileSystemClass = "org.apache.hadoop.fs.s3a.S3AFileSystem"
  private val RequesterPays = "fs.s3a.requester.pays.enabled"

  /**
   * S3A settings that S3A applies to each object it writes but that a bare CopyObject would not
   * carry (encryption, ACL, storage class, checksums, requester pays): with any of them set, the
   * copy goes through streams, so the destination's objects are written the way S3A writes them.
   */
  private val SettingsNotCarried = Seq(
    "fs.s3a.encryption.algorithm",
    "fs.s3a.server-side-encryption-algorithm",
    "fs.s3a.encryption.key",
    "fs.s3a.acl.default",
    "fs.s3a.create.storage.class",
    "fs.s3a.create.checksum.algorithm",
    RequesterPays
  )

  /**
   * When a server-side copy goes in parts, and their size. `singleCopyMaxBytes` is CopyObject's
   * limit except in tests, which lower it to copy small objects in parts.
   */
  final case class Limits(singleCopyMaxBytes: Long, testPartBytes: Option[Long])

  object Limits {
    val Default: Limits = Limits(MaxSingleCopyBytes, None)
  }

  def isS3A(fs: FileSystem): Boolean =
    Iterator.iterate[Class[_]](fs.getClass)(_.getSuperclass).takeWhile(_ != null)
      .exists(_.getName == S3AFileSystemClass)

  /**
   * Why the store cannot copy from `fromFs` to `toFs` itself, or None when it can: the two are
   * different stores, a setting the copy would not carry is set, or the destination's client cannot
   * read `probe` (an object of the source; one HEAD request).
   */
  def refusal(fromFs: FileSystem, toFs: FileSystem, probe: Path): Option[String] =
    differentStores(fromFs, toFs)
      .orElse(settingNotCarried(fromFs).orElse(settingNotCarried(toFs)))
      .orElse(cannotRead(toFs, fromFs, probe))

  /** The size of the object at `p` (one HEAD request), or None when it is not there. */
  def length(fs: FileSystem, p: Path): Option[Long] =
    Try(S3CopyShim.length(fs, S3CopyShim.bucket(fs), S3CopyShim.key(fs, p))).toOption.flatten

  /**
   * The store copies `from` to `to` (`length` bytes): Refused when it answers with an error other
   * than a missing source (access denied, not implemented); other failures are thrown, so Spark
   * retries the task.
   */
  def copy(
      fromFs: FileSystem,
      from: Path,
      toFs: FileSystem,
      to: Path,
      length: Long,
      limits: Limits
  ): FileCopy.Outcome = {
    val source = (S3CopyShim.bucket(fromFs), S3CopyShim.key(fromFs, from))
    val target = (S3CopyShim.bucket(toFs), S3CopyShim.key(toFs, to))
    try {
      if (length <= limits.singleCopyMaxBytes) S3CopyShim.copyObject(toFs, source, target)
      else S3CopyShim.copyParts(toFs, source, target, length, partBytes(toFs, length, limits))
      FileCopy.Copied(0L)
    } catch {
      case NonFatal(e) =>
        S3CopyShim.storeError(e) match {
          case Some(_) if !fromFs.exists(from) => FileCopy.SourceMissing
          case Some(answer) => FileCopy.Refused(answer)
          case None => throw e
        }
    }
  }

  /**
   * The part size of a multipart copy: S3A's `fs.s3a.multipart.size` of the destination, raised so
   * the parts fit the 10,000 a multipart upload may have, at most CopyObject's 5 GB.
   */
  private def partBytes(toFs: FileSystem, length: Long, limits: Limits): Long =
    limits.testPartBytes.getOrElse {
      val configured = toFs.getConf.getLongBytes("fs.s3a.multipart.size", 64L << 20)
      math.min(MaxSingleCopyBytes, math.max(configured, (length + MaxParts - 1) / MaxParts))
    }

  private def differentStores(fromFs: FileSystem, toFs: FileSystem): Option[String] = {
    val (a, b) = (endpoint(fromFs), endpoint(toFs))
    if (a == b || (isAws(a) && isAws(b))) None
    else {
      def shown(e: String) = if (e.isEmpty) "AWS S3" else e
      Some(
        s"the source and the destination are in different stores (endpoints ${shown(a)} and " +
          s"${shown(b)})"
      )
    }
  }

  /** S3A's endpoint for the file system's bucket (its per-bucket settings already applied). */
  private def endpoint(fs: FileSystem): String =
    fs.getConf.getTrimmed("fs.s3a.endpoint", "").toLowerCase(Locale.ROOT)
      .replaceFirst("^https?://", "").stripSuffix("/")

  /** AWS S3 itself: no endpoint (S3A's default) or one of AWS's; it copies across regions. */
  private def isAws(endpoint: String): Boolean =
    endpoint.isEmpty || endpoint.endsWith(".amazonaws.com") ||
      endpoint.endsWith(".amazonaws.com.cn")

  private def settingNotCarried(fs: FileSystem): Option[String] = {
    val conf = fs.getConf
    def set(key: String): Boolean =
      if (key == RequesterPays) conf.getBoolean(key, false) else conf.getTrimmed(key, "").nonEmpty
    SettingsNotCarried.find(set).map(key =>
      s"$key is set for s3a://${S3CopyShim.bucket(fs)}; a server-side copy would not apply it"
    )
  }

  private def cannotRead(clientFs: FileSystem, sourceFs: FileSystem, probe: Path)
      : Option[String] = {
    val answer =
      try {
        S3CopyShim.length(clientFs, S3CopyShim.bucket(sourceFs), S3CopyShim.key(sourceFs, probe))
          .fold(Option("it is not there"))(_ => None)
      } catch { case NonFatal(e) => Some(S3CopyShim.storeError(e).getOrElse(e.toString)) }
    answer.map(a =>
      s"the destination's S3 client (s3a://${S3CopyShim.bucket(clientFs)}) cannot read " +
        s"the source's $probe: $a"
    )
  }
}

/** The byte ranges of a multipart copy. */
private[deltalifecycle] object S3CopyParts {

  /** (part number from 1, first byte, last byte) for each part of `partBytes` of `length`. */
  def ranges(length: Long, partBytes: Long): Seq[(Int, Long, Long)] = {
    require(length > 0 && partBytes > 0, s"length $length, part size $partBytes")
    val parts = ((length + partBytes - 1) / partBytes).toInt
    (0 until parts).map { i =>
      val first = i * partBytes
      (i + 1, first, math.min(length, first + partBytes) - 1)
    }
  }
}
