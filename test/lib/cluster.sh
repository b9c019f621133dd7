# test/lib/cluster.sh — start and stop throwaway PostgreSQL clusters for tests.
#
# Source this file.  PostgreSQL refuses to run as root, so when we are root
# the server runs as the "postgres" user (started from / so it never needs to
# enter the checkout).  Every cluster lives in its own temporary directory,
# listens on 127.0.0.1 only, on a free port, with trust authentication.
#
#   fs_cluster_init DIR [extra postgresql.conf lines...]   -> sets FS_PORT
#   fs_cluster_start DIR
#   fs_cluster_stop DIR [fast|immediate]
#   fs_standby_init PRIMARY-DIR DIR [extra postgresql.conf lines...]
#        a streaming standby of the running cluster PRIMARY-DIR, from
#        pg_basebackup -R over its own replication slot; start it with
#        fs_cluster_start.  Its cluster_name (the application_name it
#        streams as, for synchronous_standby_names) is the basename of DIR.
#   fs_psql DIR [psql args...]        (as superuser postgres, -X -v ON_ERROR_STOP=1)
#
# The port of a cluster is kept in DIR/port so callers can come back to it.

FS_PGBIN=${FS_PGBIN:-$(pg_config --bindir)}

fs_as_postgres() {
	if [ "$(id -u)" = 0 ]; then
		(cd / && runuser -u postgres -- "$@")
	else
		(cd / && "$@")
	fi
}

# A port nothing listens on, and (in a test, which has FS_SCRATCH) none
# this test was given before: a test picks all of its ports before anything
# binds them, and among patroni.test's sixteen-odd random picks two are the
# same about once in a hundred runs (etcd then fails: "bind: address
# already in use").
fs_free_port() {
	local p given=${FS_SCRATCH:+$FS_SCRATCH/.ports-given}
	for _ in $(seq 1 200); do
		# Below Linux's ephemeral range (32768-60999): a client socket in
		# TIME_WAIT on a port there makes the server's bind() fail even
		# though nothing listens on it.
		p=$(( 20000 + RANDOM % 12000 ))
		if [ -n "$given" ] && grep -qx "$p" "$given" 2>/dev/null; then
			continue
		fi
		if ! (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null; then
			[ -n "$given" ] && echo "$p" >> "$given"
			echo "$p"
			return 0
		fi
	done
	echo "no free port found" >&2
	return 1
}

fs_cluster_init() {
	local dir=$1; shift
	mkdir -p "$dir"
	if [ "$(id -u)" = 0 ]; then chown postgres: "$dir"; fi
	FS_PORT=$(fs_free_port) || return 1
	echo "$FS_PORT" > "$dir/port"
	if [ "$(id -u)" = 0 ]; then chown postgres: "$dir/port"; fi
	fs_as_postgres "$FS_PGBIN/initdb" -D "$dir/data" -U postgres -A trust \
		-E UTF8 --locale=C --no-sync > "$dir/initdb.log" 2>&1 || {
		cat "$dir/initdb.log" >&2; return 1; }
	{
		echo "listen_addresses = '127.0.0.1'"
		echo "port = $FS_PORT"
		echo "unix_socket_directories = '$dir'"
		echo "fsync = off"
		echo "max_worker_processes = 32"
		echo "shared_preload_libraries = 'pg_cron,fairshare'"
		echo "cron.database_name = 'postgres'"
		echo "cron.use_background_workers = on"
		echo "log_line_prefix = '%m [%p] %q%a '"
		for line in "$@"; do echo "$line"; done
	} >> "$dir/data/postgresql.conf"
}

fs_cluster_port() { cat "$1/port"; }

fs_standby_init() {
	local primary=$1 dir=$2; shift 2
	local name slot
	name=$(basename "$dir")
	slot=$(echo "$name" | tr -c 'a-z0-9_\n' '_')
	mkdir -p "$dir"
	if [ "$(id -u)" = 0 ]; then chown postgres: "$dir"; fi
	FS_PORT=$(fs_free_port) || return 1
	echo "$FS_PORT" > "$dir/port"
	if [ "$(id -u)" = 0 ]; then chown postgres: "$dir/port"; fi
	fs_as_postgres "$FS_PGBIN/pg_basebackup" -h 127.0.0.1 -p "$(fs_cluster_port "$primary")" -U postgres \
		-D "$dir/data" -R -X stream -C -S "$slot" -c fast --no-sync > "$dir/basebackup.log" 2>&1 || {
		cat "$dir/basebackup.log" >&2; return 1; }
	# The copied postgresql.conf is the primary's; later lines win.
	{
		echo "port = $FS_PORT"
		echo "unix_socket_directories = '$dir'"
		echo "cluster_name = '$name'"
		echo "hot_standby = on"
		for line in "$@"; do echo "$line"; done
	} >> "$dir/data/postgresql.conf"
}

fs_cluster_start() {
	local dir=$1
	fs_as_postgres "$FS_PGBIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start > /dev/null || {
		tail -n 40 "$dir/server.log" >&2; return 1; }
}

fs_cluster_stop() {
	local dir=$1 mode=${2:-fast}
	[ -f "$dir/data/postmaster.pid" ] || return 0
	fs_as_postgres "$FS_PGBIN/pg_ctl" -D "$dir/data" -m "$mode" -w -t 60 stop > /dev/null 2>&1 || true
}

fs_psql() {
	local dir=$1; shift
	"$FS_PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$(fs_cluster_port "$dir")" -U postgres "$@"
}
