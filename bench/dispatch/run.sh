#!/usr/bin/env bash
# bench/dispatch/run.sh — how fast the dispatcher turns a commit into a
# CreateTrainingJob, against the local SageMaker emulator, in one run:
#
#  1. latency: LATENCY_JOBS single-job INSERT transactions with free
#     capacity, 20-60 ms apart; each commit's wall-clock time taken by the
#     client when COMMIT returned, against the time that job's
#     CreateTrainingJob arrived at the emulator (create_arrival_times; both
#     CLOCK_REALTIME on the same machine).  p50 and p99, and p99 as a ratio
#     to fairshare.poll_interval (target < 0.1).
#  2. throughput: THROUGHPUT_JOBS jobs inserted in BATCHES transactions,
#     capacity for all; the time from the first INSERT until all are RUNNING
#     at the emulator — InProgress with SecondaryStatus Training, which is
#     what fairshare maps to RUNNING.  The emulator's Starting and
#     Downloading phases last 0 s here (and Training forever), so a job is
#     Training from the instant it is created: the figure is the dispatch,
#     not a simulated provisioning time.  Also the most requests in flight
#     the emulator saw.
#  3. the emulator's own capacity, with the cluster stopped: as many signed
#     CreateTrainingJob calls (the dispatcher's request body, signed by
#     botocore before the clock starts) sent straight to it from
#     max_concurrent_requests keep-alive connections.  The dispatcher's
#     create rate over its capacity says who limits dispatch (1.0: the
#     emulator).
#
# Usage: bash bench/dispatch/run.sh     LATENCY_JOBS=200 THROUGHPUT_JOBS=5000 BATCHES=5
#        POLL_INTERVAL=5s CONCURRENCY=32 RATE=10000 (fairshare.max_concurrent_requests,
#        fairshare.api_rate_limit); LATENCY_DUMP=FILE / THROUGHPUT_DUMP=FILE keep
#        each job's latency / each create's arrival time
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
export FS_TOP=$top
. "$top/test/lib/setup.sh"
. "$top/test/lib/cluster.sh"
. "$top/test/lib/e2e.sh"
LATENCY_JOBS=${LATENCY_JOBS:-200}
THROUGHPUT_JOBS=${THROUGHPUT_JOBS:-5000}
BATCHES=${BATCHES:-5}
POLL_INTERVAL=${POLL_INTERVAL:-5s}
CONCURRENCY=${CONCURRENCY:-32}
RATE=${RATE:-10000}
py() { "$FS_PYTHON" "$top/bench/dispatch/dispatch_bench.py" "$@"; }

fs_setup "$top" > /dev/null
work=$(mktemp -d /tmp/fairshare-bench.XXXXXX); chmod 755 "$work"
trap 'fs_cluster_stop "$work/c" immediate; fs_emulator_stop "$work"; rm -rf "$work"' EXIT
fs_emulator_start "$work" --default-starting-seconds 0 --default-downloading-seconds 0 \
	--default-training-seconds inf
fs_e2e_cluster "$work/c" "fairshare.poll_interval = '$POLL_INTERVAL'" \
	"fairshare.max_concurrent_requests = $CONCURRENCY" "fairshare.api_rate_limit = $RATE" \
	"shared_buffers = '256MB'"
fs_sql "$work/c" "
INSERT INTO fairshare.service_environments (name) VALUES ('p4');
INSERT INTO fairshare.capacity_limits VALUES ('p4', 'ml.p4d.24xlarge', 100000);
INSERT INTO fairshare.job_queues (name) VALUES ('q');
INSERT INTO fairshare.queue_environments VALUES ('q', 'p4', 1);
CREATE FUNCTION public.req() RETURNS jsonb LANGUAGE sql AS \$\$
	SELECT jsonb_build_object('RoleArn', 'arn:aws:iam::123456789012:role/SageMakerRole',
		'AlgorithmSpecification', jsonb_build_object('TrainingImage', '123456789012.dkr.ecr.us-east-1.amazonaws.com/train:1',
													 'TrainingInputMode', 'File'),
		'OutputDataConfig', jsonb_build_object('S3OutputPath', 's3://bucket/out'),
		'ResourceConfig', jsonb_build_object('InstanceType', 'ml.p4d.24xlarge', 'InstanceCount', 1, 'VolumeSizeInGB', 50),
		'StoppingCondition', jsonb_build_object('MaxRuntimeInSeconds', 86400))
\$\$;" > /dev/null
poll_ms=$(fs_sql "$work/c" "SELECT extract(epoch FROM current_setting('fairshare.poll_interval')::interval) * 1000")
echo "settings: fairshare.poll_interval = $(fs_sql "$work/c" "SHOW fairshare.poll_interval")," \
	"fairshare.max_concurrent_requests = $(fs_sql "$work/c" "SHOW fairshare.max_concurrent_requests")," \
	"fairshare.api_rate_limit = $(fs_sql "$work/c" "SHOW fairshare.api_rate_limit")/s"
sleep 1	# the dispatcher has found the extension

pg_port=$(fs_cluster_port "$work/c")
py latency --pg "$pg_port" --emu "$FS_EMU_PORT" --jobs "$LATENCY_JOBS" --poll-ms "$poll_ms" \
	${LATENCY_DUMP:+--dump "$LATENCY_DUMP"}
py throughput --pg "$pg_port" --emu "$FS_EMU_PORT" --jobs "$THROUGHPUT_JOBS" --batches "$BATCHES" \
	--emu-pid "$(cat "$work/emulator.pid")" \
	--out "$work/throughput.json" ${THROUGHPUT_DUMP:+--dump "$THROUGHPUT_DUMP"}
fs_cluster_stop "$work/c" immediate
py direct --emu "$FS_EMU_PORT" --jobs "$THROUGHPUT_JOBS" --concurrency "$CONCURRENCY" \
	--emu-pid "$(cat "$work/emulator.pid")" \
	--from "$work/throughput.json"
