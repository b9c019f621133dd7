-- 95_dump.sql — pg_dump must save what users put in fairshare's tables.
--
-- Tables created by an extension script are not dumped unless marked:
-- without this, a pg_dump / pg_restore of the database would keep the
-- extension and lose every queue, share and job.  The default alert rules
-- are inserted by the install script, so only the others are dumped (a
-- change to a default rule's threshold is not kept across a dump).  One
-- call per statement: each call updates the extension's catalog row.
DO $dump$
DECLARE
	t text;
BEGIN
	FOREACH t IN ARRAY ARRAY['service_environments', 'capacity_limits', 'scheduling_policies',
							 'share_distribution', 'job_queues', 'queue_environments', 'quota_shares',
							 'quota_share_limits', 'jobs', 'job_attempts', 'job_events', 'share_usage',
							 'capacity_backoffs', 'utilization_history', 'alert_conditions', 'alert_events',
							 'installation', 'orphan_sweep']
	LOOP
		PERFORM pg_catalog.pg_extension_config_dump(('fairshare.' || t)::regclass, '');
	END LOOP;
	PERFORM pg_catalog.pg_extension_config_dump('fairshare.alert_rules'::regclass,
		$$WHERE name NOT IN ('job_waiting', 'failure_burst', 'idle_capacity', 'share_starved',
							'orphaned_training_jobs')$$);
	FOREACH t IN ARRAY ARRAY['jobs_job_id_seq', 'job_events_event_id_seq', 'alert_events_alert_id_seq']
	LOOP
		PERFORM pg_catalog.pg_extension_config_dump(('fairshare.' || t)::regclass, '');
	END LOOP;
END
$dump$;
