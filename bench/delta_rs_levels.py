"""delta-rs reference for the levels benchmark (LevelsBenchmark): the time
``deltalake.DeltaTable(path).file_uris()`` takes on each cold-snapshot table, written to
bench/results/levels-delta-rs.csv. delta-rs reads no compaction files, so it replays every
commit after the checkpoint of the tables with levels."""

from __future__ import annotations

import sys
from pathlib import Path

from delta_rs_open import time_opens

WORK = Path(__file__).resolve().parent / "work" / "levels"


def main() -> int:
    """Time every table LevelsBenchmark built; 1 if it has not run yet.

    Examples:
        >>> main()  # doctest: +SKIP
        0
    """
    tables = sorted((t for t in WORK.glob("levels-k*") if t.is_dir()),
                    key=lambda p: int(p.name.split("-k")[1]))
    reference = WORK / "interval10-k9"
    if not tables or not reference.is_dir():
        print("run LevelsBenchmark first: no tables under", WORK, file=sys.stderr)
        return 1
    time_opens(
        [(int(t.name.split("-k")[1]),
          "delta-rs, interval 10 (checkpoint + 9 commits)" if t == reference
          else "delta-rs, interval 1000 (reads no compactions)", t)
         for t in [reference, *tables]],
        "levels-delta-rs.csv",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
