-- sql/parts/75_orphans.sql — training jobs at SageMaker that carry this
-- installation's tag but that no job knows (docs/ha.md: what a failover
-- under asynchronous replication leaves running).
--
--   fairshare.sweep_orphaned_training_jobs()  ListTrainingJobs + ListTags
--        (src/worker/orphans.c); the dispatcher runs the same sweep on its
--        own, at promotion and every fairshare.orphan_sweep_interval
--   fairshare.orphan_sweep                    what the last sweep found
--   fairshare.orphaned_training_jobs          those still unknown to any job
-- The ORPHANED_TRAINING_JOBS alert rule (80_housekeeping.sql) reports them.

CREATE TABLE fairshare.orphan_sweep (
	training_job_name	text PRIMARY KEY,
	training_job_arn	text NOT NULL,
	training_job_status	text,
	job_id_tag			text,
	creation_time		timestamptz,
	first_seen			timestamptz NOT NULL,
	last_seen			timestamptz NOT NULL
);
COMMENT ON TABLE fairshare.orphan_sweep IS
	'Training jobs the last orphan sweep found at SageMaker with this installation''s fairshare:installation tag '
	'and no job or attempt of fairshare: name, ARN, status and CreationTime as ListTrainingJobs gave them, '
	'job_id_tag the fairshare:job-id tag (the job that created it, on a primary whose WAL was lost), and '
	'when a sweep first and last found it.';

-- The training jobs of attempts deleted before the retention cutoff
-- reached them: finished jobs an admin deleted by hand, or with
-- apply_retention_batch(older_than) earlier than the cutoff.  The sweep
-- lists training jobs back to the cutoff, and would take these for
-- orphans.  Only attempts that recorded an ARN: one that ended without
-- never had a training job, and one of its name is another's (below).  A
-- training job is made before its attempt ends, so each row is kept until
-- the cutoff is an hour past that end (the attempt's deletion, if it had
-- none).  Retention, which deletes only what finished before the cutoff,
-- leaves a few: attempts that ended in the hour before it.
CREATE TABLE fairshare.forgotten_training_jobs (
	training_job_name	text NOT NULL,
	training_job_arn	text NOT NULL,
	attempt_ended_at	timestamptz NOT NULL
);
CREATE INDEX forgotten_training_jobs_name_idx ON fairshare.forgotten_training_jobs (training_job_name);
CREATE INDEX forgotten_training_jobs_ended_idx ON fairshare.forgotten_training_jobs (attempt_ended_at);
COMMENT ON TABLE fairshare.forgotten_training_jobs IS
	'Training jobs of attempts deleted before the retention cutoff reached them (finished jobs deleted early): '
	'not orphans.  Written by a trigger on job_attempts; each row goes once the cutoff is an hour past it.';
SELECT pg_catalog.pg_extension_config_dump('fairshare.forgotten_training_jobs'::regclass, '');

CREATE FUNCTION fairshare._remember_deleted_attempts()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	keep_from timestamptz := fairshare.retention_cutoff() - interval '1 hour';
BEGIN
	-- It runs as the owner, on the rows of the table that fired it: only
	-- job_attempts' own statement trigger may (96_trigger_functions.sql).
	IF TG_RELID <> 'fairshare.job_attempts'::regclass OR TG_LEVEL <> 'STATEMENT' OR TG_OP <> 'DELETE' THEN
		RAISE EXCEPTION 'fairshare._remember_deleted_attempts() is the AFTER DELETE statement trigger of fairshare.job_attempts only'
			USING ERRCODE = '39P01';
	END IF;
	-- Rows another deletion is pruning are left to the next one: never
	-- waited for, never a deadlock between two deletions.
	DELETE FROM fairshare.forgotten_training_jobs f
	 WHERE f.ctid = ANY (ARRAY(SELECT o.ctid FROM fairshare.forgotten_training_jobs o
								WHERE o.attempt_ended_at < keep_from FOR UPDATE SKIP LOCKED));
	INSERT INTO fairshare.forgotten_training_jobs (training_job_name, training_job_arn, attempt_ended_at)
	SELECT d.training_job_name, d.training_job_arn, coalesce(d.stopped_at, now())
	  FROM deleted_attempts d
	 WHERE d.training_job_arn IS NOT NULL AND coalesce(d.stopped_at, now()) >= keep_from;
	RETURN NULL;
END
$$;
REVOKE ALL ON FUNCTION fairshare._remember_deleted_attempts() FROM PUBLIC;
CREATE TRIGGER remember_deleted AFTER DELETE ON fairshare.job_attempts
	REFERENCING OLD TABLE AS deleted_attempts
	FOR EACH STATEMENT EXECUTE FUNCTION fairshare._remember_deleted_attempts();

-- A training job is known to a job or an attempt that recorded its ARN,
-- and to one still placed (an attempt not ended) without an ARN yet: its
-- create may be in flight.  Not to one that ended without one: it never
-- had a training job of its own, and a training job of its name is
-- another's -- one that a job lost by an asynchronous failover made, which
-- refused this attempt as TrainingJobNameConflict (src/worker/outcome.c,
-- ours_by_tags).  Nor is one an attempt deleted early had
-- (forgotten_training_jobs).  The sweep's unknown_names_stmt
-- (src/worker/orphans.c) applies the same rule; the view reads the tables
-- as its owner.
CREATE VIEW fairshare.orphaned_training_jobs AS
SELECT o.training_job_name, o.training_job_arn, o.training_job_status, o.job_id_tag, o.creation_time,
	   o.first_seen, o.last_seen
  FROM fairshare.orphan_sweep o
 WHERE NOT EXISTS (SELECT 1 FROM fairshare.jobs j
					WHERE j.training_job_name = o.training_job_name
					  AND (j.training_job_arn = o.training_job_arn
						   OR j.training_job_arn IS NULL AND j.status IN ('SCHEDULED', 'STARTING', 'RUNNING')))
   AND NOT EXISTS (SELECT 1 FROM fairshare.job_attempts a
					WHERE a.training_job_name = o.training_job_name
					  AND (a.training_job_arn = o.training_job_arn OR a.training_job_arn IS NULL AND a.outcome IS NULL))
   AND NOT EXISTS (SELECT 1 FROM fairshare.forgotten_training_jobs f
					WHERE f.training_job_name = o.training_job_name AND f.training_job_arn = o.training_job_arn);
COMMENT ON VIEW fairshare.orphaned_training_jobs IS
	'Training jobs at SageMaker tagged with this installation that no job knows (found by '
	'fairshare.sweep_orphaned_training_jobs()): left by a failover that lost the end of the WAL.  '
	'fairshare never adopts or stops them; stop them at SageMaker if they should not run.';

CREATE FUNCTION fairshare.sweep_orphaned_training_jobs()
RETURNS integer
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, fairshare, pg_temp
AS 'MODULE_PATHNAME', 'fairshare_sweep_orphaned_training_jobs';
COMMENT ON FUNCTION fairshare.sweep_orphaned_training_jobs() IS
	'List the training jobs at SageMaker whose names carry this installation''s id, keep those no job knows and '
	'whose fairshare:installation tag is this installation''s, in fairshare.orphan_sweep, and move job ids on past '
	'their fairshare:job-id tags; returns how many.  '
	'The dispatcher sweeps on its own when it starts on a primary and every fairshare.orphan_sweep_interval '
	'(docs/ha.md); call this to sweep at once.';

REVOKE ALL ON FUNCTION fairshare.sweep_orphaned_training_jobs() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fairshare.sweep_orphaned_training_jobs() TO fairshare_admin;
GRANT SELECT ON fairshare.orphaned_training_jobs TO fairshare_viewer, fairshare_admin;
GRANT SELECT ON fairshare.orphan_sweep TO fairshare_admin;
