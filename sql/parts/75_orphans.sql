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

-- Does a job or an attempt know the training job of this name and ARN?
-- One that recorded its ARN does; so does one still placed (or an attempt
-- not ended) without an ARN yet: its create may be in flight.  An attempt
-- that ended without one does not: it never had a training job of its own,
-- and a training job of its name is another's -- one that a lost job made
-- before an asynchronous failover, which refused this attempt as
-- TrainingJobNameConflict (src/worker/outcome.c, ours_by_tags).  As the
-- owner: the view's readers may read no job.
CREATE FUNCTION fairshare._training_job_known(name text, arn text)
RETURNS boolean LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, fairshare, pg_temp AS $$
	SELECT EXISTS (SELECT 1 FROM fairshare.jobs j
					WHERE j.training_job_name = name
					  AND (j.training_job_arn = arn
						   OR j.training_job_arn IS NULL AND j.status IN ('SCHEDULED', 'STARTING', 'RUNNING')))
		OR EXISTS (SELECT 1 FROM fairshare.job_attempts a
					WHERE a.training_job_name = name
					  AND (a.training_job_arn = arn OR a.training_job_arn IS NULL AND a.outcome IS NULL))
$$;

CREATE VIEW fairshare.orphaned_training_jobs AS
SELECT o.training_job_name, o.training_job_arn, o.training_job_status, o.job_id_tag, o.creation_time,
	   o.first_seen, o.last_seen
  FROM fairshare.orphan_sweep o
 WHERE NOT fairshare._training_job_known(o.training_job_name, o.training_job_arn);
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
REVOKE ALL ON FUNCTION fairshare._training_job_known(text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fairshare._training_job_known(text, text) TO fairshare_viewer, fairshare_admin;
GRANT SELECT ON fairshare.orphan_sweep TO fairshare_admin;
