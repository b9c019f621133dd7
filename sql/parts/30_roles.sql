-- Roles.  Roles are cluster-wide, so they are created only when missing and
-- are left in place by DROP EXTENSION (other databases may use them).
--   fairshare_admin      environments, queues, policies, shares; all jobs
--   fairshare_submitter  submits jobs; sees and terminates only its own
--   fairshare_viewer     the dashboard views only
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
