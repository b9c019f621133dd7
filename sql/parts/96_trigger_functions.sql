-- 96_trigger_functions.sql — nobody but the owner may attach fairshare's
-- trigger functions to a table.
--
-- Functions are executable by PUBLIC unless revoked, and CREATE TRIGGER
-- needs only EXECUTE on the function and the TRIGGER right on the table --
-- which every role has on a temporary table of its own.  A trigger function
-- attached to a table it was not written for reads that table's rows as if
-- they were fairshare.jobs': _record_transitions() (SECURITY DEFINER) would
-- write the caller's rows into the history as the owner, and the C
-- triggers would read columns of other types.  Each of them also refuses a
-- table other than its own, but no role needs to attach one: the triggers
-- fairshare creates are attached by the install script, and a trigger
-- fires without any privilege check on its function.  Run last, so that
-- every trigger and event trigger function of every part is covered.
DO $revoke$
DECLARE
	f regprocedure;
BEGIN
	FOR f IN
		SELECT p.oid::regprocedure
		  FROM pg_catalog.pg_proc p
		 WHERE p.pronamespace = 'fairshare'::regnamespace
		   AND p.prorettype IN ('pg_catalog.trigger'::regtype, 'pg_catalog.event_trigger'::regtype)
		 ORDER BY p.oid
	LOOP
		EXECUTE pg_catalog.format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', f);
	END LOOP;
END
$revoke$;
