-- Roles.  Roles are cluster-wide, so they are created only when missing and
-- are left in place by DROP EXTENSION (other databases may use them).
--   fairshare_admin      environments, queues, policies, shares; all jobs
--   fairshare_submitter  submits jobs; sees and terminates only its own
--   fairshare_viewer     the dashboard views and the housekeeping tables
DO $roles$
DECLARE
	r text;
BEGIN
	FOREACH r IN ARRAY ARRAY['fairshare_admin', 'fairshare_submitter', 'fairshare_viewer']
	LOOP
		IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r) THEN
			EXECUTE format('CREATE ROLE %I NOLOGIN', r);
		END IF;
	END LOOP;
END
$roles$;

GRANT USAGE ON SCHEMA fairshare TO fairshare_admin, fairshare_submitter, fairshare_viewer;

-- Admins manage the configuration and may act on every job.
GRANT SELECT, INSERT, UPDATE, DELETE ON
	fairshare.service_environments, fairshare.capacity_limits,
	fairshare.scheduling_policies, fairshare.share_distribution,
	fairshare.job_queues, fairshare.queue_environments,
	fairshare.quota_shares, fairshare.quota_share_limits,
	fairshare.jobs
	TO fairshare_admin;
-- History is written by the lifecycle trigger (as the owner), not by hand:
-- admins may read and delete it, and set an open attempt's outcome and
-- reason (_guard_closed_attempt() keeps the rest), but not insert rows.
GRANT SELECT, UPDATE, DELETE ON fairshare.job_attempts TO fairshare_admin;
GRANT SELECT, DELETE ON fairshare.job_events TO fairshare_admin;

-- Submitters read the configuration (to know where to submit) and their own
-- jobs, and insert jobs naming only the columns a submission may set.
GRANT SELECT ON
	fairshare.service_environments, fairshare.capacity_limits,
	fairshare.scheduling_policies, fairshare.share_distribution,
	fairshare.job_queues, fairshare.queue_environments,
	fairshare.quota_shares, fairshare.quota_share_limits,
	fairshare.jobs, fairshare.job_attempts, fairshare.job_events
	TO fairshare_submitter;
-- INSERT on every column but job_id (an identity: OVERRIDING SYSTEM VALUE
-- would let a submitter take ids the sequence hands out later), so that a
-- submission naming status, placement or submitted_by reaches the trigger
-- and gets its clear "column ... is set by fairshare" error rather than a
-- bare "permission denied for table jobs".  The trigger refuses them.
DO $grant$
BEGIN
	EXECUTE (SELECT format('GRANT INSERT (%s) ON fairshare.jobs TO fairshare_submitter',
						   string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum))
			   FROM pg_attribute a
			  WHERE a.attrelid = 'fairshare.jobs'::regclass AND a.attnum > 0
				AND NOT a.attisdropped AND a.attname <> 'job_id');
END
$grant$;

-- The role the session acts as, by OID (current_user gives only its name).
CREATE FUNCTION fairshare._current_role_oid()
RETURNS oid
AS 'MODULE_PATHNAME', 'fairshare_current_role_oid'
LANGUAGE C STABLE PARALLEL SAFE;

-- Row-level security: a submitter sees only the jobs it submitted, and the
-- attempts and events of those jobs.  A job belongs to the role that
-- submitted it: its name and its OID must both match, so a role renamed
-- away loses sight of its jobs (an admin can hand them over) and a new role
-- given the old name never gains it.  The extension's owner (the worker,
-- and the functions that switch to it) is not subject to these policies.
ALTER TABLE fairshare.jobs ENABLE ROW LEVEL SECURITY;
CREATE POLICY admin_all ON fairshare.jobs TO fairshare_admin USING (true) WITH CHECK (true);
CREATE POLICY submitter_select_own ON fairshare.jobs FOR SELECT TO fairshare_submitter
	USING (submitted_by = current_user AND submitter_oid = fairshare._current_role_oid());
CREATE POLICY submitter_insert_own ON fairshare.jobs FOR INSERT TO fairshare_submitter
	WITH CHECK (submitted_by = current_user AND submitter_oid = fairshare._current_role_oid());

ALTER TABLE fairshare.job_attempts ENABLE ROW LEVEL SECURITY;
CREATE POLICY admin_all ON fairshare.job_attempts TO fairshare_admin USING (true) WITH CHECK (true);
CREATE POLICY submitter_select_own ON fairshare.job_attempts FOR SELECT TO fairshare_submitter
	USING (EXISTS (SELECT 1 FROM fairshare.jobs j WHERE j.job_id = job_attempts.job_id));

ALTER TABLE fairshare.job_events ENABLE ROW LEVEL SECURITY;
CREATE POLICY admin_all ON fairshare.job_events TO fairshare_admin USING (true) WITH CHECK (true);
CREATE POLICY submitter_select_own ON fairshare.job_events FOR SELECT TO fairshare_submitter
	USING (EXISTS (SELECT 1 FROM fairshare.jobs j WHERE j.job_id = job_events.job_id));

-- Job control: callable by admins and submitters (row-level security then
-- decides which jobs each may act on).
REVOKE ALL ON FUNCTION fairshare.terminate_job(bigint, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION fairshare.update_job_priority(bigint, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fairshare.terminate_job(bigint, text) TO fairshare_admin, fairshare_submitter;
GRANT EXECUTE ON FUNCTION fairshare.update_job_priority(bigint, integer) TO fairshare_admin, fairshare_submitter;
-- An admin's change of an environment's endpoint takes the pass lock
-- (fairshare._jobs_placed_on), as a pass of schedule() does.
GRANT EXECUTE ON FUNCTION fairshare._lock(text) TO fairshare_admin;
