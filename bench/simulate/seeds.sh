#!/usr/bin/env bash
# bench/simulate/seeds.sh — the headline numbers of bench/simulate over many
# seeds, so that one seed's table can be judged: per policy and number the
# minimum, median and maximum over seeds 1..SEEDS (default 20), how many
# seeds met the per-seed targets of test/simulate/simulate.test, and the
# lost work of the two victim orders (quota-shares, quota-latest).
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
	exploration_wait_p90 exploration_wait_p99 sweeps_wait_p90 lost_hours'
for policy in $(awk '{print $2}' "$all" | awk '!seen[$0]++'); do
	for key in $headline; do
		awk -v p="$policy" -v k="$key" '$2 == p && $3 == k {print $4}' "$all" | sort -g |
			awk -v p="$policy" -v k="$key" '{v[NR] = $1}
				END {printf "  %-14s %-24s %9.2f %9.2f %9.2f\n", p, k, v[1], v[int((NR + 1) / 2)], v[NR]}'
	done
done
awk -v p=quota-shares -v n="$n" '$2 == p && $3 == "utilisation_waiting" && $4 >= 99 {met++}
	END {printf "  %s: utilisation while jobs wait >= 99%% on %d of %d seeds\n", p, met, n}' "$all"
awk -v n="$n" '$3 == "utilisation_waiting" {u[$1, $2] = $4; seen[$1] = 1}
	END {for (s in seen) if ((s, "fair-share") in u) {
			b = u[s, "fifo"] > u[s, "priority"] ? u[s, "fifo"] : u[s, "priority"]
			if (b - u[s, "fair-share"] <= 0.5) met++ }
		 printf "  fair share: utilisation while jobs wait within 0.5 points of the best of FIFO and priority queues on %d of %d seeds\n", met, n}' "$all"
awk '$3 == "lost_hours" && $2 == "quota-shares" {a += $4} $3 == "lost_hours" && $2 == "quota-latest" {b += $4}
	END {if (b > 0) printf "  lost instance-hours, all seeds: least-lost victim order %.1f, old order %.1f (%.2f of it)\n", a, b, a / b}' "$all"
awk -v n="$n" '$3 == "production_wait_p90" {p90[$1, $2] = $4}
	END {for (s = 1; s <= n; s++) if (((s, "quota-shares") in p90) && p90[s, "quota-shares"] * 2 <= p90[s, "fifo"]) met++
		 printf "  quota shares: production p90 wait at most half of FIFO'"'"'s on %d of %d seeds\n", met, n}' "$all"
