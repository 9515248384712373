"""The checks of tests/test_connect.py's shared server, in a classic session: a fresh
production application (no test-switch property, started with a redirect allow-list) in a
subprocess, in which a SQL user can widen neither the allow-list nor arm a fault step."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from environment import PRODUCTION_ENV, REPO_ROOT
from spark_sessions import SESSION_CONF, SessionSpec, preamble

CLASSIC_SESSION_SCRIPT = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    import shared_session_checks

    work, conf = Path(sys.argv[1]), json.loads(sys.argv[2])
    allowed = work / "allowed"
    """
) + preamble(
    SessionSpec(app_name="shared-session"),
    conf="{**conf, shared_session_checks.ALLOWED_PREFIXES: str(allowed)}",
) + textwrap.dedent(
    """
    test_jvm = spark.sparkContext._jvm.java.lang.Boolean.getBoolean("deltaLifecycle.testing")
    source = shared_session_checks.policy_table(spark, work)
    shared_session_checks.check_allow_list_holds(spark, source, allowed)
    shared_session_checks.check_test_switches_are_off(spark, source, allowed)
    spark.stop()
    print("RESULT " + json.dumps({"test_jvm": test_jvm, "checked": True}))
    """
)


def test_a_classic_session_user_cannot_change_the_administrators_settings(tmp_path: Path) -> None:
    script = tmp_path / "classic_session.py"
    script.write_text(CLASSIC_SESSION_SCRIPT)
    conf = {**SESSION_CONF, "spark.sql.warehouse.dir": str(tmp_path / "warehouse")}
    run = subprocess.run(
        [sys.executable, str(script), str(tmp_path), json.dumps(conf)],
        capture_output=True, text=True, timeout=600,
        env={**PRODUCTION_ENV, "PYTHONPATH": os.pathsep.join(
            p for p in (str(REPO_ROOT / "tests"), PRODUCTION_ENV.get("PYTHONPATH")) if p)},
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-6000:]
    result = json.loads(run.stdout.split("RESULT ", 1)[1])
    assert result == {"test_jvm": False, "checked": True}
