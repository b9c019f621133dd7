#!/usr/bin/env bash
# demo/run.sh — the fairshare demo, from a fresh Debian 12 machine.
#
# Installs what is missing (apt, through test/lib/setup.sh), builds and
# installs the extension, starts the local SageMaker emulator and a
# throwaway PostgreSQL cluster whose dispatcher talks to it
# (test/lib/e2e.sh), creates the reference setup with plain SQL
# (demo/setup.sql), then tells a short story with jobs submitted by INSERT
# (demo/story.py): a timeline of placements, borrowing, reclaim and
# preemption with their reasons, queue snapshots, explain(), and the
# dashboard views.  Then a notebook-style walk-through of a fair-share
# queue runs through boto3 against the same cluster's AWS Batch API
# (test/api_admin/notebook.py).
# It ends with a chart of the instances each share held
# (demo/chart.py, SVG), stops everything it started, removes its temporary
# files (also on Ctrl-C or an error), and says how to run the same setup
# on real SageMaker.  The story takes about 90 s.
#
# Usage: bash demo/run.sh [--out DIR] [--verbose]
#   --out DIR    where the chart, its data and the timeline go
#                (default: $FS_DEMO_OUT, else ./demo-output)
#   --verbose    print every state change, also SUBMITTED -> RUNNABLE and
#                SCHEDULED -> STARTING
# Run as root on a fresh machine (apt); the server runs as "postgres".
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
out=${FS_DEMO_OUT:-$PWD/demo-output}
verbose=
while [ $# -gt 0 ]; do
	case $1 in
		--out) out=${2:?--out needs a directory}; shift 2 ;;
		--out=*) out=${1#--out=}; shift ;;
		--verbose) verbose=--verbose; shift ;;
		-h|--help) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
		*) echo "unknown option: $1 (see --help)" >&2; exit 2 ;;
	esac
done
case $out in /*) ;; *) out=$PWD/$out ;; esac

export FS_TOP=$top
. "$top/test/lib/setup.sh"

if [ -t 1 ] && [ "${TERM:-dumb}" != dumb ] && [ -z "${NO_COLOR+x}" ]; then
	bold=$'\033[1m' dim=$'\033[2m' off=$'\033[0m'
else
	bold= dim= off=
fi
step() { printf '%s== %s%s\n' "$bold" "$*" "$off"; }
fail() {	# the message, and the end of the server's log when there is one
	printf 'demo failed: %s\n' "$*" >&2
	if [ -s "${work:-/nonexistent}/cluster/server.log" ]; then
		echo "-- the last lines of the server's log:" >&2
		tail -n 20 "$work/cluster/server.log" >&2
	fi
	exit 1
}

# One minute of a job's emulated timeline takes 0.6 s (see demo/story.py's
# hyper(): startup 3 min, training 5 min to 2 h, stop 4 min).
time_scale=0.01

step "Installing what is missing, building and installing fairshare"
fs_setup "$top" || fail "build or install failed (see above)"
FS_PGBIN=$(pg_config --bindir)
. "$top/test/lib/cluster.sh"
. "$top/test/lib/e2e.sh"

work=$(mktemp -d /tmp/fairshare-demo.XXXXXX)
chmod 755 "$work"
cleanup() {
	set +e
	trap - EXIT INT TERM
	fs_cluster_stop "$work/cluster" immediate
	fs_emulator_stop "$work"
	rm -rf "$work"
}
trap cleanup EXIT
trap 'echo; echo "interrupted; cleaning up" >&2; exit 130' INT TERM

step "Starting the SageMaker emulator and a throwaway cluster"
fs_emulator_start "$work" --time-scale "$time_scale" || fail "the emulator did not start"
# The cluster of the end-to-end tests: shared_preload_libraries =
# 'pg_cron,fairshare', the dispatcher on database e2e, endpoint, region and
# the emulator's credentials, a 200 ms poll.  The demo adds a higher API
# rate so that ~20 jobs in SageMaker are each described several times a
# second.
api_port=$(fs_free_port) || fail "no free port for the AWS Batch API"
fs_e2e_cluster "$work/cluster" "fairshare.api_rate_limit = 100" "fairshare.api_port = $api_port" 2> "$work/create.log" || {
	cat "$work/create.log" >&2; fail "the cluster did not start"; }
# pg_cron lives in the cron database (postgres); with it there, fairshare's
# housekeeping jobs (utilisation history, alerts, retention) get scheduled.
fs_psql "$work/cluster" -d postgres -c "CREATE EXTENSION pg_cron" > /dev/null &&
	fs_sql "$work/cluster" "SELECT fairshare.schedule_housekeeping()" > /dev/null ||
	fail "could not schedule the housekeeping jobs in pg_cron"
fs_wait "$work/cluster" "SELECT pid IS NOT NULL AND turns > 0 FROM fairshare.dispatcher_state()" 60 ||
	fail "the dispatcher did not start"
printf '   %sPostgreSQL %s on 127.0.0.1:%s (dispatcher pid %s), emulator on 127.0.0.1:%s%s\n' "$dim" \
	"$(fs_sql "$work/cluster" "SHOW server_version")" "$(fs_cluster_port "$work/cluster")" \
	"$(fs_sql "$work/cluster" "SELECT pid FROM fairshare.dispatcher_state()")" "$FS_EMU_PORT" "$off"

step "Creating the reference setup (demo/setup.sql)"
fs_psql "$work/cluster" -d e2e -f "$top/demo/setup.sql" > /dev/null || fail "demo/setup.sql failed"

mkdir -p "$out"
printf '*\n' > "$out/.gitignore"	# never committed by accident
rm -f "$out/shares.csv" "$out/shares.svg" "$out/timeline.txt"
rc=0
timeout --foreground -s INT 600 "$FS_PYTHON" "$top/demo/story.py" --emulator-port "$FS_EMU_PORT" \
	--emuctl "$top/test/lib/emuctl.py" --out "$out" --time-scale "$time_scale" $verbose -- \
	"$FS_PGBIN/psql" -X -q -h 127.0.0.1 -p "$(fs_cluster_port "$work/cluster")" -U postgres -d e2e || rc=$?
if [ -s "$out/shares.csv" ]; then
	"$FS_PYTHON" "$top/demo/chart.py" "$out/shares.csv" "$out/shares.svg" || rc=1
fi
if [ "$rc" = 130 ]; then
	echo "interrupted; cleaning up (the timeline so far is in $out/timeline.txt)" >&2
	exit 130
fi
[ "$rc" = 124 ] && fail "the story took more than 600 s; the timeline so far is in $out/timeline.txt"
[ "$rc" = 0 ] || fail "the story stopped early (exit $rc); the timeline so far is in $out/timeline.txt"

echo
step "A fair-share walk-through through boto3, against the AWS Batch API on 127.0.0.1:$api_port"
fs_find_boto_python > /dev/null 2>&1 || true
boto_python=${FS_BOTO_PYTHON:-python3}
if fs_has_service_jobs "$boto_python"; then
	fs_sql "$work/cluster" "CREATE ROLE demo_admin LOGIN IN ROLE fairshare_admin" > /dev/null &&
		fs_sql "$work/cluster" "CREATE ROLE demo_user LOGIN IN ROLE fairshare_submitter" > /dev/null ||
		fail "could not create the API's roles"
	admin_key=$(fs_sql "$work/cluster" "SELECT access_key_id || ':' || secret_access_key FROM fairshare.create_api_key('demo_admin')")
	user_key=$(fs_sql "$work/cluster" "SELECT access_key_id || ':' || secret_access_key FROM fairshare.create_api_key('demo_user')")
	printf '   %s(boto3.client("batch", endpoint_url="http://127.0.0.1:%s") with keys of an admin and a submitter)%s\n' \
		"$dim" "$api_port" "$off"
	nb_rc=0
	timeout --foreground -s INT 300 "$boto_python" "$top/test/api_admin/notebook.py" --show \
		--endpoint "http://127.0.0.1:$api_port" --admin "$admin_key" --submitter "$user_key" \
		--train-seconds 150 --timeout 120 > "$work/notebook.log" 2>&1 || nb_rc=$?
	sed 's/^/   /' "$work/notebook.log"
	[ "$nb_rc" = 0 ] || fail "the notebook's calls failed (exit $nb_rc, see above)"
else
	echo "   (skipped: no Python here has a boto3 with AWS Batch service jobs, 1.39 or later; set FS_BOTO_PYTHON to one that has)"
fi

echo
step "The chart of instances held per share over time: $out/shares.svg"
printf '   (its data: %s/shares.csv; the timeline as plain text: %s/timeline.txt)\n' "$out" "$out"
echo
step "Running the same setup on real SageMaker (from demo/README.md)"
awk '/^## On real SageMaker/ { on = 1; next } /^## / { on = 0 } on' "$top/demo/README.md" | sed 's/^./   &/'
