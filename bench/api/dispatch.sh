#!/usr/bin/env bash
# bench/api/dispatch.sh — an API submit's commit to its CreateTrainingJob at
# the SageMaker emulator, as bench/dispatch/run.sh measures it for SQL
# submits (same emulator settings, same spacing): JOBS SubmitServiceJob
# calls 20-60 ms apart from one keep-alive client; each one's time is taken
# when its answer arrived (the API answers after its transaction commits),
# against the time that job's CreateTrainingJob arrived at the emulator.
# p50, p99, and p99 as a ratio to fairshare.poll_interval (target < 0.1).
#
# Usage: bash bench/api/dispatch.sh   (JOBS=200 POLL_INTERVAL=5s CONCURRENCY=32 RATE=10000)
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
export FS_TOP=$top
. "$top/test/lib/setup.sh"
. "$top/test/lib/cluster.sh"
. "$top/test/lib/e2e.sh"
. "$top/test/api/api_lib.sh"
JOBS=${JOBS:-200}
POLL_INTERVAL=${POLL_INTERVAL:-5s}

fs_setup "$top" > /dev/null
work=$(mktemp -d /tmp/fairshare-bench.XXXXXX); chmod 755 "$work"
trap 'fs_cluster_stop "$work/c" immediate; fs_emulator_stop "$work"; rm -rf "$work"' EXIT
fs_emulator_start "$work" --default-starting-seconds 0 --default-downloading-seconds 0 \
	--default-training-seconds inf
# The dispatcher's SageMaker limits as bench/dispatch/run.sh sets them: at the
# defaults (20 requests a second) these submits, about 25 a second, queue
# behind the rate limit and the latency measured is that queue's.
fs_api_cluster "$work/c" "fairshare.poll_interval = '$POLL_INTERVAL'" "fairshare.api_key_requests_per_second = 100000" \
	"fairshare.max_concurrent_requests = ${CONCURRENCY:-32}" "fairshare.api_rate_limit = ${RATE:-10000}" \
	"shared_buffers = '256MB'"
fs_psql "$work/c" -d e2e -q <<'SQL'
INSERT INTO fairshare.service_environments (name) VALUES ('p4');
INSERT INTO fairshare.capacity_limits VALUES ('p4', 'ml.p4d.24xlarge', 100000);
INSERT INTO fairshare.job_queues (name) VALUES ('q');
INSERT INTO fairshare.queue_environments VALUES ('q', 'p4', 1);
CREATE ROLE bench_submitter LOGIN IN ROLE fairshare_submitter;
SQL
read -r key secret <<<"$(fs_api_key "$work/c" bench_submitter)"
poll_ms=$(fs_sql "$work/c" "SELECT extract(epoch FROM current_setting('fairshare.poll_interval')::interval) * 1000")
echo "{\"endpoint\": \"http://127.0.0.1:$FS_API_PORT\", \"key\": [\"$key\", \"$secret\"], \"emulator\": $FS_EMU_PORT}" > "$work/cfg.json"
sleep 1	# the dispatcher has found the extension
python3 "$top/bench/api/api_bench.py" dispatch "$work/cfg.json" "$JOBS" "$poll_ms"
