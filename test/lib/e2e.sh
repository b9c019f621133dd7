# test/lib/e2e.sh — end-to-end tests of the dispatcher against the local
# SageMaker emulator.  Source test/lib/cluster.sh first.
#
#   fs_emulator_start DIR [emulator args...]   -> FS_EMU_PORT
#   fs_emulator_stop DIR
#   fs_emu METHOD PATH [JSON] [--get a.b]       the emulator's control API
#   fs_e2e_cluster DIR [postgresql.conf lines...]
#        a cluster whose dispatcher works on database "e2e", with the
#        extension created and the emulator's credentials and endpoint
#   fs_sql DIR SQL                              one statement in e2e, -At
#   fs_wait DIR SQL SECONDS                     until SQL returns t (else fail)
#
# Every server and emulator started here must be stopped by the caller's
# trap (fs_cluster_stop, fs_emulator_stop).

FS_PYTHON=${FS_PYTHON:-/usr/bin/python3}
FS_EMU_KEY=AKIAEMULATOR00000000
FS_EMU_SECRET=emulator/secret/access/key

fs_emulator_start() {
	local dir=$1; shift
	mkdir -p "$dir"
	rm -f "$dir/emulator.port"
	"$FS_PYTHON" "$FS_TOP/test/emulator/sagemaker_emulator.py" --port 0 --port-file "$dir/emulator.port" \
		--access-key-id "$FS_EMU_KEY" --secret-access-key "$FS_EMU_SECRET" "$@" \
		> "$dir/emulator.log" 2>&1 &
	echo $! > "$dir/emulator.pid"
	for _ in $(seq 1 100); do
		[ -s "$dir/emulator.port" ] && break
		sleep 0.05
	done
	FS_EMU_PORT=$(cat "$dir/emulator.port" 2>/dev/null) || { cat "$dir/emulator.log" >&2; return 1; }
	echo "$FS_EMU_PORT" > "$dir/emulator.port.keep"
}

fs_emulator_stop() {
	local dir=$1
	[ -f "$dir/emulator.pid" ] && kill "$(cat "$dir/emulator.pid")" 2>/dev/null
	rm -f "$dir/emulator.pid"
}

fs_emu() {
	"$FS_PYTHON" "$FS_TOP/test/lib/emuctl.py" "$FS_EMU_PORT" "$@"
}

fs_e2e_cluster() {
	local dir=$1; shift
	fs_cluster_init "$dir" "fairshare.database = 'e2e'" \
		"fairshare.endpoint_url = 'http://127.0.0.1:$FS_EMU_PORT'" \
		"fairshare.region = 'us-east-1'" \
		"fairshare.poll_interval = '200ms'" \
		"fairshare.preemption_min_runtime = 0" \
		"log_min_messages = warning" "$@" > /dev/null || return 1
	AWS_ACCESS_KEY_ID=$FS_EMU_KEY AWS_SECRET_ACCESS_KEY=$FS_EMU_SECRET AWS_EC2_METADATA_DISABLED=true \
		fs_cluster_start "$dir" || return 1
	fs_psql "$dir" -c "CREATE DATABASE e2e" > /dev/null &&
		fs_psql "$dir" -d e2e -c "CREATE EXTENSION fairshare" > /dev/null
}

fs_sql() {
	fs_psql "$1" -d e2e -At -c "$2"
}

fs_wait() {
	local dir=$1 sql=$2 seconds=$3
	local deadline=$(( $(date +%s) + seconds ))
	while [ "$(date +%s)" -le "$deadline" ]; do
		[ "$(fs_sql "$dir" "$sql" 2>/dev/null)" = t ] && return 0
		sleep 0.1
	done
	echo "timed out after ${seconds}s waiting for: $sql" >&2
	return 1
}
