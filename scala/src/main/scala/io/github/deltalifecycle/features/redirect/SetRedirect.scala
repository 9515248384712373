package io.github.deltalifecycle.features.redirect

import io.github.deltalifecycle.core.{
  ClientSupport,
  DeltaLifecycleException,
  FaultInjection,
  LifecycleErrors,
  Locations,
  LogCommitter,
  LogFiles,
  Progress,
  TableLog,
  TableName
}
import io.github.deltalifecycle.shims.CatalogShim
import org.apache.hadoop.fs.{FileStatus, Path}
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.catalog.{Identifier, TableCatalog}
import org.apache.spark.sql.deltalifecycle.SparkInternals
import org.apache.spark.sql.delta.util.FileNames

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
    displayName: String
) {
  private val log = TableLog.forPath(ctx.hadoopConf, sourcePath)
  // Spark's name for its session catalog (CatalogManager's constant is private to Spark).
  private val SessionCatalogName = "spark_catalog"
  // One SetRedirect per command: the report collects what this run does.
  private val report = new ProcedureReport
  // A fault-injection step inside a copy task, after its first copied file (tests only).
  private val MidDataCopyStep = "setRedirect.midDataCopy"

  def run(
      target: RedirectTarget,
      mode: RedirectMode,
      rules: Seq[NoRedirectRule]
  ): RedirectResult = {
    val spec = specOf(target)
    val destPath = RedirectRouting.destinationPath(ctx, displayName, spec)
    val enabling = enablingConfig(spec, mode, rules)
    val current = fresh()
    current.requireDirectCommits(displayName, "redirect")
    if (current.config.exists(isReady(_, enabling))) return nothingToDo(current, spec)
    requireDirectCommitsAt(destPath)

    val total = Progress.run(spark, s"SET REDIRECT on $displayName", 5) { progress =>
      progress.start(s"pre-copy the table to $destPath while it accepts writes")
      val preCopied = preCopy(current, target, destPath, progress)
      FaultInjection.step("setRedirect.afterPreCopy")

      progress.start("enter ENABLE-REDIRECT-IN-PROGRESS")
      val enabled = enable(current, target, destPath, enabling)
      FaultInjection.step("setRedirect.afterEnable")

      progress.start(s"copy what the table committed since to $destPath")
      val copied = copyTable(enabled, destPath, progress, preCopied.map(_._1))
      val copiedInAll = preCopied.fold(copied)(p => p._2 + copied)
      FaultInjection.step("setRedirect.afterCopy")

      progress.start("register the destination")
      register(target, destPath)

      progress.start("enter READY")
      enterReady(enabled, enabling)
      copiedInAll
    }
    report.result(describe(fresh()), total)
  }

  /**
   * DRY RUN: what [[run]] would do, writing nothing in either location. The checks run as the
   * statement runs them, and the ones that fail are reported instead of raised; the copy is
   * forecast by the Spark jobs that would list its files, with one look-up per file at the
   * destination (files already there are not copied again).
   */
  def plan(target: RedirectTarget, mode: RedirectMode, rules: Seq[NoRedirectRule]): RedirectPlan = {
    val spec = specOf(target)
    val destPath = RedirectRouting.destinationPath(ctx, displayName, spec)
    val enabling = enablingConfig(spec, mode, rules)
    val current = fresh()
    val refusals = new RefusalCollector
    refusals.check(current.requireDirectCommits(displayName, "redirect"))
    def planned(steps: Seq[String]) =
      RedirectPlan.of(ctx, displayName, current, Some(spec), refusals.result, steps)
    if (current.config.exists(isReady(_, enabling)))
      return planned(Seq(s"already READY to ${spec.describe}; nothing to do"))
    refusals.check(requireDirectCommitsAt(destPath))
    val resuming = resumes(current, enabling).fold(e => { refusals.add(e); false }, identity)
    if (!resuming) {
      refusals.check(checkSupported(current))
      refusals.check(checkTarget(target, destPath))
    }
    val upTo =
      if (resuming) RedirectLookup.versionBeforeRedirect(ctx.hadoopConf, current)
      else current.version
    Progress.run(spark, s"SET REDIRECT DRY RUN on $displayName", 2) { progress =>
      val copy = tableCopy(current.metadata.id, progress)
      progress.start(s"list the data files of versions up to $upTo, and look them up at $destPath")
      val data = copy.forecastReferenced(log.tablePath, destPath, log.listing(), upTo)
      progress.start(s"look the log files up to version $upTo up at $destPath")
      val logFiles = copy.forecastLog(log.tablePath, destPath, logFilesUpTo(upTo))
      planned(planSteps(target, destPath, resuming, upTo, data, logFiles))
        .withCopy(data, Some(logFiles))
    }
  }

  /** The steps [[run]] would take, with what each would copy. */
  private def planSteps(
      target: RedirectTarget,
      destPath: Path,
      resuming: Boolean,
      upTo: Long,
      data: CopyForecast,
      logFiles: CopyForecast
  ): Seq[String] = {
    val dataCopy = s"${data.files} data files (${TableCopy.humanBytes(data.bytes)}, " +
      s"${data.route.mode.name}, ${data.tasks} tasks; ${data.filesAlreadyThere} already there)"
    val copies =
      if (resuming) Seq(
        s"resume the redirect to $destPath, already ENABLE-REDIRECT-IN-PROGRESS: copy $dataCopy"
      )
      else Seq(
        s"pre-copy $dataCopy to $destPath while the table accepts writes",
        "commit ENABLE-REDIRECT-IN-PROGRESS (writes are refused from here to READY)",
        "copy the data files that commits made meanwhile name"
      )
    val register = target match {
      case RedirectTarget.ToTable(name, _, _) => Seq(s"register $name at $destPath")
      case _: RedirectTarget.ToLocation => Nil
    }
    copies ++
      Seq(
        s"copy ${logFiles.files} log files (${TableCopy.humanBytes(logFiles.bytes)}) up to " +
          s"version $upTo; ${logFiles.filesAlreadyThere} already there",
        s"verify that $destPath is the table at version $upTo"
      ) ++ register :+ "commit READY"
  }

  private def specOf(target: RedirectTarget): RedirectSpec = target match {
    case RedirectTarget.ToLocation(uri) => RedirectSpec.Location(qualify(uri))
    case RedirectTarget.ToTable(name, location, _) =>
      RedirectSpec.Table(name, Some(qualify(location)))
  }

  /**
   * The value committed on entering ENABLE-REDIRECT-IN-PROGRESS. It is stored under the writer-only
   * feature whatever the mode: the source stays readable by every client while writes are blocked.
   * READY takes on the requested mode.
   */
  private def enablingConfig(
      spec: RedirectSpec,
      mode: RedirectMode,
      rules: Seq[NoRedirectRule]
  ): RedirectConfig = {
    val redirectType = spec match {
      case _: RedirectSpec.Location => RedirectConfig.ObjectStoreType
      case _: RedirectSpec.Table => RedirectConfig.SessionCatalogType
    }
    RedirectConfig(mode, redirectType, RedirectState.EnableInProgress, spec, rules)
      .storedAs(RedirectMode.WriterOnly)
  }

  /** Whether `c` is the redirect `enabling` asks for, left unfinished by an earlier run. */
  private def isEnabling(c: RedirectConfig, enabling: RedirectConfig): Boolean =
    c.state == RedirectState.EnableInProgress && c.targetMode == enabling.targetMode &&
      sameTarget(c, enabling.spec)

  /** Whether `c` is the redirect `enabling` asks for, finished. */
  private def isReady(c: RedirectConfig, enabling: RedirectConfig): Boolean =
    c.state == RedirectState.Ready && c.mode == enabling.targetMode &&
      sameTarget(c, enabling.spec)

  private def nothingToDo(current: RedirectInfo, spec: RedirectSpec): RedirectResult =
    describe(current).copy(steps = Seq(s"already READY to ${spec.describe}; nothing to do"))

  /**
   * NORMAL -> ENABLE-REDIRECT-IN-PROGRESS, after checking the table and the target; or nothing,
   * when an earlier run with the same target got that far. Returns the source as it now is.
   */
  private def enable(
      current: RedirectInfo,
      target: RedirectTarget,
      destPath: Path,
      enabling: RedirectConfig
  ): RedirectInfo = resumes(current, enabling).fold(e => throw e, identity) match {
    case false =>
      checkSupported(current)
      checkTarget(target, destPath)
      val version = LogCommitter.commitRebasing(
        log,
        current.version,
        "SET REDIRECT",
        commitParameters(enabling)
      )(_ =>
        Seq(
          RedirectProtocol.withFeature(current.protocol, RedirectMode.WriterOnly),
          RedirectProtocol.withProperty(current.metadata, enabling)
        )
      )
      report.committed(version)
      report.note(s"committed version $version: NORMAL -> ${enabling.state.name}")
      fresh()
    case true =>
      report.note(
        s"resuming: the redirect to ${enabling.spec.describe} " +
          "is already ENABLE-REDIRECT-IN-PROGRESS"
      )
      current
  }

  /**
   * Whether a run resumes an earlier one (the source is already ENABLE-REDIRECT-IN-PROGRESS to the
   * same target) rather than start from NORMAL; or why the source's state refuses the redirect.
   */
  private def resumes(
      current: RedirectInfo,
      enabling: RedirectConfig
  ): Either[DeltaLifecycleException, Boolean] = current.config match {
    case None => Right(false)
    case Some(c) if c.isDestinationMarker =>
      Left(LifecycleErrors.redirectState(
        displayName,
        "this table is the destination of a redirect that is being dropped; " +
          "it cannot be redirected itself"
      ))
    case Some(c) if isEnabling(c, enabling) => Right(true)
    case Some(c) =>
      val howToGoOn =
        if (c.state == RedirectState.EnableInProgress)
          s"Run SET REDIRECT to ${c.spec.describe} again to finish it, " +
            "or UNSET REDIRECT to cancel it."
        else "Run UNSET REDIRECT first."
      Left(LifecycleErrors.redirectState(
        displayName,
        s"it already has a redirect (${c.mode.sqlName}) to ${c.spec.describe} " +
          s"in state ${c.state.name}. $howToGoOn"
      ))
  }

  /**
   * The copy writes the destination's log. A resumed run finds its own partial copy there, which
   * may not read as a table yet; it is a copy of the source, checked already.
   */
  private def requireDirectCommitsAt(destPath: Path): Unit =
    scala.util.Try(RedirectLookup.read(ctx.hadoopConf, destPath)).toOption.flatten
      .foreach(_.requireDirectCommits(destPath.toString, s"redirect $displayName to"))

  /** Copying and re-protocolling a table is safe only if every feature it uses is understood. */
  private def checkSupported(info: RedirectInfo): Unit =
    if (!ClientSupport.canWrite(info.protocol)) {
      throw LifecycleErrors.unsupportedProtocol(
        info.version,
        ClientSupport.unsupportedForWriting(info.protocol),
        "redirect the table"
      )
    }

  private def tableCopy(tableId: String, progress: Progress): TableCopy = new TableCopy(
    spark,
    ctx.hadoopConf,
    progress,
    TableCopy.jobGroupId(tableId),
    s"SET REDIRECT on $displayName"
  )

  /**
   * The online part of the copy: the data files of the latest version and its retained history,
   * copied while the source is still NORMAL and accepts writes, so that writes are refused only
   * while what was committed meanwhile is copied. Only from NORMAL, after the checks the enable
   * step makes; the destination is marked as this source's pre-copy, so that a run cut short here
   * finds it acceptable. A resumed run (already ENABLE-REDIRECT-IN-PROGRESS) copies what it still
   * lacks instead. Returns the version pre-copied and what was copied.
   */
  private def preCopy(
      current: RedirectInfo,
      target: RedirectTarget,
      destPath: Path,
      progress: Progress
  ): Option[(Long, CopyStats)] = {
    if (current.config.nonEmpty) return None
    checkSupported(current)
    checkTarget(target, destPath)
    writePreCopyMarker(destPath)
    val stats = tableCopy(current.metadata.id, progress).copyReferenced(
      log.tablePath,
      destPath,
      log.listing(),
      current.version,
      MidDataCopyStep
    )
    report.note(
      s"pre-copied ${stats.filesCopied} data files (${stats.bytesCopied} bytes) of the versions " +
        s"up to ${current.version} while the source accepted writes " +
        s"(${stats.route.fold("")(_.describe)})"
    )
    noteReferencedInPlace(stats)
    Some((current.version, stats))
  }

  private def preCopyMarker(dest: Path): Path = new Path(dest, SetRedirect.PreCopyMarkerName)

  /** The marker names the source by its qualified location. */
  private def writePreCopyMarker(dest: Path): Unit = {
    val fs = dest.getFileSystem(ctx.hadoopConf)
    val out = fs.create(preCopyMarker(dest), true)
    try out.write(log.tablePath.toString.getBytes(java.nio.charset.StandardCharsets.UTF_8))
    finally out.close()
  }

  /** Whether `dest` holds this source's pre-copy: the marker naming it, and no log yet. */
  private def holdsOwnPreCopy(dest: Path): Boolean = {
    val fs = dest.getFileSystem(ctx.hadoopConf)
    !fs.exists(new Path(dest, LogFiles.LogDirName)) && scala.util.Try {
      val in = fs.open(preCopyMarker(dest))
      try new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8)
      finally in.close()
    }.toOption.contains(log.tablePath.toString)
  }

  /**
   * Copies the data files (with a pre-copy, only those the commits after it name) and the log up to
   * the version before the redirect, in one job; verifies the destination is a table at that
   * version, and removes the pre-copy marker.
   */
  private def copyTable(
      enabled: RedirectInfo,
      destPath: Path,
      progress: Progress,
      preCopiedUpTo: Option[Long]
  ): CopyStats = {
    val copiedUpTo = RedirectLookup.versionBeforeRedirect(ctx.hadoopConf, enabled)
    val stats = tableCopy(enabled.metadata.id, progress).copyReferenced(
      log.tablePath,
      destPath,
      log.listing(),
      copiedUpTo,
      MidDataCopyStep,
      after = preCopiedUpTo,
      logFiles = logFilesUpTo(copiedUpTo)
    )
    FaultInjection.step("setRedirect.afterFileCopy")
    verifyDestination(destPath, copiedUpTo)
    destPath.getFileSystem(ctx.hadoopConf).delete(preCopyMarker(destPath), false)
    report.note(
      s"copied ${stats.filesCopied - stats.logFilesCopied} data files and " +
        s"${stats.logFilesCopied} log files (${stats.bytesCopied} bytes) up to version " +
        s"$copiedUpTo (${stats.route.fold("")(_.mode.name)}); " +
        s"${stats.filesAlreadyThere} were already there"
    )
    noteReferencedInPlace(stats)
    stats
  }

  private def noteReferencedInPlace(stats: CopyStats): Unit =
    if (stats.filesReferencedInPlace > 0) {
      report.note(
        s"${stats.filesReferencedInPlace} files the log references by absolute paths " +
          s"outside ${log.tablePath} were not copied: the destination reads them where they are"
      )
    }

  /**
   * Registers a catalog target as an external Delta table at the copied location, through the
   * session catalog as `CREATE TABLE name USING delta LOCATION '...'` does: delta-spark takes the
   * schema from the log there. A re-run finds it registered and leaves it.
   */
  private def register(target: RedirectTarget, destPath: Path): Unit = target match {
    case RedirectTarget.ToTable(name, _, _) =>
      val parts = TableName.parts(name)
      val ident = Identifier.of(parts.init.toArray, parts.last)
      val catalog =
        SparkInternals.catalog(spark, SessionCatalogName).asInstanceOf[TableCatalog]
      if (!catalog.tableExists(ident)) {
        CatalogShim.createExternalDeltaTable(catalog, ident, destPath.toString)
        report.note(s"registered $name at $destPath")
      }
    case _: RedirectTarget.ToLocation =>
  }

  /** ENABLE-REDIRECT-IN-PROGRESS -> READY, taking on the requested mode's feature. */
  private def enterReady(enabled: RedirectInfo, enabling: RedirectConfig): Unit = {
    val ready = enabling.withState(RedirectState.Ready).storedAs(enabling.targetMode)
    val readyProtocol = RedirectProtocol.withFeature(
      RedirectProtocol.withoutFeatures(enabled.protocol),
      ready.mode
    )
    val version = LogCommitter.commit(
      log,
      enabled.version,
      Seq(readyProtocol, RedirectProtocol.withProperty(enabled.metadata, ready)),
      "SET REDIRECT",
      commitParameters(ready)
    )
    report.committed(version)
    report.note(s"committed version $version: ENABLE-REDIRECT-IN-PROGRESS -> READY")
  }

  private def commitParameters(c: RedirectConfig): Map[String, Any] =
    Map("state" -> c.state.name, "destination" -> c.spec.describe, "mode" -> c.targetMode.sqlName)

  private def describe(info: RedirectInfo): RedirectResult =
    RedirectResult.describe(ctx, displayName, info)

  private def fresh(): RedirectInfo =
    RedirectLookup.read(
      ctx.hadoopConf,
      sourcePath
    ).getOrElse(throw LifecycleErrors.notADeltaTable(sourcePath.toString, "there is no Delta log"))

  private def qualify(location: String): String =
    Locations.qualify(location, ctx.hadoopConf)(
      LifecycleErrors.unusableRedirectTarget(location, _)
    ).toString

  private def sameTarget(c: RedirectConfig, spec: RedirectSpec): Boolean = (c.spec, spec) match {
    case (RedirectSpec.Location(a), RedirectSpec.Location(b)) =>
      RedirectRouting.sameLocation(ctx, a, b)
    case (RedirectSpec.Table(a, _), RedirectSpec.Table(b, _)) => a.equalsIgnoreCase(b)
    case _ => false
  }

  /**
   * The checks made before anything is written: allowed, not overlapping the source, absent or
   * empty (or holding this source's own pre-copy, from a run cut short before it wrote any log).
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
      if (entries.nonEmpty && !holdsOwnPreCopy(dest)) {
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
    val sidecarDir = FileNames.sidecarDirPath(log.logPath)
    val sidecars =
      if (fs.exists(sidecarDir)) fs.listStatus(sidecarDir).toSeq.filter(_.isFile) else Nil
    val lastCheckpoint =
      scala.util.Try(fs.getFileStatus(new Path(
        log.logPath,
        TableLog.LastCheckpointFileName
      ))).toOption
        .filter(_ => listing.checkpoints.exists(_.version <= version))
    commits ++ checksums ++ compactions ++ checkpoints ++ sidecars ++ lastCheckpoint
  }

  /**
   * The destination must be a Delta table at exactly the copied version, readable by this client's
   * log core.
   */
  private def verifyDestination(dest: Path, version: Long): Unit = {
    val destLog = TableLog.forPath(ctx.hadoopConf, dest)
    val listing = destLog.tailListing()
    if (listing.latestVersion != version) {
      throw LifecycleErrors.redirectCopyMismatch(
        s"the destination's latest version is ${listing.latestVersion}, expected $version"
      )
    }
    val (destProtocol, destMetadata) = destLog.protocolAndMetadataAt(version, listing)
    val (srcProtocol, srcMetadata) = log.protocolAndMetadataAt(version, log.listingFor(version))
    if (destProtocol != srcProtocol || destMetadata.id != srcMetadata.id) {
      throw LifecycleErrors.redirectCopyMismatch(
        "the destination's protocol or table id differs from the source's"
      )
    }
  }
}

object SetRedirect {

  /**
   * The file that marks a destination as holding a source's pre-copy (hidden from Delta readers and
   * VACUUM by its leading underscore); it goes once the log is copied.
   */
  val PreCopyMarkerName = "_delta_lifecycle_precopy"
}
