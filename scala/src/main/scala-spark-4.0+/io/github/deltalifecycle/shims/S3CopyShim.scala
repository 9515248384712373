package io.github.deltalifecycle.shims

import scala.jdk.CollectionConverters._

import io.github.deltalifecycle.features.redirect.S3CopyParts
import org.apache.hadoop.fs.{FileSystem, Path}
import org.apache.hadoop.fs.s3a.S3AFileSystem
import software.amazon.awssdk.awscore.exception.AwsServiceException
import software.amazon.awssdk.services.s3.S3Client
import software.amazon.awssdk.services.s3.model.{
  AbortMultipartUploadRequest,
  CompleteMultipartUploadRequest,
  CompletedMultipartUpload,
  CompletedPart,
  CopyObjectRequest,
  CreateMultipartUploadRequest,
  HeadObjectRequest,
  UploadPartCopyRequest
}

/**
 * The S3 requests of a server-side copy (Hadoop 3.4 and later: S3A on the AWS SDK v2), made with
 * the S3 client of an S3A file system instance, so its endpoint, credentials and per-bucket
 * settings apply. Only [[io.github.deltalifecycle.features.redirect.S3Copy]] calls this, and only
 * for `s3a://` file systems: nothing else loads hadoop-aws or the SDK.
 */
object S3CopyShim {

  def bucket(fs: FileSystem): String = s3a(fs).getBucket

  def key(fs: FileSystem, p: Path): String = s3a(fs).pathToKey(p)

  /** The size of `bucket/key` (a HEAD with `clientFs`'s client); None when there is none. */
  def length(clientFs: FileSystem, bucket: String, key: String): Option[Long] =
    try {
      val head = HeadObjectRequest.builder().bucket(bucket).key(key).build()
      Some(client(clientFs).headObject(head).contentLength().longValue)
    } catch { case e: AwsServiceException if e.statusCode() == 404 => None }

  /** One CopyObject request: the store copies the object (up to 5 GB) itself. */
  def copyObject(clientFs: FileSystem, from: (String, String), to: (String, String)): Unit =
    client(clientFs).copyObject(
      CopyObjectRequest.builder()
        .sourceBucket(from._1).sourceKey(from._2)
        .destinationBucket(to._1).destinationKey(to._2)
        .build()
    )

  /**
   * A multipart upload whose parts are UploadPartCopy requests of `partSize` bytes of the source;
   * the upload is aborted when a part fails, so no parts are left behind.
   */
  def copyParts(
      clientFs: FileSystem,
      from: (String, String),
      to: (String, String),
      length: Long,
      partSize: Long
  ): Unit = {
    val s3 = client(clientFs)
    val (bucket, key) = to
    val uploadId = s3.createMultipartUpload(
      CreateMultipartUploadRequest.builder().bucket(bucket).key(key).build()
    ).uploadId()
    try {
      val parts = S3CopyParts.ranges(length, partSize).map { case (number, first, last) =>
        val copied = s3.uploadPartCopy(
          UploadPartCopyRequest.builder()
            .sourceBucket(from._1).sourceKey(from._2)
            .destinationBucket(bucket).destinationKey(key)
            .uploadId(uploadId).partNumber(number)
            .copySourceRange(s"bytes=$first-$last")
            .build()
        )
        CompletedPart.builder().partNumber(number).eTag(copied.copyPartResult().eTag()).build()
      }
      s3.completeMultipartUpload(
        CompleteMultipartUploadRequest.builder().bucket(bucket).key(key).uploadId(uploadId)
          .multipartUpload(CompletedMultipartUpload.builder().parts(parts.asJava).build())
          .build()
      )
    } catch {
      case e: Throwable =>
        scala.util.Try(s3.abortMultipartUpload(
          AbortMultipartUploadRequest.builder().bucket(bucket).key(key).uploadId(uploadId).build()
        ))
        throw e
    }
  }

  /**
   * The store's answer when `e` is one: its error code and HTTP status (a refusal, such as
   * AccessDenied or NotImplemented); None for anything else (a network failure, a bug).
   */
  def storeError(e: Throwable): Option[String] = e match {
    case s: AwsServiceException =>
      val code = Option(s.awsErrorDetails()).flatMap(d => Option(d.errorCode())).getOrElse("")
      Some(s"$code (HTTP ${s.statusCode()}): ${s.getMessage}".trim)
    case _ => None
  }

  private def s3a(fs: FileSystem): S3AFileSystem = fs.asInstanceOf[S3AFileSystem]

  private def client(fs: FileSystem): S3Client =
    s3a(fs).getS3AInternals.getAmazonS3Client("delta-lifecycle server-side copy")
}
