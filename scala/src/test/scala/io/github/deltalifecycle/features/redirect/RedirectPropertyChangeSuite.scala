package io.github.deltalifecycle.features.redirect

import org.scalatest.funsuite.AnyFunSuite

/**
 * The state machine behind `ALTER TABLE ... SET/UNSET TBLPROPERTIES` on a redirect property (the
 * Table Redirection RFC, Enable & Disable Procedure). None is NORMAL: no property.
 */
class RedirectPropertyChangeSuite extends AnyFunSuite {
  import RedirectState._

  private val states: Seq[Option[RedirectState]] = None +: RedirectState.all.map(Some(_))

  private def name(s: Option[RedirectState]) = s.map(_.name).getOrElse(Normal)

  /** Every transition the RFC describes; every other pair of states is refused. */
  private val allowed: Set[(Option[RedirectState], Option[RedirectState])] = Set(
    None -> Some(EnableInProgress), // the enable procedure's first commit
    Some(EnableInProgress) -> Some(EnableInProgress), // a value update while in progress
    Some(EnableInProgress) -> Some(Ready), // the enable procedure's second commit
    Some(EnableInProgress) -> None, // cancelling an unfinished enable
    Some(Ready) -> Some(DropInProgress), // the disable procedure's first commit
    Some(DropInProgress) -> Some(DropInProgress), // a value update while in progress
    Some(DropInProgress) -> None // the disable procedure's second commit
  )

  for (from <- states; to <- states) {
    val expected = allowed.contains(from -> to)
    test(s"${name(from)} -> ${name(to)} is ${if (expected) "allowed" else "refused"}") {
      assert(RedirectPropertyChange.allowed(from, to) === expected)
    }
  }

  test("the refusal message lists the allowed transitions") {
    for (s <- RedirectState.all) assert(RedirectPropertyChange.AllowedText.contains(s.name))
  }
}
