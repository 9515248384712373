package io.github.deltalifecycle.features.redirect

import io.github.deltalifecycle.sql.routing.Router
import io.github.deltalifecycle.core.{
  ClientSupport,
  DeltaLifecycleException,
  ErrorConditions,
  FaultInjection,
  Locations,
  LogCommitter,
  LogErrors,
  Progress,
  TableLog
}
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession

/**
 * The RFC's enable procedure: NORMAL -> ENABLE-REDIRECT-IN-PROGRESS on the source; copy the data
 * files and the log up to the version before that commit, so the destination is a plain table any
 * Delta client reads on its own; verify; register the catalog table when the target is one;
 * ENABLE-REDIRECT-IN-PROGRESS -> READY. Every step can be re-run: a second SET REDIRECT with the
 * same target resumes an interrupted one, and UNSET REDIRECT cancels it.
 *
 * This class is the state machine; the copies are [[SetRedirectCopy]]'s, the destination's checks
 * [[DestinationChecks]]', the marker of a pre-copy [[PreCopyMarker]]'s and the registration of a
 * catalog target [[CatalogRegistration]]'s.
 */
final class SetRedirect(
    spark: SparkSession,
    ctx: RoutingContext,
    sourcePath: Path,
    displayName: String
) {
  private val log = TableLog.forPath(ctx.hadoopConf(sourcePath), sourcePath)
  // One SetRedirect per command: the report collects what this run does.
  private val report = new ProcedureReport
  private val checks = new DestinationChecks(ctx, log, displayName)
  private val copies = new SetRedirectCopy(spark, ctx, log, displayName, report, checks)

  def run(
      target: RedirectTarget,
      mode: RedirectMode,
      rules: Seq[NoRedirectRule]
  ): RedirectResult = {
    val spec = specOf(target)
    val destPath = Router.destinationPath(ctx, displayName, spec)
    val enabling = enablingConfig(spec, mode, rules)
    val current = fresh()
    current.requireDirectCommits(displayName, "redirect")
    if (current.config.exists(isReady(_, enabling))) return nothingToDo(current, spec)
    checks.requireDirectCommitsAt(destPath)

    val total = Progress.run(spark, s"SET REDIRECT on $displayName", 5) { progress =>
      progress.start(s"pre-copy the table to $destPath while it accepts writes")
      val preCopied = preCopy(current, target, destPath, progress)
      FaultInjection.step("setRedirect.afterPreCopy")

      progress.start("enter ENABLE-REDIRECT-IN-PROGRESS")
      val enabled = enable(current, target, destPath, enabling)
      FaultInjection.step("setRedirect.afterEnable")

      progress.start(s"copy what the table committed since to $destPath")
      val copied = copies.copyTable(enabled, destPath, progress, preCopied.map(_._1))
      val copiedInAll = preCopied.fold(copied)(p => p._2 + copied)
      FaultInjection.step("setRedirect.afterCopy")

      progress.start("register the destination")
      val registered = register(target, destPath, enabling)

      progress.start("enter READY")
      enterReady(enabled, registered)
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
    val destPath = Router.destinationPath(ctx, displayName, spec)
    val enabling = enablingConfig(spec, mode, rules)
    val current = fresh()
    val refusals = new RefusalCollector
    refusals.check(current.requireDirectCommits(displayName, "redirect"))
    def planned(steps: Seq[String]) =
      RedirectPlan.of(ctx, displayName, current, Some(spec), refusals.result, steps)
    if (current.config.exists(isReady(_, enabling)))
      return planned(Seq(s"already READY to ${spec.describe}; nothing to do"))
    // A destination whose storage cannot be opened (its catalog refuses the credentials) has
    // nothing more to plan against.
    if (!refusals.check(ctx.hadoopConf(destPath))) return planned(Nil)
    refusals.check(checks.requireDirectCommitsAt(destPath))
    val resuming = resumes(current, enabling).fold(e => { refusals.add(e); false }, identity)
    if (!resuming) {
      refusals.check(checkSupported(current))
      refusals.check(checks.checkTarget(target, destPath))
    }
    val upTo =
      if (resuming) RedirectLookup.versionBeforeRedirect(ctx.hadoopConf(current.path), current)
      else current.version
    Progress.run(spark, s"SET REDIRECT DRY RUN on $displayName", 2) { progress =>
      val (data, logFiles) = copies.forecast(current.metadata.id, destPath, upTo, progress)
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
      case RedirectTarget.ToTable(name, _, _, true) =>
        Seq(s"register $name in Unity Catalog as an external table at $destPath, and record " +
          "its table id in the redirect")
      case RedirectTarget.ToTable(name, _, _, false) => Seq(s"register $name at $destPath")
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
    case RedirectTarget.ToTable(name, location, _, false) =>
      RedirectSpec.Table(name, Some(qualify(location)))
    case RedirectTarget.ToTable(name, location, _, true) =>
      RedirectSpec.UnityCatalogTable(None, None, Some(name), Some(qualify(location)))
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
      case _: RedirectSpec.UnityCatalogTable => RedirectConfig.UnityCatalogType
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
      checks.checkTarget(target, destPath)
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
      Left(ErrorConditions.RedirectState.destinationNotRedirectable(
        table = displayName,
        source = c.spec.describe
      ))
    case Some(c) if isEnabling(c, enabling) => Right(true)
    case Some(c) if c.state == RedirectState.EnableInProgress =>
      Left(ErrorConditions.RedirectState.enableInProgress(
        table = displayName,
        mode = c.mode.sqlName,
        destination = c.spec.describe,
        state = c.state.name
      ))
    case Some(c) =>
      Left(ErrorConditions.RedirectState.alreadyRedirected(
        table = displayName,
        mode = c.mode.sqlName,
        destination = c.spec.describe,
        state = c.state.name
      ))
  }

  /** Copying and re-protocolling a table is safe only if every feature it uses is understood. */
  private def checkSupported(info: RedirectInfo): Unit =
    if (!ClientSupport.canWrite(info.protocol)) {
      throw LogErrors.unsupportedProtocol(
        info.version,
        ClientSupport.unsupportedForWriting(info.protocol),
        "redirect the table"
      )
    }

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
    checks.checkTarget(target, destPath)
    Some((current.version, copies.preCopy(current, destPath, progress)))
  }

  /**
   * A catalog target is registered at the copied location; a re-run finds it registered. Returns
   * the redirect as READY records it: a Unity Catalog table with the id the catalog gave it.
   */
  private def register(
      target: RedirectTarget,
      destPath: Path,
      enabling: RedirectConfig
  ): RedirectConfig = target match {
    case RedirectTarget.ToTable(name, _, _, unityCatalog) =>
      if (CatalogRegistration.registerExternal(spark, name, destPath))
        report.note(s"registered $name at $destPath")
      enabling.spec match {
        case u: RedirectSpec.UnityCatalogTable if unityCatalog =>
          val info = ctx.unityCatalog.describe(name)
            .getOrElse(throw ErrorConditions.InvalidRedirect.destinationTableMissing(
              table = displayName,
              destination = name
            ))
          report.note(s"$name has Unity Catalog table id ${info.tableId}")
          enabling.copy(spec = u.registered(info.tableId, info.metastoreId))
        case _ => enabling
      }
    case _: RedirectTarget.ToLocation => enabling
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
      ctx.hadoopConf(sourcePath),
      sourcePath
    ).getOrElse(throw ErrorConditions.notADeltaTable(
      path = sourcePath.toString,
      reason = "there is no Delta log"
    ))

  private def qualify(location: String): String =
    Locations.qualify(location, ctx.storage.names)(reason =>
      ErrorConditions.InvalidArgument.unusableRedirectTarget(location = location, reason = reason)
    ).toString

  private def sameTarget(c: RedirectConfig, spec: RedirectSpec): Boolean = (c.spec, spec) match {
    case (RedirectSpec.Location(a), RedirectSpec.Location(b)) =>
      Router.sameLocation(ctx, a, b)
    case (RedirectSpec.Table(a, _), RedirectSpec.Table(b, _)) => a.equalsIgnoreCase(b)
    case (a: RedirectSpec.UnityCatalogTable, b: RedirectSpec.UnityCatalogTable) =>
      a.describe.equalsIgnoreCase(b.describe)
    case _ => false
  }
}
