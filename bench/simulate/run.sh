#!/usr/bin/env bash
# bench/simulate/run.sh — a simulated day of the reference workload through
# the pure scheduling core, per policy, printed as one table.
#
# Builds bench/simulate with plain gcc (no PostgreSQL) and runs it; the
# arguments go to the program, e.g. --seed 7 or
# --policies fifo,strict-fifo,fair-share (simulate.c lists them all).
# Takes about 5 seconds.  bash bench/simulate/seeds.sh runs many seeds.
# The workload model and how to read the table: docs/benchmarks.md,
# "Simulated day".
set -eu
here=$(cd "$(dirname "$0")" && pwd)
make -s -C "$here" > /dev/null
exec "$here/../out/simulate" "$@"
