#!/usr/bin/env bash
# bench/simulate/seeds.sh — the headline numbers of bench/simulate over many
# seeds, so that one seed's table can be judged: per policy and number the
# minimum, median and maximum over seeds 1..SEEDS (default 20), and how
# many seeds met each target of test/simulate/simulate.test.
#
# Usage: bash bench/simulate/seeds.sh [SEEDS] [simulate options...]
#   e.g. bash bench/simulate/seeds.sh 20 --starvation 0
# About 3 s per seed.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
n=${1:-20}
shift || true
make -s -C "$here" > /dev/null
all=$(mktemp)
trap 'rm -f "$all"' EXIT
for seed in $(seq 1 "$n"); do
	"$here/../out/simulate" --seed "$seed" --summary "$@" | awk -v s="$seed" '/^summary / {print s, $2, $3, $4}'
done > "$all"

echo "$n seeds (1..$n): min / median / max"
headline='utilisation_waiting utilisation_day idle_held_starving idle_held_unwanted idle_no_fit production_short_hours production_wait_p50 production_wait_p90
	exploration_wait_p90 exploration_wait_p99 sweeps_wait_p90'
for policy in $(awk '{print $2}' "$all" | awk '!seen[$0]++'); do
	for key in $headline; do
		awk -v p="$policy" -v k="$key" '$2 == p && $3 == k {print $4}' "$all" | sort -g |
			awk -v p="$policy" -v k="$key" '{v[NR] = $1}
				END {printf "  %-14s %-24s %9.2f %9.2f %9.2f\n", p, k, v[1], v[int((NR + 1) / 2)], v[NR]}'
	done
done
for policy in fair-share quota-shares; do
	awk -v p="$policy" -v n="$n" '$2 == p && $3 == "utilisation_waiting" && $4 >= 99 {met++}
		END {printf "  %s: utilisation while jobs wait >= 99%% on %d of %d seeds\n", p, met, n}' "$all"
done
awk -v n="$n" '$3 == "production_wait_p90" {p90[$1, $2] = $4}
	END {for (s = 1; s <= n; s++) if (((s, "quota-shares") in p90) && p90[s, "quota-shares"] * 2 <= p90[s, "fifo"]) met++
		 printf "  quota shares: production p90 wait at most half of FIFO'"'"'s on %d of %d seeds\n", met, n}' "$all"
