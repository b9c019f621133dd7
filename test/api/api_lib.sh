# test/api/api_lib.sh — helpers for the AWS Batch API tests.  Source
# test/lib/cluster.sh and test/lib/e2e.sh first.
#
#   fs_api_cluster DIR [postgresql.conf lines...]
#        an e2e cluster (emulator endpoint, database e2e) whose API server
#        listens on 127.0.0.1:$FS_API_PORT; waits until it answers
#   fs_api_key DIR ROLE            -> "ACCESS_KEY_ID SECRET" of a new key
#   fs_api_wait_port PORT SECONDS  until something accepts on the port
#   fs_api_py SCRIPT [args...]     the image's Python (boto3) on a test script
FS_BOTO_PYTHON=${FS_BOTO_PYTHON:-python3}

fs_api_wait_port() {
	local port=$1 seconds=$2 deadline
	deadline=$(( $(date +%s) + seconds ))
	while [ "$(date +%s)" -le "$deadline" ]; do
		(exec 3<>/dev/tcp/127.0.0.1/"$port") 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

fs_api_cluster() {
	local dir=$1; shift
	FS_API_PORT=$(fs_free_port) || return 1
	fs_e2e_cluster "$dir" "fairshare.api_port = $FS_API_PORT" "$@" || return 1
	fs_api_wait_port "$FS_API_PORT" 30 || { echo "the API server did not listen" >&2; tail -n 20 "$dir/server.log" >&2; return 1; }
}

fs_api_key() {
	fs_sql "$1" "SELECT access_key_id || ' ' || secret_access_key FROM fairshare.create_api_key('$2')"
}

fs_api_py() {
	"$FS_BOTO_PYTHON" "$@"
}
