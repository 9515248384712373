package io.github.deltalifecycle.features.redirect

import io.github.deltalifecycle.core.{
  ClientSupport,
  FaultInjection,
  LifecycleErrors,
  Locations,
  LogCommitter,
  LogFiles,
  Progress,
  TableLog
}
import org.apache.hadoop.fs.{FileStatus, Path}
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.delta.storage.LogStore

/**
 * Where SET REDIRECT points: a location, or a table in the session catalog (created by the
 * command).
 */
sealed trait RedirectTarget
object RedirectTarget {
  final case class ToLocation(uri: String) extends RedirectTarget

  /**
   * `qualifiedName` is db.table as SQL text, a part quoted when it must be (`` `my.db`.t ``);
   * `location` is where the new catalog table's files go.
   */
  final case class ToTable(qualifiedName: String, location: String, exists: Boolean)
      extends RedirectTarget
}

/**
 * The RFC's enable procedure: NORMAL -> ENABLE-REDIRECT-IN-PROGRESS on the source; copy the data
 * files and the log up to the version before that commit, so the destination is a plain table any
 * Delta client reads on its own; verify; register the catalog table when the target is one;
 * ENABLE-REDIRECT-IN-PROGRESS -> READY. Every step can be re-run: a second SET REDIRECT with the
 * same target resumes an interrupted one, and UNSET REDIRECT cancels it.
 */
final class SetRedirect(
    spark: SparkSession,
    ctx: RoutingContext,
    sourcePath: Path,
    displayName: String,
    copyThreads: Int
) {
  private lazy val store = LogStore(spark)
  private val log = TableLog.forPath(ctx.hadoopConf, sourcePath)

  def run(
      target: RedirectTarget,
      mode: RedirectMode,
      rules: Seq[NoRedirectRule]
  ): RedirectResult = {
    val progress = new Progress(spark, s"SET REDIRECT on $displayName", 4)
    val commits = Vector.newBuilder[Long]
    val steps = Vector.newBuilder[String]
    val spec = target match {
      case RedirectTarget.ToLocation(uri) => RedirectSpec.Location(qualify(uri))
      case RedirectTarget.ToTable(name, location, _) =>
        RedirectSpec.Table(name, Some(qualify(location)))
    }
    val destPath = new Path(spec match {
      case RedirectSpec.Location(uri) => uri
      case RedirectSpec.Table(_, location) => location.get
    })
    val redirectType = spec match {
      case _: RedirectSpec.Location => RedirectConfig.ObjectStoreType
      case _: RedirectSpec.Table => RedirectConfig.SessionCatalogType
    }
    // Enabling is stored under the writer-only feature whatever the mode: the source stays
    // readable by every client while writes are blocked. READY takes on the requested mode.
    val wanted = RedirectConfig(
      mode,
      redirectType,
      RedirectState.EnableInProgress,
      spec,
      rules
    ).storedAs(RedirectMode.WriterOnly)

    progress.start("enter ENABLE-REDIRECT-IN-PROGRESS")
    var info = fresh()
    info.config match {
      case None =>
        // Copying and re-protocolling a table is safe only if every feature it uses is understood.
        if (!ClientSupport.isSupported(info.protocol))
          throw LifecycleErrors.unsupportedProtocol(
            info.version,
            ClientSupport.unsupportedFeatures(info.protocol),
            "redirect the table"
          )
        checkTarget(target, destPath)
        val enable = Seq(
          RedirectProtocol.withFeature(info.protocol, RedirectMode.WriterOnly),
          RedirectProtocol.withProperty(info.metadata, wanted)
        )
        val version = LogCommitter.commitRebasing(
          log,
          store,
          info.version,
          "SET REDIRECT",
          Map("state" -> wanted.state.name, "destination" -> spec.describe, "mode" -> mode.sqlName)
        )(_ => enable)
        commits += version
        steps += s"committed version $version: NORMAL -> ${wanted.state.name}"
        info = fresh()
      case Some(c) if c.isDestinationMarker =>
        throw LifecycleErrors.redirectState(
          displayName,
          "this table is the destination of a redirect that is being dropped; it cannot be redirected itself"
        )
      case Some(c)
          if sameTarget(c, spec) && c.targetMode == mode &&
            c.state == RedirectState.EnableInProgress =>
        steps +=
          s"resuming: the redirect to ${spec.describe} is already ENABLE-REDIRECT-IN-PROGRESS"
      case Some(c) if sameTarget(c, spec) && c.mode == mode && c.state == RedirectState.Ready =>
        progress.done()
        return RedirectResult.describe(displayName, info).copy(steps =
          Seq(s"already READY to ${spec.describe}; nothing to do")
        )
      case Some(c) =>
        throw LifecycleErrors.redirectState(
          displayName,
          s"it already has a redirect (${c.mode.sqlName}) to ${c.spec.describe} in state ${c.state.name}. " +
            (if (c.state == RedirectState.EnableInProgress)
               s"Run SET REDIRECT to ${c.spec.describe} again to finish it, or UNSET REDIRECT to cancel it."
             else "Run UNSET REDIRECT first.")
        )
    }
    FaultInjection.step("setRedirect.afterEnable")

    progress.start(s"copy the table to $destPath")
    val copiedUpTo = RedirectLookup.versionBeforeRedirect(ctx.hadoopConf, info)
    val copy = new TableCopy(ctx.hadoopConf, progress, copyThreads)
    val dataStats = copy.copy(sourcePath, destPath, copy.dataFiles(sourcePath), "data files")
    FaultInjection.step("setRedirect.afterDataCopy")
    val logStats = copy.copy(sourcePath, destPath, logFilesUpTo(copiedUpTo), "log files")
    verifyDestination(destPath, copiedUpTo)
    steps +=
      s"copied ${dataStats.filesCopied} data files (${dataStats.bytesCopied} bytes) and ${logStats.filesCopied} log files " +
        s"up to version $copiedUpTo; ${dataStats.filesAlreadyThere + logStats.filesAlreadyThere} were already there"
    FaultInjection.step("setRedirect.afterCopy")

    progress.start("register the destination")
    target match {
      case RedirectTarget.ToTable(name, _, _) if !catalogHas(name) =>
        spark.sql(
          s"CREATE TABLE IF NOT EXISTS $name USING delta LOCATION '${escape(destPath.toString)}'"
        )
        steps += s"registered $name at $destPath"
      case _ =>
    }

    progress.start("enter READY")
    val ready = wanted.withState(RedirectState.Ready).storedAs(mode)
    val readyProtocol =
      RedirectProtocol.withFeature(RedirectProtocol.withoutFeatures(info.protocol), mode)
    val readyVersion = LogCommitter.commit(
      log,
      store,
      info.version,
      Seq(readyProtocol, RedirectProtocol.withProperty(info.metadata, ready)),
      "SET REDIRECT",
      Map("state" -> ready.state.name, "destination" -> spec.describe, "mode" -> mode.sqlName)
    )
    commits += readyVersion
    steps += s"committed version $readyVersion: ENABLE-REDIRECT-IN-PROGRESS -> READY"
    progress.done()
    RedirectResult.describe(displayName, fresh()).copy(
      filesCopied = dataStats.filesCopied + logStats.filesCopied,
      bytesCopied = dataStats.bytesCopied + logStats.bytesCopied,
      commitVersions = commits.result(),
      steps = steps.result()
    )
  }

  private def fresh(): RedirectInfo =
    RedirectLookup.read(
      ctx.hadoopConf,
      sourcePath
    ).getOrElse(throw LifecycleErrors.notADeltaTable(sourcePath.toString, "there is no Delta log"))

  private def qualify(location: String): String =
    Locations.qualify(location, ctx.hadoopConf) { reason =>
      LifecycleErrors.invalidArgument(
        s"The redirect target '$location' is not a location this session can use ($reason). " +
          "Give an absolute path or a URI with a scheme Hadoop knows, such as file:/..., s3a://... or abfss://..."
      )
    }.toString

  private def sameTarget(c: RedirectConfig, spec: RedirectSpec): Boolean = (c.spec, spec) match {
    case (RedirectSpec.Location(a), RedirectSpec.Location(b)) =>
      RedirectRouting.sameLocation(ctx, a, b)
    case (RedirectSpec.Table(a, _), RedirectSpec.Table(b, _)) => a.equalsIgnoreCase(b)
    case _ => false
  }

  /**
   * The checks made before anything is written: allowed, not overlapping the source, absent or
   * empty.
   */
  private def checkTarget(target: RedirectTarget, dest: Path): Unit = {
    RedirectRouting.checkAllowed(ctx, dest.toString)
    val src = log.tablePath.toString.stripSuffix("/") + "/"
    val dst = dest.toString.stripSuffix("/") + "/"
    if (src.startsWith(dst) || dst.startsWith(src)) {
      throw LifecycleErrors.redirectDestinationNotEmpty(
        dest.toString,
        "it is the source table's location, or inside or around it"
      )
    }
    target match {
      case RedirectTarget.ToTable(name, _, true) =>
        throw LifecycleErrors.redirectDestinationNotEmpty(
          name,
          "the table already exists in the catalog"
        )
      case _ =>
    }
    val fs = dest.getFileSystem(ctx.hadoopConf)
    if (fs.exists(dest)) {
      val status = fs.getFileStatus(dest)
      if (!status.isDirectory)
        throw LifecycleErrors.redirectDestinationNotEmpty(dest.toString, "it is a file")
      val entries = fs.listStatus(dest)
      if (entries.nonEmpty) {
        val what = if (entries.exists(_.getPath.getName == LogFiles.LogDirName))
          "it holds a Delta table"
        else s"it holds ${entries.length} entries"
        throw LifecycleErrors.redirectDestinationNotEmpty(dest.toString, what)
      }
    }
  }

  /** The log files a reader of versions up to `version` may use, and none written after it. */
  private def logFilesUpTo(version: Long): Seq[FileStatus] = {
    val listing = log.listing()
    val commits = listing.commits.filter(_.version <= version).map(_.status)
    val checksums = listing.checksums.values.filter(_.version <= version).map(_.status)
    val compactions = listing.compactions.filter(_.end <= version).map(_.status)
    val checkpoints =
      listing.checkpoints.filter(_.version <= version).flatMap(_.files.map(_.status))
    val fs = log.fs
    val sidecarDir = new Path(log.logPath, LogFiles.SidecarDirName)
    val sidecars =
      if (fs.exists(sidecarDir)) fs.listStatus(sidecarDir).toSeq.filter(_.isFile) else Nil
    val lastCheckpoint =
      scala.util.Try(fs.getFileStatus(new Path(log.logPath, "_last_checkpoint"))).toOption
        .filter(_ => listing.checkpoints.exists(_.version <= version))
    commits ++ checksums ++ compactions ++ checkpoints ++ sidecars ++ lastCheckpoint
  }

  /**
   * The destination must be a Delta table at exactly the copied version, readable by this client's
   * log core.
   */
  private def verifyDestination(dest: Path, version: Long): Unit = {
    val destLog = TableLog.forPath(ctx.hadoopConf, dest)
    val listing = destLog.listing()
    if (listing.latestVersion != version) {
      throw LifecycleErrors.redirectCopyMismatch(
        s"the destination's latest version is ${listing.latestVersion}, expected $version"
      )
    }
    val (destProtocol, destMetadata) = destLog.protocolAndMetadataAt(version, listing)
    val (srcProtocol, srcMetadata) = log.protocolAndMetadataAt(version, log.listing())
    if (destProtocol != srcProtocol || destMetadata.id != srcMetadata.id) {
      throw LifecycleErrors.redirectCopyMismatch(
        "the destination's protocol or table id differs from the source's"
      )
    }
  }

  private def catalogHas(name: String): Boolean = spark.catalog.tableExists(name)

  private def escape(s: String): String = s.replace("\\", "\\\\").replace("'", "\\'")
}
