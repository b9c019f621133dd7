# test/lib/cron.sh — how tests show fairshare's pg_cron commands.
#
# Source this file.  Each command runs its body only in the database whose
# OID its job is named for (src/housekeeping/cron_jobs.c, fs_cron_command);
# FS_CRON_COMMAND_SHOWN is an SQL expression over cron.job that writes such
# a command as "guarded(OID) BODY", and any other command as it is.
FS_CRON_COMMAND_SHOWN="regexp_replace(command,
	'^DO [\$]fairshare[\$] BEGIN IF [(]SELECT d[.]oid FROM pg_catalog[.]pg_database d WHERE d[.]datname OPERATOR[(]pg_catalog[.]=[)] pg_catalog[.]current_database[(][)][)] OPERATOR[(]pg_catalog[.]<>[)] ([0-9]+)::pg_catalog[.]oid THEN RAISE EXCEPTION .* END IF; (.*); END [\$]fairshare[\$]\$',
	'guarded(\\1) \\2')"
