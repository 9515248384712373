"""Plot bench/results/redirect-copy.csv and redirect-unset.csv into redirect-copy.png: SET
REDIRECT's wall time against ``cp -r`` (with the write-blocked window), and UNSET REDIRECT's
time per replayed commit for each number of destination commits."""

from __future__ import annotations

import csv
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"


def main() -> None:
    with open(RESULTS / "redirect-copy.csv", newline="") as f:
        copies = list(csv.DictReader(f))
    with open(RESULTS / "redirect-unset.csv", newline="") as f:
        unsets = list(csv.DictReader(f))
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 5))

    xs = range(len(copies))
    left.bar([x - 0.2 for x in xs], [float(r["cp_s"]) for r in copies], width=0.4,
             label="cp -r")
    left.bar([x + 0.2 for x in xs], [float(r["set_redirect_s"]) for r in copies], width=0.4,
             label="SET REDIRECT")
    left.bar([x + 0.2 for x in xs], [float(r["write_blocked_s"]) for r in copies], width=0.4,
             label="of which writes refused", color="red")
    gib = float(copies[0]["bytes"]) / 2**30
    left.set_xticks(list(xs))
    left.set_xticklabels([f"run {int(r['repetition']) + 1}" for r in copies])
    left.set_ylabel("seconds")
    left.set_title(f"Copying {gib:.1f} GiB in {copies[0]['files']} files")
    left.legend(fontsize=8)

    counts = [int(r["destination_commits"]) for r in unsets]
    right.bar([str(c) for c in counts], [float(r["ms_per_commit"]) for r in unsets])
    right.set_xlabel("commits written at the destination")
    right.set_ylabel("UNSET REDIRECT, ms per replayed commit")
    right.set_title("UNSET REDIRECT replay")
    fig.tight_layout()
    fig.savefig(RESULTS / "redirect-copy.png", dpi=110)


if __name__ == "__main__":
    main()
