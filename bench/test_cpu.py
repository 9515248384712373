"""The CPU each test module costs, every process it starts included, whatever else the machine runs.

    sudo-less, as root: python bench/test_cpu.py [--jobs 2] [--label L] [MODULE ...]

On a 2-core machine CI's wall time can only fall as far as its CPU work allows, and wall times
measured beside other work say little. This runs each pytest module (default: every module
``make test`` runs) in a cgroup of its own (cgroup v1 ``cpuacct``, which every process the module
starts joins: its Spark JVM, stock-session and crash subprocesses, servers), ``--jobs`` modules
at a time, and records its wall time and CPU seconds into ``bench/results/test-cpu.csv``.
It needs a writable ``/sys/fs/cgroup/cpuacct`` (root), the venv of ``make venv`` and the
bundled jars.
"""

from __future__ import annotations

import argparse
import csv
import os
import subprocess
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import List, Tuple

ROOT = Path(__file__).resolve().parents[1]
CGROUP = Path("/sys/fs/cgroup/cpuacct")
RESULTS = ROOT / "bench" / "results" / "test-cpu.csv"


def modules() -> List[str]:
    found = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests").rglob("test_*.py"))
    return [m for m in found if "/cluster/test_cluster_" not in m and "/objectstore/test_s3_" not in m]


def run_module(module: str, python: str, env: dict) -> Tuple[str, float, float, int]:
    group = CGROUP / f"delta-lifecycle-{uuid.uuid4().hex[:8]}"
    group.mkdir()
    started = time.monotonic()
    try:
        process = subprocess.Popen(
            ["sh", "-c", f"echo $$ > {group}/cgroup.procs && exec \"$0\" \"$@\"", python, "-m",
             "pytest", "-q", "-p", "no:cacheprovider", module],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )
        output, _ = process.communicate()
        wall = time.monotonic() - started
        cpu = int((group / "cpuacct.usage").read_text()) / 1e9
        if process.returncode not in (0, 5):
            print(output[-2000:], file=sys.stderr)
        return module, wall, cpu, process.returncode
    finally:
        _remove(group)


def _remove(group: Path) -> None:
    """Removes the cgroup once its processes are gone: exiting ones are awaited for a while,
    and whatever the module left running (a server it did not stop) goes to the parent."""
    deadline = time.monotonic() + 60
    while True:
        try:
            group.rmdir()
            return
        except OSError:
            if time.monotonic() > deadline:
                for pid in (group / "cgroup.procs").read_text().split():
                    try:
                        (CGROUP / "cgroup.procs").write_text(pid)
                    except OSError:
                        pass
            time.sleep(1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--label", default=None)
    parser.add_argument("--python", default=str(ROOT / ".venv" / "bin" / "python"))
    parser.add_argument("modules", nargs="*")
    args = parser.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                            capture_output=True, text=True).stdout.strip()
    label = args.label or commit
    env = {**os.environ, "DELTA_LIFECYCLE_SMOKE_LINES": os.environ.get(
        "DELTA_LIFECYCLE_SMOKE_LINES", "3.5")}
    todo = args.modules or modules()
    rows = []
    with ThreadPoolExecutor(args.jobs) as pool:
        futures = [pool.submit(run_module, m, args.python, env) for m in todo]
        for future in as_completed(futures):
            module, wall, cpu, code = future.result()
            print(f"{cpu:8.1f} CPU s {wall:8.1f} s wall  exit {code}  {module}", flush=True)
            rows.append([label, module, f"{wall:.1f}", f"{cpu:.1f}", str(code)])
    new = not RESULTS.is_file()
    with open(RESULTS, "a", newline="") as f:
        writer = csv.writer(f)
        if new:
            writer.writerow(["run", "module", "wall_seconds", "cpu_seconds", "exit"])
        writer.writerows(rows)
    total = sum(float(r[3]) for r in rows)
    print(f"{total:.0f} CPU s in all: at least {total / 2 / 60:.1f} min on 2 cores")


if __name__ == "__main__":
    main()
