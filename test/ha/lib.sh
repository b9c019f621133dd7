# test/ha/lib.sh — the Patroni cluster of the HA tests (patroni.test,
# patroni_async.test).  Source it after setting HA_SYNCHRONOUS_MODE (true
# or false); it starts, and on exit stops by PID, everything below:
#   - the SageMaker emulator (faults on), listening on 127.0.0.1-3: node K
#     reaches it at 127.0.0.K, so its request log ($d/requests.log) says
#     which node sent each call;
#   - one etcd (v2 API) and, per node, a TCP proxy to it (tcp_proxy.py):
#     killing node K's proxy cuts K off from etcd (start_proxy K heals it);
#   - three Patroni nodes (n1 bootstraps) with synchronous_mode as asked,
#     use_pg_rewind, primary_start_timeout 0 and the settings fairshare
#     needs, in the DCS; node K's AWS Batch API worker on 127.0.0.1:
#     ${api_port[K]} (it listens on the primary only);
#   - database e2e with the extension, queue q on 48 p4d instances and
#     public.req(fails boolean), on the leader ($L); the replicas' dispatchers
#     idle.
# Helpers: nsql K SQL [db], role K, leader, new_leader OLD (-> $L),
# wait_until SECONDS CMD..., replicas_stream K, dispatcher_idles K,
# api_idles K, rejoined K, dispatching K, now, say, ok/not_ok/check.  A watchdog ends the run after
# FS_HA_TIMEOUT seconds (default 300).
set -u
. "$FS_TOP/test/lib/cluster.sh"
. "$FS_TOP/test/lib/e2e.sh"
d=$FS_SCRATCH
PY=/usr/bin/python3
PGBIN=$(pg_config --bindir)
hard_timeout=${FS_HA_TIMEOUT:-300}
t_start=$(date +%s)
pass=0; fail=0
ok() { pass=$((pass + 1)); echo "ok: $1"; }
not_ok() { fail=$((fail + 1)); echo "FAILED: $1"; }
check() {	# check NAME EXPECTED ACTUAL
	if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1: expected [$2], got [$3]"; fi
}
now() { date +%s.%N | cut -c1-14; }
say() { echo "[$(( $(date +%s) - t_start ))s] $*"; }

# --- everything this test starts, by PID -----------------------------------
declare -A patroni_pid proxy_pid
etcd_pid=""; submit_pid=""; api_pid=""; watchdog_pid=""
cleanup() {
	trap - EXIT TERM
	touch "$d/stop-submitting"
	[ -n "$submit_pid" ] && kill "$submit_pid" 2>/dev/null
	[ -n "$api_pid" ] && kill "$api_pid" 2>/dev/null
	[ -n "$watchdog_pid" ] && kill "$watchdog_pid" 2>/dev/null
	for k in 1 2 3; do
		if [ -n "${patroni_pid[$k]:-}" ]; then
			kill -CONT "${patroni_pid[$k]}" 2>/dev/null
			kill -KILL "${patroni_pid[$k]}" 2>/dev/null
		fi
	done
	for k in 1 2 3; do
		[ -f "$d/n$k/data/postmaster.pid" ] &&
			fs_as_postgres "$PGBIN/pg_ctl" -D "$d/n$k/data" -m immediate -w -t 20 stop > /dev/null 2>&1
		[ -n "${proxy_pid[$k]:-}" ] && kill "${proxy_pid[$k]}" 2>/dev/null
	done
	[ -n "$etcd_pid" ] && kill "$etcd_pid" 2>/dev/null
	fs_emulator_stop "$d"
	wait 2>/dev/null
}
trap cleanup EXIT
trap 'echo "FAILED: hard timeout (${hard_timeout}s) reached"; echo "$pass passed, $((fail + 1)) failed"; exit 1' TERM
( sleep "$hard_timeout"; kill -TERM $$ ) 2>/dev/null &
watchdog_pid=$!

# --- ports, and the emulator with one address per node ----------------------
etcd_port=$(fs_free_port); etcd_peer=$(fs_free_port)
declare -A pg_port rest_port dcs_port api_port addr
for k in 1 2 3; do
	pg_port[$k]=$(fs_free_port); rest_port[$k]=$(fs_free_port); dcs_port[$k]=$(fs_free_port); api_port[$k]=$(fs_free_port)
	addr[$k]=127.0.0.$k
done

# Jobs train for 1.5 s (each poll of a job in flight is a call from the
# leader); 3% throttled, 3% 5xx, 1% dropped (half of those after acting).
fs_emulator_start "$d" --also-listen 127.0.0.2 --also-listen 127.0.0.3 --log "$d/requests.log" \
	--default-starting-seconds 0.2 --default-downloading-seconds 0.1 \
	--default-training-seconds 1.5 --default-uploading-seconds 0.1 \
	--throttle-rate 0.03 --error-5xx-rate 0.03 --drop-rate 0.01 --drop-mode random \
	--fault-seed "${FS_HA_SEED:-$$}" || { echo "emulator did not start"; exit 1; }
base_faults='"throttle_rate": 0.03, "error_5xx_rate": 0.03, "drop_rate": 0.01, "drop_mode": "random"'

# --- etcd (v2 API, which python3-etcd speaks) and one proxy per node ------
mkdir -p "$d/etcd"
etcd --name e --data-dir "$d/etcd/data" --enable-v2 \
	--listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
	--listen-peer-urls "http://127.0.0.1:$etcd_peer" --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer" \
	--initial-cluster "e=http://127.0.0.1:$etcd_peer" > "$d/etcd/etcd.log" 2>&1 &
etcd_pid=$!
start_proxy() {	# start_proxy K: node K's way to etcd
	"$PY" "$FS_TOP/test/ha/tcp_proxy.py" "${dcs_port[$1]}" "$etcd_port" >> "$d/proxy$1.log" 2>&1 &
	proxy_pid[$1]=$!
}
for k in 1 2 3; do start_proxy $k; done
for _ in $(seq 1 100); do
	curl -s "http://127.0.0.1:$etcd_port/health" 2>/dev/null | grep -q true && break
	sleep 0.1
done
curl -s "http://127.0.0.1:$etcd_port/health" | grep -q true || { echo "etcd did not start"; tail "$d/etcd/etcd.log"; exit 1; }

# --- three Patroni nodes -----------------------------------------------------
# The settings fairshare needs are in the DCS (the same on every node); a
# node's own are its ports, its socket directory and its SageMaker address.
write_config() {	# write_config K
	local k=$1 dir=$d/n$1
	mkdir -p "$dir"; chmod 700 "$dir"
	cat > "$dir/patroni.yml" <<EOF
scope: fairshare-ha-test
name: n$k
restapi:
  listen: 127.0.0.1:${rest_port[$k]}
  connect_address: 127.0.0.1:${rest_port[$k]}
etcd:
  hosts: 127.0.0.1:${dcs_port[$k]}
  use_proxies: true
bootstrap:
  dcs:
    ttl: 8
    loop_wait: 1
    retry_timeout: 3
    maximum_lag_on_failover: 1048576
    primary_start_timeout: 0
    synchronous_mode: ${HA_SYNCHRONOUS_MODE:-true}
    postgresql:
      use_pg_rewind: true
      use_slots: true
      parameters:
        shared_preload_libraries: pg_cron,fairshare
        max_worker_processes: 16
        max_connections: 40
        shared_buffers: 16MB
        fsync: 'off'
        wal_log_hints: 'on'
        synchronous_commit: 'on'
        cron.database_name: postgres
        cron.use_background_workers: 'on'
        fairshare.database: e2e
        fairshare.region: us-east-1
        fairshare.poll_interval: 200ms
        fairshare.preemption_min_runtime: 0
        fairshare.create_retry_limit: 1000
  initdb:
  - encoding: UTF8
  - locale: C
  - no-sync
  pg_hba:
  - local all all trust
  - host all all 127.0.0.1/32 trust
  - host replication all 127.0.0.1/32 trust
postgresql:
  listen: 127.0.0.1:${pg_port[$k]}
  connect_address: 127.0.0.1:${pg_port[$k]}
  data_dir: $dir/data
  bin_dir: $PGBIN
  pgpass: $dir/pgpass
  authentication:
    superuser: {username: postgres}
    replication: {username: postgres}
    rewind: {username: postgres}
  parameters:
    unix_socket_directories: '$dir'
    log_min_messages: warning
    log_line_prefix: '%m [%p] n$k '
    fairshare.endpoint_url: 'http://${addr[$k]}:$FS_EMU_PORT'
    fairshare.api_port: ${api_port[$k]}
watchdog:
  mode: 'off'
EOF
	if [ "$(id -u)" = 0 ]; then chown -R postgres: "$dir"; fi
}
start_patroni() {	# start_patroni K (setpriv execs: $! is Patroni itself)
	local k=$1
	if [ "$(id -u)" = 0 ]; then
		(cd / && AWS_ACCESS_KEY_ID=$FS_EMU_KEY AWS_SECRET_ACCESS_KEY=$FS_EMU_SECRET AWS_EC2_METADATA_DISABLED=true \
			exec setpriv --reuid=postgres --regid=postgres --init-groups patroni "$d/n$k/patroni.yml") \
			>> "$d/n$k/patroni.log" 2>&1 &
	else
		(cd / && AWS_ACCESS_KEY_ID=$FS_EMU_KEY AWS_SECRET_ACCESS_KEY=$FS_EMU_SECRET AWS_EC2_METADATA_DISABLED=true \
			exec patroni "$d/n$k/patroni.yml") >> "$d/n$k/patroni.log" 2>&1 &
	fi
	patroni_pid[$k]=$!
}
nsql() {	# nsql K SQL: one statement on node K, database e2e
	PGCONNECT_TIMEOUT=2 timeout 10 "$PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "${pg_port[$1]}" \
		-U postgres -d "${3:-e2e}" -c "$2" 2>/dev/null
}
role() {	# role K: what Patroni says node K is (primary, replica, ...), and its state
	curl -s -m 2 "http://127.0.0.1:${rest_port[$1]}/patroni" 2>/dev/null |
		"$PY" -c 'import json,sys
try: p = json.load(sys.stdin); print(p.get("role", "?") + "/" + p.get("state", "?"))
except Exception: print("down")'
}
leader() {	# the node that Patroni's leader key names, if its PostgreSQL is writable
	local k
	for k in 1 2 3; do
		if [ "$(curl -s -m 2 -o /dev/null -w '%{http_code}' "http://127.0.0.1:${rest_port[$k]}/leader")" = 200 ] &&
			[ "$(nsql $k "SELECT NOT pg_is_in_recovery()" postgres)" = t ]; then
			echo "$k"; return 0
		fi
	done
	return 1
}
wait_until() {	# wait_until SECONDS COMMAND...: until COMMAND succeeds
	local deadline=$(( $(date +%s) + $1 )); shift
	while [ "$(date +%s)" -le "$deadline" ]; do
		"$@" > /dev/null 2>&1 && return 0
		sleep 0.2
	done
	return 1
}
new_leader() {	# new_leader OLD: a leader other than OLD -> $L
	local l
	l=$(leader) || return 1
	[ "$l" != "$1" ] || return 1
	L=$l
}
replicas_stream() {	# replicas_stream K: K is the leader, with two streaming replicas, one sync in synchronous mode
	[ "$(nsql "$1" "SELECT count(*) FILTER (WHERE state = 'streaming') || '/' || count(*) FILTER (WHERE sync_state = 'sync')
	                 FROM pg_stat_replication" postgres)" = "2/$([ "${HA_SYNCHRONOUS_MODE:-true}" = true ] && echo 1 || echo 0)" ]
}
dispatcher_idles() {	# dispatcher_idles K: K is a replica whose dispatcher waits for promotion
	[ "$(nsql "$1" "SELECT pg_is_in_recovery() AND EXISTS (SELECT 1 FROM pg_stat_activity
	   WHERE backend_type = 'fairshare dispatcher' AND state = 'idle' AND query = 'waiting for promotion')" postgres)" = t ]
}
caught_up() {	# caught_up K LSN: K is a replica that has replayed up to LSN, its dispatcher idle
	[ "$(nsql "$1" "SELECT pg_last_wal_replay_lsn() >= '$2'::pg_lsn" postgres)" = t ] && dispatcher_idles "$1"
}
rejoined() {	# rejoined K: within 90 s K replays the leader's WAL as of now (the new timeline: a diverged
	# old leader must have been rewound first), and its dispatcher idles
	local target
	target=$(nsql "$L" "SELECT pg_current_wal_lsn()" postgres) || return 1
	wait_until 90 caught_up "$1" "$target"
}
api_idles() {	# api_idles K: K is a replica whose API worker waits for promotion, its port closed
	[ "$(nsql "$1" "SELECT pg_is_in_recovery() AND EXISTS (SELECT 1 FROM pg_stat_activity
	   WHERE backend_type = 'fairshare api' AND state = 'idle' AND query = 'waiting for promotion')" postgres)" = t ] &&
		! (exec 3<>"/dev/tcp/127.0.0.1/${api_port[$1]}") 2>/dev/null
}
dispatching() {	# dispatching K: K's dispatcher has taken a turn
	[ "$(nsql "$1" "SELECT turns > 0 FROM fairshare.dispatcher_state()")" = t ]
}

for k in 1 2 3; do write_config $k; done
start_patroni 1
wait_until 60 leader || { not_ok "node 1 bootstraps as the leader"; tail -n 30 "$d/n1/patroni.log"; exit 1; }
start_patroni 2; start_patroni 3
L=$(leader)
say "leader: n$L"
if wait_until 90 replicas_stream "$L"; then ok "three nodes: a leader and two replicas streaming (one synchronous in synchronous mode)"
else not_ok "the replicas stream: $(nsql "$L" "SELECT string_agg(application_name || ':' || state || ':' || sync_state, ' ') FROM pg_stat_replication" postgres)"
	tail -n 20 "$d/n2/patroni.log"; exit 1; fi

# --- the fairshare database, on the leader; the replicas follow ------------
nsql "$L" "CREATE DATABASE e2e" postgres
nsql "$L" "CREATE EXTENSION fairshare" || { not_ok "CREATE EXTENSION on the leader"; exit 1; }
nsql "$L" "
INSERT INTO fairshare.service_environments (name) VALUES ('p4');
INSERT INTO fairshare.capacity_limits VALUES ('p4', 'ml.p4d.24xlarge', 48);
INSERT INTO fairshare.job_queues (name) VALUES ('q');
INSERT INTO fairshare.queue_environments VALUES ('q', 'p4', 1);
CREATE FUNCTION public.req(fails boolean) RETURNS jsonb LANGUAGE sql AS \$\$
	SELECT jsonb_build_object('RoleArn', 'arn:aws:iam::123456789012:role/SageMakerRole',
		'AlgorithmSpecification', jsonb_build_object('TrainingImage', '123456789012.dkr.ecr.us-east-1.amazonaws.com/train:1',
													 'TrainingInputMode', 'File'),
		'OutputDataConfig', jsonb_build_object('S3OutputPath', 's3://bucket/out'),
		'ResourceConfig', jsonb_build_object('InstanceType', 'ml.p4d.24xlarge', 'InstanceCount', 1, 'VolumeSizeInGB', 50),
		'StoppingCondition', jsonb_build_object('MaxRuntimeInSeconds', 3600),
		'HyperParameters', CASE WHEN fails
			THEN '{\"emulator_outcome\": \"Failed\", \"emulator_failure_reason\": \"AlgorithmError: asked to fail\"}'::jsonb
			ELSE '{}'::jsonb END)
\$\$;" > /dev/null || { not_ok "the queue is set up"; exit 1; }
for k in 1 2 3; do
	if [ "$k" = "$L" ]; then
		wait_until 30 dispatching "$k" || not_ok "the leader's dispatcher takes turns"
	else
		wait_until 30 dispatcher_idles "$k" || not_ok "replica n$k's dispatcher idles"
	fi
done
ok "the leader's dispatcher takes turns; both replicas' dispatchers wait for promotion"
