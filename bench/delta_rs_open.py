"""delta-rs reference for the compaction benchmark: the time `deltalake.DeltaTable(path)`
takes to open each cold-snapshot table that CompactionBenchmark built (and to list its
files), written to bench/results/compaction-delta-rs.csv. delta-rs opens the plain-commit
tables; it does not read compaction files."""

from __future__ import annotations

import csv
import sys
import time
from pathlib import Path
from typing import Sequence, Tuple

from deltalake import DeltaTable

ROOT = Path(__file__).resolve().parent
WORK = ROOT / "work" / "compaction"
RESULTS = ROOT / "results"
REPETITIONS = 5


def time_opens(tables: Sequence[Tuple[int, str, Path]], csv_name: str) -> None:
    """Time ``DeltaTable(path).file_uris()`` REPETITIONS times (after a warm-up) on each
    ``(K, variant, path)`` and write the runs to ``bench/results/<csv_name>``.

    Examples:
        >>> time_opens([(9, "delta-rs, plain commits", WORK / "cold-9-plain")], "x.csv")  # doctest: +SKIP
    """
    rows = []
    for k, variant, table in tables:
        DeltaTable(str(table)).file_uris()  # warm-up
        for run in range(1, REPETITIONS + 1):
            start = time.perf_counter()
            files = len(DeltaTable(str(table)).file_uris())
            seconds = time.perf_counter() - start
            rows.append([k, variant, run, f"{seconds:.4f}", files])
    RESULTS.mkdir(exist_ok=True)
    with open(RESULTS / csv_name, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["commits_after_checkpoint", "variant", "run", "seconds", "files"])
        writer.writerows(rows)
    print("wrote", RESULTS / csv_name, file=sys.stderr)


def main() -> int:
    tables = sorted(WORK.glob("cold-*-plain"), key=lambda p: int(p.name.split("-")[1]))
    if not tables:
        print("run CompactionBenchmark first: no tables under", WORK, file=sys.stderr)
        return 1
    time_opens([(int(t.name.split("-")[1]), "delta-rs, plain commits", t) for t in tables],
               "compaction-delta-rs.csv")
    return 0


if __name__ == "__main__":
    sys.exit(main())
