package io.github.deltalifecycle.shims

import scala.collection.JavaConverters._

import com.amazonaws.AmazonServiceException
import com.amazonaws.services.s3.AmazonS3
import com.amazonaws.services.s3.model.{
  AbortMultipartUploadRequest,
  CompleteMultipartUploadRequest,
  CopyObjectRequest,
  CopyPartRequest,
  InitiateMultipartUploadRequest
}
import io.github.deltalifecycle.features.redirect.S3CopyParts
import org.apache.hadoop.fs.{FileSystem, Path}
import org.apache.hadoop.fs.s3a.S3AFileSystem

/**
 * The S3 requests of a server-side copy on Hadoop 3.3 (Spark 3.5: S3A on the AWS SDK v1), made
 * with the S3 client of an S3A file system instance, so its endpoint, credentials and per-bucket
 * settings apply. Hadoop 3.3's S3A hands its client out only through `getAmazonS3ClientForTesting`
 * (public; the name is S3A's); Hadoop 3.4 has `getS3AInternals` for it. Only
 * [[io.github.deltalifecycle.features.redirect.S3Copy]] calls this, and only for `s3a://` file
 * systems: nothing else loads hadoop-aws or the SDK.
 */
object S3CopyShim {

  def bucket(fs: FileSystem): String = s3a(fs).getBucket

  def key(fs: FileSystem, p: Path): String = s3a(fs).pathToKey(p)

  /** The size of `bucket/key` (a HEAD with `clientFs`'s client); None when there is none. */
  def length(clientFs: FileSystem, bucket: String, key: String): Option[Long] =
    try Some(client(clientFs).getObjectMetadata(bucket, key).getContentLength)
    catch { case e: AmazonServiceException if e.getStatusCode == 404 => None }

  /** One CopyObject request: the store copies the object (up to 5 GB) itself. */
  def copyObject(clientFs: FileSystem, from: (String, String), to: (String, String)): Unit = {
    client(clientFs).copyObject(new CopyObjectRequest(from._1, from._2, to._1, to._2))
    ()
  }

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
    val uploadId =
      s3.initiateMultipartUpload(new InitiateMultipartUploadRequest(bucket, key)).getUploadId
    try {
      val parts = S3CopyParts.ranges(length, partSize).map { case (number, first, last) =>
        s3.copyPart(
          new CopyPartRequest()
            .withSourceBucketName(from._1).withSourceKey(from._2)
            .withDestinationBucketName(bucket).withDestinationKey(key)
            .withUploadId(uploadId).withPartNumber(number)
            .withFirstByte(first).withLastByte(last)
        ).getPartETag
      }
      s3.completeMultipartUpload(
        new CompleteMultipartUploadRequest(bucket, key, uploadId, parts.asJava)
      )
      ()
    } catch {
      case e: Throwable =>
        scala.util.Try(s3.abortMultipartUpload(
          new AbortMultipartUploadRequest(bucket, key, uploadId)
        ))
        throw e
    }
  }

  /**
   * The store's answer when `e` is one: its error code and HTTP status (a refusal, such as
   * AccessDenied or NotImplemented); None for anything else (a network failure, a bug).
   */
  def storeError(e: Throwable): Option[String] = e match {
    case s: AmazonServiceException =>
      Some(s"${Option(s.getErrorCode).getOrElse("")} (HTTP ${s.getStatusCode}): ${s.getMessage}")
    case _ => None
  }

  private def s3a(fs: FileSystem): S3AFileSystem = fs.asInstanceOf[S3AFileSystem]

  private def client(fs: FileSystem): AmazonS3 = s3a(fs).getAmazonS3ClientForTesting(
    "delta-lifecycle server-side copy"
  )
}
