#!/usr/bin/env bash
# timed.sh PHASE COMMAND...: runs COMMAND and appends "PHASE,seconds,exit status" to
# $CI_TIMES/phases.csv (default target/ci-times), so that make test leaves where its time went
# (bench/ci_time.py turns it into bench/results/ci-*.csv). Exits with COMMAND's status.
set -u
phase=$1; shift
dir=${CI_TIMES:-target/ci-times}
mkdir -p "$dir"
start=$(date +%s)
"$@"
status=$?
echo "$phase,$(( $(date +%s) - start )),$status" >> "$dir/phases.csv"
exit $status
