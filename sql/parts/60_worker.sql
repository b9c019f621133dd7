-- 60_worker.sql — what the dispatcher (src/worker/) needs from SQL:
-- wake-on-commit, its state, its lock, and the CreateTrainingJob body of an
-- attempt.

-- Any transaction that inserts or changes jobs wakes the dispatcher when it
-- commits (once per transaction; not on rollback).
CREATE FUNCTION fairshare._wake_dispatcher()
RETURNS trigger
AS 'MODULE_PATHNAME', 'fairshare_wake_dispatcher'
LANGUAGE C
SET search_path = pg_catalog, fairshare, pg_temp;
CREATE TRIGGER wake_dispatcher AFTER INSERT OR UPDATE ON fairshare.jobs
	FOR EACH STATEMENT EXECUTE FUNCTION fairshare._wake_dispatcher();

CREATE FUNCTION fairshare.dispatcher_state(OUT pid integer, OUT wake_requests bigint,
										   OUT turns bigint, OUT last_turn_at timestamptz)
AS 'MODULE_PATHNAME', 'fairshare_dispatcher_state'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, fairshare, pg_temp;
COMMENT ON FUNCTION fairshare.dispatcher_state() IS
	'The dispatcher''s process id (NULL when none runs), committed transactions that woke it, turns it completed, and when the last ended.';

-- The CreateTrainingJob body for a job's current attempt: the submitted
-- request with the attempt's name, the placement's instance type and count,
-- and as SageMaker Tags the request's, the job's tags (which win on a key
-- both have: SageMaker refuses a key twice) and fairshare's own four: the
-- installation, the job id, the queue, and when the job was submitted (in
-- microseconds since 1970, as the dispatcher's work query computes it),
-- which tells this job from a lost one that had its id (outcome.c,
-- ours_by_tags); the dispatcher sends that tag with its own value, the
-- same time and a signature of the training job name that only it can make
-- (src/worker/attempts.c, dispatch_submission_tag), so a training job
-- someone else made under the name is never taken for the job's.  SageMaker
-- requires a StoppingCondition; a request without one gets SageMaker's
-- default limit, a day, which is also the time limit the scheduler assumed.
CREATE FUNCTION fairshare.create_training_job_request(job fairshare.jobs)
RETURNS jsonb LANGUAGE sql STABLE SET search_path = pg_catalog, fairshare, pg_temp AS $$
	SELECT CASE WHEN job.request ? 'StoppingCondition' THEN '{}'::jsonb
				ELSE '{"StoppingCondition": {"MaxRuntimeInSeconds": 86400}}'::jsonb END
		   || job.request || jsonb_build_object(
		'TrainingJobName', job.training_job_name,
		'ResourceConfig', coalesce(job.request -> 'ResourceConfig', '{}')
						  || jsonb_build_object('InstanceType', job.instance_type,
												'InstanceCount', job.instance_count),
		-- (Tags that are not a list, which 0.1.0 took, go as they are:
		-- SageMaker refuses that one job, not every create of the turn.)
		'Tags', CASE WHEN jsonb_typeof(job.request -> 'Tags') = 'array'
					 THEN coalesce((SELECT jsonb_agg(t.tag ORDER BY t.n)
									  FROM jsonb_array_elements(job.request -> 'Tags') WITH ORDINALITY t (tag, n)
									 WHERE job.tags IS NULL OR NOT job.tags ? (t.tag ->> 'Key')), '[]')
					 ELSE coalesce(job.request -> 'Tags', '[]') END
				|| coalesce((SELECT jsonb_agg(jsonb_build_object('Key', key, 'Value', value) ORDER BY key)
							   FROM jsonb_each_text(job.tags)), '[]')
				|| jsonb_build_array(
					   jsonb_build_object('Key', 'fairshare:installation', 'Value', fairshare.installation_id()::text),
					   jsonb_build_object('Key', 'fairshare:job-id', 'Value', job.job_id::text),
					   jsonb_build_object('Key', 'fairshare:job-queue', 'Value', job.job_queue),
					   jsonb_build_object('Key', 'fairshare:job-submitted',
										  'Value', ((extract(epoch FROM job.created_at) * 1000000)::bigint)::text)))
$$;
COMMENT ON FUNCTION fairshare.create_training_job_request(fairshare.jobs) IS
	'The CreateTrainingJob request the dispatcher sends for the job''s current attempt.';

-- A superuser's session may hold the dispatcher's lock for a while (for
-- maintenance): no dispatcher acts on the database meanwhile.  A running
-- dispatcher holds it until it exits, so with wait the call waits for that.
CREATE FUNCTION fairshare.hold_dispatcher_lock(wait boolean DEFAULT true)
RETURNS boolean
AS 'MODULE_PATHNAME', 'fairshare_hold_dispatcher_lock'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, fairshare, pg_temp;
COMMENT ON FUNCTION fairshare.hold_dispatcher_lock(boolean) IS
	'Takes the dispatcher''s lock for this session (superuser): no dispatcher acts on this database until release_dispatcher_lock() or the session''s end.';
CREATE FUNCTION fairshare.release_dispatcher_lock()
RETURNS boolean
AS 'MODULE_PATHNAME', 'fairshare_release_dispatcher_lock'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, fairshare, pg_temp;
COMMENT ON FUNCTION fairshare.release_dispatcher_lock() IS
	'Lets go of the dispatcher''s lock this session took with hold_dispatcher_lock().';
REVOKE ALL ON FUNCTION fairshare.hold_dispatcher_lock(boolean), fairshare.release_dispatcher_lock() FROM PUBLIC;

REVOKE ALL ON FUNCTION fairshare.dispatcher_state() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fairshare.dispatcher_state() TO fairshare_admin, fairshare_viewer;
