-- 05_schema.sql — the check that schema fairshare is safe to install
-- into: run before anything else, by a new installation and by every
-- update.

-- Everything in schema fairshare runs, sooner or later, as the superuser
-- who installed it (the dispatcher, pg_cron's jobs), and fairshare's own
-- search_path names it.  So the schema must not be one that another role
-- created beforehand or may create objects in (a superuser's is fine: a
-- restore may create it as another one): such a role could put a function
-- there that fairshare's statements call as the superuser.
--
-- An update checks it first too (the Makefile puts this part first in
-- every upgrade script): 0.1.0 did not check, so an installation made in
-- such a schema would otherwise keep it.
DO $schema$
DECLARE
	owner_name name;
	creator name;
BEGIN
	SELECT r.rolname INTO owner_name
	  FROM pg_catalog.pg_namespace n JOIN pg_catalog.pg_roles r ON r.oid = n.nspowner
	 WHERE n.nspname = 'fairshare' AND r.rolname <> current_user AND NOT r.rolsuper;
	IF FOUND THEN
		RAISE EXCEPTION 'schema fairshare belongs to role %, not to %, who is installing or updating fairshare', owner_name, current_user
			USING ERRCODE = 'insufficient_privilege',
				  HINT = 'Give the schema to the installing role (ALTER SCHEMA fairshare OWNER TO ...), or drop it before a new installation, and try again.';
	END IF;
	SELECT a.grantee::pg_catalog.regrole::pg_catalog.name INTO creator
	  FROM pg_catalog.pg_namespace n, pg_catalog.aclexplode(n.nspacl) a
	 WHERE n.nspname = 'fairshare' AND a.privilege_type = 'CREATE' AND a.grantee <> n.nspowner
	 LIMIT 1;
	IF FOUND THEN
		RAISE EXCEPTION 'role % may create objects in schema fairshare', coalesce(creator, 'PUBLIC')
			USING ERRCODE = 'insufficient_privilege',
				  HINT = 'REVOKE CREATE ON SCHEMA fairshare FROM it, and try again.';
	END IF;
END
$schema$;
