"""What a SQL user of a shared server tries, as a client would: the same checks run over
Spark Connect (tests/test_connect.py) and in a classic session (tests/test_shared_session.py).

The application was started by its administrator with a redirect allow-list and without
the JVM property that turns test switches on (docs/settings.md). The user must be able to
widen neither the allow-list nor arm a fault step, and each refusal must name the setting
and say who can change it.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any, Callable

import pytest

from delta_lifecycle import LifecycleTable
from delta_lifecycle.errors import (
    AdministratorSettingError,
    RedirectLocationNotAllowedError,
    TestSwitchUnavailableError,
    translate_errors,
)
from delta_lifecycle.tables import quote_path

ALLOWED_PREFIXES = "spark.deltaLifecycle.redirect.allowedLocationPrefixes"
HALT_AT_STEP = "spark.deltaLifecycle.test.haltAtStep"
COPY_DELAY = "spark.deltaLifecycle.test.copyDelayMillis"

#: A copy delay per file long enough that honouring it would show in the elapsed time.
COPY_DELAY_MILLIS = 120_000


def policy_table(spark: Any, work: Path) -> Path:
    """A table of two commits (versions 0 and 1) for the checks below."""
    path = work / "policy-source"
    table = quote_path(str(path))
    spark.sql(f"CREATE TABLE {table} (id BIGINT) USING delta")
    spark.sql(f"INSERT INTO {table} VALUES (1), (2)")
    return path


def check_allow_list_holds(spark: Any, source: Path, allowed: Path) -> None:
    """SQL ``SET``, ``spark.conf.set`` and ``RESET`` cannot widen the allow-list that
    the application was started with, so a redirect outside it stays refused."""
    outside = str(source.parent / "outside")

    def refused_outside() -> None:
        with pytest.raises(RedirectLocationNotAllowedError) as caught:
            LifecycleTable.for_path(spark, str(source)).set_redirect(outside)
        assert ALLOWED_PREFIXES in caught.value.message

    refused_outside()
    with pytest.raises(AdministratorSettingError) as set_error:
        with translate_errors():
            spark.sql(f"SET {ALLOWED_PREFIXES}=/")
    message = set_error.value.message
    assert ALLOWED_PREFIXES in message and "administrator" in message, message
    assert "started with" in message, message

    # The API and RESET are refused by Spark itself: the extension registers the key as a
    # static SQL configuration (CANNOT_MODIFY_STATIC_CONFIG; on Spark 3.5 a legacy condition
    # with the same words; Spark 4.0 says CANNOT_MODIFY_CONFIG, "Cannot modify the value of the
    # Spark config").
    for attempt in (lambda: spark.conf.set(ALLOWED_PREFIXES, "/"),
                    lambda: spark.sql(f"RESET {ALLOWED_PREFIXES}")):
        error = str(_raised(attempt))
        assert re.search("(static|the value of the) (Spark )?config", error), error
        assert ALLOWED_PREFIXES in error, error
    assert spark.conf.get(ALLOWED_PREFIXES) == str(allowed)
    refused_outside()


def check_test_switches_are_off(spark: Any, source: Path, allowed: Path) -> None:
    """SQL ``SET`` of a test switch is refused; set through the API, which no SQL guard
    sees, it does nothing: COMPACT LOG does not halt the driver, and a table copy (a
    redirect inside the allow-list) does not wait."""
    for key in (HALT_AT_STEP, COPY_DELAY):
        with pytest.raises(TestSwitchUnavailableError) as caught:
            with translate_errors():
                spark.sql(f"SET {key}=compactLog.beforeWrite")
        assert key in caught.value.message and "deltaLifecycle.testing" in caught.value.message

    spark.conf.set(HALT_AT_STEP, "compactLog.beforeWrite")
    spark.conf.set(COPY_DELAY, str(COPY_DELAY_MILLIS))
    try:
        table = LifecycleTable.for_path(spark, str(source))
        assert table.compact_log().status == "written", "COMPACT LOG ran past the step"
        started = time.monotonic()
        assert table.set_redirect(str(allowed / "moved")).state == "READY"
        elapsed = time.monotonic() - started
        assert elapsed < COPY_DELAY_MILLIS / 1000 * 0.8, f"the copy waited: {elapsed:.0f} s"
        rows = spark.sql(f"SELECT id FROM {quote_path(str(source))}").collect()
        assert sorted(r[0] for r in rows) == [1, 2], "the driver still serves the session"
    finally:
        spark.conf.unset(HALT_AT_STEP)
        spark.conf.unset(COPY_DELAY)


def _raised(action: Callable[[], Any]) -> BaseException:
    try:
        action()
    except Exception as error:  # the caller judges it
        return error
    raise AssertionError("the action was not refused")
