#!/usr/bin/env bash
# bench/api/finish_cost.sh — what ListServiceJobs's share-filter indexes
# (jobs_queue_{quota,share}_{succeeded,failed}_idx, sql/parts/90_api.sql)
# cost the write path.  They take an entry only when a job with a share
# finishes, so the measure is that UPDATE alone: N RUNNING jobs, each with
# a quota share and a share identifier (both indexes), set to SUCCEEDED or
# FAILED in one statement, triggers off (session_replication_role =
# replica: the indexes' cost, not the lifecycle's), with the four indexes
# and without them (dropped in the same rolled-back transaction),
# alternating, ROUNDS times each.  Prints the medians and the cost per
# finished job.
#
# Usage: bash bench/api/finish_cost.sh   (N=200000 ROUNDS=5: about 2 minutes)
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/test/lib/setup.sh"
. "$top/test/lib/cluster.sh"
N=${N:-200000}
ROUNDS=${ROUNDS:-5}

fs_setup "$top" >/dev/null
work=$(mktemp -d /tmp/fairshare-bench.XXXXXX); chmod 755 "$work"
trap 'fs_cluster_stop "$work/c" immediate; rm -rf "$work"' EXIT
fs_cluster_init "$work/c" "shared_buffers = '512MB'" "max_wal_size = '8GB'" "fairshare.database = 'postgres'" >/dev/null
fs_cluster_start "$work/c"
fs_psql "$work/c" -c "CREATE DATABASE bench" >/dev/null
fs_psql "$work/c" -d bench -q >/dev/null <<SQL
SET client_min_messages = warning;
CREATE EXTENSION fairshare;
INSERT INTO fairshare.job_queues (name) VALUES ('q');
CREATE TABLE public.t (with_indexes boolean, ms float8);
-- One round: load N running jobs, time the UPDATE that finishes them, roll
-- everything back (the error), keep the time.
CREATE FUNCTION public.round(with_indexes boolean) RETURNS void LANGUAGE plpgsql AS \$\$
DECLARE
	t0 timestamptz;
	ms float8;
BEGIN
	BEGIN
		SET LOCAL session_replication_role = replica;
		IF NOT with_indexes THEN
			DROP INDEX fairshare.jobs_queue_quota_succeeded_idx, fairshare.jobs_queue_quota_failed_idx,
				fairshare.jobs_queue_share_succeeded_idx, fairshare.jobs_queue_share_failed_idx;
		END IF;
		INSERT INTO fairshare.jobs (job_name, job_queue, quota_share, share_identifier, request,
									instance_types, instance_count, status, created_at)
		SELECT 'j' || g, 'q', 's' || g % 50, 't' || g % 50, '{}', '{ml.p4d.24xlarge}', 1, 'RUNNING',
			   now() - g * interval '1 s'
		  FROM generate_series(1, $N) g;
		t0 := clock_timestamp();
		UPDATE fairshare.jobs SET status = (CASE WHEN job_id % 10 = 0 THEN 'FAILED' ELSE 'SUCCEEDED' END)::fairshare.job_status;
		ms := extract(epoch FROM clock_timestamp() - t0) * 1000;
		RAISE EXCEPTION USING ERRCODE = 'P0004', MESSAGE = ms::text;
	EXCEPTION WHEN assert_failure THEN
		INSERT INTO public.t VALUES (with_indexes, SQLERRM::float8);
	END;
END
\$\$;
SQL
for _ in $(seq 1 "$ROUNDS"); do
	fs_psql "$work/c" -d bench -q -c "SELECT public.round(true)" -c "SELECT public.round(false)" >/dev/null
done
fs_psql "$work/c" -d bench -At -F ' ' <<SQL
SELECT format('finishing %s jobs with a share, median of %s: with the share-filter indexes %s ms, without %s ms; '
			  '%s us a finished job (ratio %s)',
			  $N, $ROUNDS, round(w), round(wo), round(((w - wo) * 1000 / $N)::numeric, 1), round((w / wo)::numeric, 2))
  FROM (SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY ms) FILTER (WHERE with_indexes) AS w,
			   percentile_disc(0.5) WITHIN GROUP (ORDER BY ms) FILTER (WHERE NOT with_indexes) AS wo
		  FROM public.t) x;
SQL
