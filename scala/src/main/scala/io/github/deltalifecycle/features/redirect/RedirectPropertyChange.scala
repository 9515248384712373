package io.github.deltalifecycle.features.redirect

import io.github.deltalifecycle.sql.routing.Router
import io.github.deltalifecycle.core.{ErrorConditions, LogCommitter, TableLog}
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.delta.actions.Action
import org.apache.spark.sql.SparkSession

/**
 * A redirect property set or unset by hand (`ALTER TABLE ... SET/UNSET TBLPROPERTIES`). delta-spark
 * cannot commit it (the feature is outside its registry), so this class does, after checking the
 * change against the RFC's state machine: NORMAL -> ENABLE-REDIRECT-IN-PROGRESS -> READY ->
 * DROP-REDIRECT-IN-PROGRESS -> NORMAL, where the two IN-PROGRESS states also accept updates of the
 * value, and an unfinished enable may go back to NORMAL. Moving data is not part of it: SET/UNSET
 * REDIRECT do that.
 */
final class RedirectPropertyChange(
    spark: SparkSession,
    ctx: RoutingContext,
    path: Path,
    displayName: String
) {

  def run(key: String, newValue: Option[String]): RedirectResult = {
    val mode = modeWritten(key)
    val log = TableLog.forPath(ctx.hadoopConf(path), path)
    val info = RedirectLookup.read(
      ctx.hadoopConf(path),
      path
    ).getOrElse(throw ErrorConditions.notADeltaTable(
      path = path.toString,
      reason = "there is no Delta log"
    ))
    info.requireDirectCommits(displayName, "change the redirect of")
    val next = newValue.map(v => stored(RedirectConfig.parse(mode, v, s"the new value of $key")))
    val (from, to) = checkedTransition(info, next, mode, key)
    next.filter(_.state == RedirectState.Ready).foreach(requireDestinationTable(info, _))
    val version = LogCommitter.commit(
      log,
      info.version,
      actions(info, next),
      if (newValue.isDefined) "SET TBLPROPERTIES" else "UNSET TBLPROPERTIES",
      Map("redirectState" -> to)
    )
    RedirectResult.describe(ctx, displayName, RedirectLookup.read(ctx.hadoopConf(path), path).get)
      .copy(commitVersions = Seq(version), steps = Seq(s"committed version $version: $from -> $to"))
  }

  /** The mode whose property `key` is: this client writes the RFC's spellings only. */
  private def modeWritten(key: String): RedirectMode =
    RedirectMode.all.find(m => m.property == key).getOrElse(
      throw ErrorConditions.InvalidArgument.previewRedirectProperty(
        property = key,
        properties = RedirectMode.all.map(_.property)
      )
    )

  /**
   * As SET REDIRECT does: enabling is stored under the writer-only feature (the source stays
   * readable).
   */
  private def stored(c: RedirectConfig): RedirectConfig =
    if (c.state == RedirectState.EnableInProgress) c.storedAs(RedirectMode.WriterOnly) else c

  /**
   * The states the change goes from and to, by name, once it is known to be a step of the RFC's
   * state machine on the redirect set through `key`.
   */
  private def checkedTransition(
      info: RedirectInfo,
      next: Option[RedirectConfig],
      mode: RedirectMode,
      key: String
  ): (String, String) = {
    val from = info.config.map(_.state.name).getOrElse(RedirectState.Normal)
    val to = next.map(_.state.name).getOrElse(RedirectState.Normal)
    info.config.map(_.targetMode).filter(_ != mode).foreach { current =>
      throw ErrorConditions.RedirectState.otherModeProperty(
        table = displayName,
        mode = current.sqlName,
        property = key,
        modeProperty = current.property
      )
    }
    if (!RedirectPropertyChange.allowed(info.config.map(_.state), next.map(_.state))) {
      throw ErrorConditions.redirectInvalidTransition(
        table = displayName,
        from = from,
        to = to,
        allowed = RedirectPropertyChange.AllowedText
      )
    }
    (from, to)
  }

  /** A READY redirect must point somewhere real, allowed, and not redirected itself. */
  private def requireDestinationTable(info: RedirectInfo, c: RedirectConfig): Unit = {
    val dest = Router.destination(ctx, info.path, c.spec).destinationPath.get
    if (RedirectLookup.read(ctx.hadoopConf(dest), dest).isEmpty) {
      throw ErrorConditions.RedirectState.destinationNotADeltaTable(
        table = displayName,
        destination = c.spec.describe
      )
    }
  }

  /** The protocol and metadata that store `next` (or no redirect) in place of the current one. */
  private def actions(info: RedirectInfo, next: Option[RedirectConfig]): Seq[Action] = next match {
    case Some(c) =>
      val featureChanges = !info.config.exists(_.mode == c.mode)
      val protocol = if (featureChanges)
        Seq(RedirectProtocol.withFeature(RedirectProtocol.withoutFeatures(info.protocol), c.mode))
      else Nil
      protocol :+ RedirectProtocol.withProperty(info.metadata, c)
    case None => Seq(
        RedirectProtocol.withoutFeatures(info.protocol),
        RedirectProtocol.withoutProperty(info.metadata)
      )
  }
}

object RedirectPropertyChange {
  import RedirectState._

  val AllowedText: String =
    "NORMAL -> ENABLE-REDIRECT-IN-PROGRESS -> READY -> DROP-REDIRECT-IN-PROGRESS -> NORMAL, " +
      "value updates within an IN-PROGRESS state, and ENABLE-REDIRECT-IN-PROGRESS -> NORMAL"

  def allowed(from: Option[RedirectState], to: Option[RedirectState]): Boolean = (from, to) match {
    case (None, Some(EnableInProgress)) => true
    case (Some(EnableInProgress), Some(EnableInProgress | Ready)) => true
    case (Some(EnableInProgress), None) => true
    case (Some(Ready), Some(DropInProgress)) => true
    case (Some(DropInProgress), Some(DropInProgress)) => true
    case (Some(DropInProgress), None) => true
    case _ => false
  }
}
