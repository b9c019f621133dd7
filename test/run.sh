#!/usr/bin/env bash
# test/run.sh — run every fairshare test on this machine, from nothing.
#
# Installs the missing apt packages, builds and installs the extension,
# starts a throwaway cluster (as the postgres user, on 127.0.0.1) with
# shared_preload_libraries = 'pg_cron,fairshare', and runs:
#   1. the pg_regress suite (test/regress/sql, expected/)
#   2. the isolation suite (test/isolation/specs)
#   3. every test/*/*.test script (C unit and property tests, the emulator,
#      end-to-end tests that start their own clusters, ...)
# then tears the cluster down and prints "N passed, N failed".  Exit status
# is non-zero when anything failed.
#
# A *.test script passes when it exits 0.  If its last output line reads
# "N passed, M failed" those counts are used instead of 1/0.  Scripts get
# FS_TOP (checkout), FS_PYTHON (Debian's python3), FS_SCRATCH (a private
# temporary directory) and PGHOST/PGPORT/PGUSER of the shared cluster.
#
# Usage: bash test/run.sh [pattern]   (pattern filters the *.test scripts;
#        the pattern "suites" runs the pg_regress and isolation suites alone)
set -u
FS_TOP=$(cd "$(dirname "$0")/.." && pwd)
export FS_TOP
. "$FS_TOP/test/lib/setup.sh"
. "$FS_TOP/test/lib/cluster.sh"
pattern=${1:-}

passed=0
failed=0
failures=""

record() {	# record NAME PASSED FAILED
	passed=$((passed + $2))
	failed=$((failed + $3))
	if [ "$3" != 0 ]; then failures="$failures $1"; fi
}

fs_setup "$FS_TOP" $FS_APT_TEST_PACKAGES || { echo "setup failed"; echo "0 passed, 1 failed"; exit 1; }
FS_PGBIN=$(pg_config --bindir)
# The API tests' client (FS_BOTO_PYTHON); a full run without one fails here
# too, saying why, besides in each of those tests.
if ! fs_find_boto_python && [ -z "$pattern" ]; then
	record boto3 0 1
fi

work=$(mktemp -d /tmp/fairshare-test.XXXXXX)
chmod 755 "$work"
cluster="$work/cluster"
cleanup() { fs_cluster_stop "$cluster" immediate; rm -rf "$work"; }
trap cleanup EXIT

# The suites drop and create the extension between files with jobs left
# placed (no dispatcher serves their databases): let them
# (security.sql checks the refusal itself).
fs_cluster_init "$cluster" "fairshare.database = 'postgres'" "fairshare.drop_with_placed_jobs = on" || exit 1
fs_cluster_start "$cluster" || exit 1
export PGHOST=127.0.0.1 PGPORT=$(fs_cluster_port "$cluster") PGUSER=postgres

# pg_regress writes results into the checkout; when root runs us the
# server-side files stay root's, which is fine for pg_regress.
suite() {	# suite TARGET-NAME make-args...
	local name=$1; shift
	local log="$work/$name.log"
	make -C "$FS_TOP" -s "$@" NO_LOCALE=1 PGHOST=$PGHOST PGPORT=$PGPORT PGUSER=$PGUSER > "$log" 2>&1
	local rc=$?
	local ok bad
	ok=$(grep -cE '\.\.\. +ok' "$log")
	bad=$(grep -cE '\.\.\. +FAILED' "$log")
	if [ $rc != 0 ] && [ "$bad" = 0 ]; then bad=1; fi
	echo "== $name: $ok passed, $bad failed"
	if [ "$bad" != 0 ]; then
		cat "$log"
		[ -f "$FS_TOP/regression.diffs" ] && head -n 200 "$FS_TOP/regression.diffs"
		[ -f "$FS_TOP/output_iso/regression.diffs" ] && head -n 200 "$FS_TOP/output_iso/regression.diffs"
	fi
	record "$name" "$ok" "$bad"
}

if [ -z "$pattern" ] || [ "$pattern" = suites ]; then
	suite regress installcheck ISOLATION=
	suite isolation installcheck REGRESS=
fi

for t in $(ls "$FS_TOP"/test/*/*.test 2>/dev/null | sort); do
	name=${t#$FS_TOP/}
	if [ -n "$pattern" ] && [[ "$name" != *$pattern* ]]; then continue; fi
	# named by the whole path: two tests may share a file name (api/standby, worker/standby)
	scratch="$work/scratch.$(echo "$name" | tr / _)"
	mkdir -p "$scratch"; chmod 777 "$scratch"
	log="$scratch/output.log"
	start=$(date +%s)
	FS_SCRATCH=$scratch FS_PYTHON=/usr/bin/python3 bash "$t" > "$log" 2>&1
	rc=$?
	secs=$(( $(date +%s) - start ))
	last=$(tail -n 1 "$log")
	if [[ "$last" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
		p=${BASH_REMATCH[1]}; f=${BASH_REMATCH[2]}
		if [ $rc != 0 ] && [ "$f" = 0 ]; then f=1; fi
	elif [ $rc = 0 ]; then p=1; f=0
	else p=0; f=1
	fi
	echo "== $name: $p passed, $f failed (${secs}s)"
	if [ "$f" != 0 ]; then tail -n 80 "$log"; fi
	record "$name" "$p" "$f"
done

if [ -n "$failures" ]; then echo "failed:$failures"; fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
