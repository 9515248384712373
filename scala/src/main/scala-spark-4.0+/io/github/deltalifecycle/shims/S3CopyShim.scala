package io.github.deltalifecycle.shims

import scala.jdk.CollectionConverters._

import org.apache.hadoop.fs.FileSystem
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

/** The S3 requests of a server-side copy (Hadoop 3.4 and later: S3A on the AWS SDK v2). */
object S3CopyShim extends S3CopyRequests[S3Client, CompletedPart] {

  override protected def client(fs: S3AFileSystem): S3Client =
    fs.getS3AInternals.getAmazonS3Client(Purpose)

  override def length(clientFs: FileSystem, bucket: String, key: String): Option[Long] =
    try {
      val head = HeadObjectRequest.builder().bucket(bucket).key(key).build()
      Some(client(s3a(clientFs)).headObject(head).contentLength().longValue)
    } catch { case e: AwsServiceException if e.statusCode() == 404 => None }

  override def copyObject(clientFs: FileSystem, from: Location, to: Location): Unit =
    client(s3a(clientFs)).copyObject(
      CopyObjectRequest.builder()
        .sourceBucket(from._1).sourceKey(from._2)
        .destinationBucket(to._1).destinationKey(to._2)
        .build()
    )

  override def storeError(e: Throwable): Option[String] = e match {
    case s: AwsServiceException =>
      val code = Option(s.awsErrorDetails()).flatMap(d => Option(d.errorCode())).getOrElse("")
      Some(s"$code (HTTP ${s.statusCode()}): ${s.getMessage}".trim)
    case _ => None
  }

  override protected def startUpload(s3: S3Client, to: Location): String =
    s3.createMultipartUpload(
      CreateMultipartUploadRequest.builder().bucket(to._1).key(to._2).build()
    ).uploadId()

  override protected def copyPart(
      s3: S3Client,
      upload: Upload,
      part: (Int, Long, Long)
  ): CompletedPart = {
    val (number, first, last) = part
    val copied = s3.uploadPartCopy(
      UploadPartCopyRequest.builder()
        .sourceBucket(upload.from._1).sourceKey(upload.from._2)
        .destinationBucket(upload.to._1).destinationKey(upload.to._2)
        .uploadId(upload.id).partNumber(number)
        .copySourceRange(s"bytes=$first-$last")
        .build()
    )
    CompletedPart.builder().partNumber(number).eTag(copied.copyPartResult().eTag()).build()
  }

  override protected def completeUpload(
      s3: S3Client,
      upload: Upload,
      parts: Seq[CompletedPart]
  ): Unit = {
    s3.completeMultipartUpload(
      CompleteMultipartUploadRequest.builder()
        .bucket(upload.to._1).key(upload.to._2).uploadId(upload.id)
        .multipartUpload(CompletedMultipartUpload.builder().parts(parts.asJava).build())
        .build()
    )
    ()
  }

  override protected def abortUpload(s3: S3Client, upload: Upload): Unit = {
    s3.abortMultipartUpload(
      AbortMultipartUploadRequest.builder()
        .bucket(upload.to._1).key(upload.to._2).uploadId(upload.id)
        .build()
    )
    ()
  }
}
