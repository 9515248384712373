"""Where ``make test`` spends its time: its phases and its slowest tests, Scala and Python.

    python bench/ci_time.py [--label LABEL] [--times target/ci-times]

Reads what a ``make test`` run left behind:

- ``target/ci-times/phases.csv``: one ``phase,seconds,status`` row per phase
  (``scripts/timed.sh``), and a ``total`` row (some phases run side by side);
- ``target/ci-times/pytest.xml``: pytest's JUnit report (every test's time, setup included);
- ``scala/target/test-reports/*.xml``: scalatest's reports (every suite and test).

and writes ``bench/results/ci-phases.csv`` and ``bench/results/ci-slowest-tests.csv``, each row
marked with LABEL (default: the commit measured and the machine's load average when the run
ended) so that runs before and after a change stand side by side. Rows of an earlier run with
the same label are replaced. It prints the breakdown as Markdown, for bench/README.md.
"""

from __future__ import annotations

import argparse
import csv
import os
import subprocess
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path
from typing import Dict, List, Tuple

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
SLOWEST = 25


def _commit() -> str:
    return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                          capture_output=True, text=True).stdout.strip()


def phases(times: Path) -> List[Tuple[str, int, int]]:
    rows = []
    with open(times / "phases.csv") as f:
        for phase, seconds, status in csv.reader(f):
            rows.append((phase, int(seconds), int(status)))
    return rows


def python_tests(report: Path) -> Tuple[List[Tuple[float, str]], Dict[str, float]]:
    """Every test's time and every module's total (setup and teardown included)."""
    tests, modules = [], defaultdict(float)
    for case in ET.parse(report).getroot().iter("testcase"):
        seconds = float(case.get("time") or 0)
        module = (case.get("classname") or "").replace(".", "/") + ".py"
        tests.append((seconds, f"{module}::{case.get('name')}"))
        modules[module.split(".py")[0] + ".py"] += seconds
    return tests, dict(modules)


def scala_tests(reports: Path) -> Tuple[List[Tuple[float, str]], Dict[str, float]]:
    tests, suites = [], {}
    for report in reports.glob("TEST-*.xml"):
        root = ET.parse(report).getroot()
        suite = (root.get("name") or "").rsplit(".", 1)[-1]
        suites[suite] = float(root.get("time") or 0)
        for case in root.iter("testcase"):
            tests.append((float(case.get("time") or 0), f"{suite}: {case.get('name')}"))
    return tests, suites


def _replace_rows(path: Path, header: List[str], label: str, rows: List[List[str]]) -> None:
    kept: List[List[str]] = []
    if path.is_file():
        with open(path) as f:
            reader = csv.reader(f)
            next(reader, None)
            kept = [r for r in reader if r and r[0] != label]
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(kept + rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--times", type=Path, default=ROOT / "target" / "ci-times")
    parser.add_argument("--label", default=None)
    args = parser.parse_args()
    label = args.label or f"{_commit()} load {os.getloadavg()[0]:.1f}"

    phase_rows = phases(args.times)
    py_tests, py_modules = python_tests(args.times / "pytest.xml")
    sc_tests, sc_suites = scala_tests(ROOT / "scala" / "target" / "test-reports")

    _replace_rows(RESULTS / "ci-phases.csv", ["run", "phase", "seconds", "status"], label,
                  [[label, p, str(s), str(st)] for p, s, st in phase_rows])
    slowest = sorted([(s, "python", n) for s, n in py_tests] +
                     [(s, "scala", n) for s, n in sc_tests], reverse=True)[:SLOWEST]
    _replace_rows(RESULTS / "ci-slowest-tests.csv", ["run", "suite", "seconds", "test"], label,
                  [[label, kind, f"{s:.1f}", n] for s, kind, n in slowest])

    # Some phases run side by side (the Scala tests beside the Python setup): the "total" row,
    # where a run has one, is the wall time of the whole make test.
    steps = [row for row in phase_rows if row[0] != "total"]
    total = next((s for p, s, _ in phase_rows if p == "total"), sum(s for _, s, _ in steps))
    print(f"### `make test` on {label}: {total / 60:.1f} min\n")
    print("| phase | seconds | share |\n| --- | ---: | ---: |")
    for p, s, _ in steps:
        print(f"| {p} | {s} | {100 * s / max(total, 1):.0f}% |")
    print(f"\nPython modules (worker time, {sum(py_modules.values()):.0f} s in all):\n")
    for module, s in sorted(py_modules.items(), key=lambda kv: -kv[1])[:15]:
        print(f"- {module}: {s:.0f} s")
    print(f"\nScala suites ({sum(sc_suites.values()):.0f} s in all):\n")
    for suite, s in sorted(sc_suites.items(), key=lambda kv: -kv[1])[:10]:
        print(f"- {suite}: {s:.0f} s")
    print(f"\nThe {SLOWEST} slowest tests:\n")
    for s, kind, n in slowest:
        print(f"- {s:.1f} s ({kind}) {n}")


if __name__ == "__main__":
    main()
