#!/usr/bin/env bash
# bench/check.sh — the headline benchmarks at reduced sizes, each ratio
# against its target, in a few minutes.  Run it before you stop whenever
# src/ or sql/ changed: a change that makes a pass read every waiting job
# passes every functional test (7ab66e6 did) and only a benchmark sees it.
#
# Runs, one after the other (each starts its own cluster):
#   bench/schedule  a pass at 10k and at 1M RUNNABLE, and the window-query
#                   SQL at 1M         pass 1M / 10k <= 2, window / pass >= 20
#   bench/dispatch  commit to CreateTrainingJob latency   p99 / poll < 0.1
#   bench/submit    INSERT rate against a plain table     ratio >= 0.80
#   bench/update    bulk UPDATE per-row time at 4N / N    scaling <= 2
#                   a sweep taken in by schedule(), per job at 200k / 10k   <= 1.5
# and prints one line per ratio: PASS or FAIL, the figure and the target.
# The exit status is non-zero when any ratio misses its target or a bench
# fails to run.  Each bench's full output is kept in $CHECK_LOG_DIR (a
# temporary directory by default, printed at the end).
#
# The sizes are the smallest at which each target still means what it
# says: the schedule ratios need a million waiting jobs (at 100k the window
# query is only a few times slower), the others are shortened runs of the
# same measurement.  The machine should be quiet: on a loaded machine the
# submit and latency figures are noisy -- run again before believing a
# FAIL there.
#
# Usage: bash bench/check.sh [schedule|dispatch|submit|update ...]
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
logs=${CHECK_LOG_DIR:-$(mktemp -d /tmp/fairshare-check.XXXXXX)}
mkdir -p "$logs"
benches=${*:-"schedule dispatch submit update"}

passes=0
misses=0

# Every "FIGURE[x] (target OP VALUE)" in a bench's output is one ratio.
judge() {	# judge NAME LOGFILE
	local found
	found=$(grep -E '\(target (<=|>=|<|>) [0-9.]+\)' "$2" | awk -v bench="$1" '
	{
		line = $0
		while (match(line, /[0-9.]+x? \(target (<=|>=|<|>) [0-9.]+\)/)) {
			s = substr(line, RSTART, RLENGTH)
			label = substr(line, 1, RSTART - 1)
			line = substr(line, RSTART + RLENGTH)
			split(s, f, " ")
			v = f[1]; sub(/x$/, "", v)
			op = f[3]; t = f[4]; sub(/\)$/, "", t)
			ok = (op == "<=" && v + 0 <= t + 0) || (op == ">=" && v + 0 >= t + 0) ||
				 (op == "<" && v + 0 < t + 0) || (op == ">" && v + 0 > t + 0)
			gsub(/^[ \t,]+|[ \t:,]+$/, "", label)
			printf "%s %-9s %-62s %10s  target %s %s\n", ok ? "PASS" : "FAIL", bench, label, f[1], op, t
		}
	}')
	if [ -z "$found" ]; then
		echo "FAIL $1: no ratio in its output (see $2)"
		misses=$((misses + 1))
		return
	fi
	echo "$found"
	passes=$((passes + $(grep -c '^PASS' <<< "$found")))
	misses=$((misses + $(grep -c '^FAIL' <<< "$found")))
}

run() {	# run NAME ENV... -- the bench's run.sh with reduced sizes
	local name=$1; shift
	local log="$logs/$name.log" t0=$SECONDS
	if ! env "$@" bash "$top/bench/$name/run.sh" > "$log" 2>&1; then
		echo "FAIL $name: the bench did not finish (see $log)"
		tail -5 "$log" | sed 's/^/     /'
		misses=$((misses + 1))
		return
	fi
	judge "$name" "$log"
	echo "     ($name took $((SECONDS - t0)) s)"
}

for b in $benches; do
	case $b in
		schedule) run schedule SIZES="10000 1000000" ROUNDS=3 ;;
		dispatch) run dispatch LATENCY_JOBS=60 THROUGHPUT_JOBS=1000 BATCHES=2 ;;
		submit)   run submit SECONDS_PER_ROUND=5 ROUNDS=3 ;;
		update)   run update N=5000 INTAKE="10000 200000" ;;
		*) echo "unknown bench $b (schedule, dispatch, submit, update)"; misses=$((misses + 1)) ;;
	esac
done

echo "logs in $logs"
echo "$passes passed, $misses failed"
[ "$misses" = 0 ]
