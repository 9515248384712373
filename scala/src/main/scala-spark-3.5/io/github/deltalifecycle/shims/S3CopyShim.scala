package io.github.deltalifecycle.shims

import scala.collection.JavaConverters._

import com.amazonaws.AmazonServiceException
import com.amazonaws.services.s3.AmazonS3
import com.amazonaws.services.s3.model._
import org.apache.hadoop.fs.FileSystem
import org.apache.hadoop.fs.s3a.S3AFileSystem

/**
 * The S3 requests of a server-side copy on Hadoop 3.3 (Spark 3.5: S3A on the AWS SDK v1). Hadoop
 * 3.3's S3A hands its client out only through `getAmazonS3ClientForTesting` (public; the name is
 * S3A's); Hadoop 3.4 has `getS3AInternals` for it.
 */
object S3CopyShim extends S3CopyRequests[AmazonS3, PartETag] {

  override protected def client(fs: S3AFileSystem): AmazonS3 =
    fs.getAmazonS3ClientForTesting(Purpose)

  override def length(clientFs: FileSystem, bucket: String, key: String): Option[Long] =
    try Some(client(s3a(clientFs)).getObjectMetadata(bucket, key).getContentLength)
    catch { case e: AmazonServiceException if e.getStatusCode == 404 => None }

  override def copyObject(clientFs: FileSystem, from: Location, to: Location): Unit = {
    client(s3a(clientFs)).copyObject(new CopyObjectRequest(from._1, from._2, to._1, to._2))
    ()
  }

  override def storeError(e: Throwable): Option[String] = e match {
    case s: AmazonServiceException =>
      Some(s"${Option(s.getErrorCode).getOrElse("")} (HTTP ${s.getStatusCode}): ${s.getMessage}")
    case _ => None
  }

  override protected def startUpload(s3: AmazonS3, to: Location): String =
    s3.initiateMultipartUpload(new InitiateMultipartUploadRequest(to._1, to._2)).getUploadId

  override protected def copyPart(s3: AmazonS3, upload: Upload, part: (Int, Long, Long)): PartETag =
    s3.copyPart(
      new CopyPartRequest()
        .withSourceBucketName(upload.from._1).withSourceKey(upload.from._2)
        .withDestinationBucketName(upload.to._1).withDestinationKey(upload.to._2)
        .withUploadId(upload.id).withPartNumber(part._1)
        .withFirstByte(part._2).withLastByte(part._3)
    ).getPartETag

  override protected def completeUpload(
      s3: AmazonS3,
      upload: Upload,
      parts: Seq[PartETag]
  ): Unit = {
    val Upload(_, (bucket, key), id) = upload
    s3.completeMultipartUpload(new CompleteMultipartUploadRequest(bucket, key, id, parts.asJava))
    ()
  }

  override protected def abortUpload(s3: AmazonS3, upload: Upload): Unit =
    s3.abortMultipartUpload(new AbortMultipartUploadRequest(upload.to._1, upload.to._2, upload.id))
}
