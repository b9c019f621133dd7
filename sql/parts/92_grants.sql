-- 92_role_arn_grants.sql — which IAM roles a submitter's jobs may run as.
--
-- The dispatcher creates every training job with the server's AWS
-- credentials, so it is the dispatcher's principal that passes a job's
-- RoleArn to SageMaker, whoever submitted the job.  AWS Batch asks the
-- caller of SubmitServiceJob for iam:PassRole on the role; this table is
-- fairshare's equivalent: with fairshare.require_role_arn_grant on, a job
-- may name only a RoleArn granted here to a role whose privileges its
-- submitter has (src/tables/submission.c checks it at INSERT, from the
-- per-backend configuration cache).  docs/security.md, "Which RoleArn a
-- submitter may name".
--
-- A grant is kept by the role's OID and name, as an API key is, and counts
-- only while they still go together: a regrole records no dependency, so
-- a dropped role's grants stay behind, and its OID may later be another
-- role's.
CREATE TABLE fairshare.role_arn_grants (
	role		regrole NOT NULL,
	role_name	name NOT NULL,
	role_arn	text NOT NULL,
	granted_at	timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (role, role_arn)
);
COMMENT ON TABLE fairshare.role_arn_grants IS
	'The IAM roles (RoleArn) the jobs of each role and its members may run as, when '
	'fairshare.require_role_arn_grant is on: an exact role ARN, a prefix of one ending in *, or * for any.  '
	'Admins insert and delete grants: INSERT INTO fairshare.role_arn_grants (role, role_arn) VALUES (''team_a'', '
	'''arn:aws:iam::123456789012:role/team-a-*'').';
COMMENT ON COLUMN fairshare.role_arn_grants.role_name IS
	'The role''s name when it was granted (set by fairshare): the grant counts only while role still has it.';

-- Fills role_name and checks the pattern, with messages that say what is
-- wrong; runs as the admin who writes the row.
CREATE FUNCTION fairshare._check_role_arn_grant()
RETURNS trigger LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
BEGIN
	IF TG_OP <> 'INSERT' OR TG_LEVEL <> 'ROW' OR TG_RELID <> 'fairshare.role_arn_grants'::regclass THEN
		RAISE EXCEPTION 'fairshare._check_role_arn_grant() is the BEFORE INSERT row trigger of fairshare.role_arn_grants only'
			USING ERRCODE = '39P01';
	END IF;
	SELECT r.rolname INTO NEW.role_name FROM pg_catalog.pg_roles r WHERE r.oid = NEW.role::oid;
	IF NEW.role_name IS NULL THEN
		PERFORM fairshare._reject('42704', format('role with OID %s does not exist', NEW.role::oid));
	END IF;
	NEW.granted_at := now();
	IF NEW.role_arn IS NULL
	   OR NEW.role_arn !~ '^(\*|arn:aws[a-z-]*:iam::[0-9]{12}:role/[A-Za-z0-9+=,.@_/-]*\*?)$'
	   OR NEW.role_arn ~ ':role/$' THEN
		PERFORM fairshare._reject('22023',
			format('invalid role_arn %L: not an IAM role ARN, a prefix of one ending in *, or *', NEW.role_arn),
			'Examples: arn:aws:iam::123456789012:role/team-a-training, arn:aws:iam::123456789012:role/team-a-*, *.');
	END IF;
	RETURN NEW;
END
$$;
REVOKE ALL ON FUNCTION fairshare._check_role_arn_grant() FROM PUBLIC;
CREATE TRIGGER check_grant BEFORE INSERT ON fairshare.role_arn_grants
	FOR EACH ROW EXECUTE FUNCTION fairshare._check_role_arn_grant();
-- Submitting backends cache the grants with the queues' configuration.
CREATE TRIGGER config_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON fairshare.role_arn_grants
	FOR EACH STATEMENT EXECUTE FUNCTION fairshare._config_changed();

REVOKE ALL ON fairshare.role_arn_grants FROM PUBLIC;
GRANT SELECT ON fairshare.role_arn_grants TO fairshare_admin, fairshare_submitter, fairshare_viewer;
GRANT INSERT (role, role_arn), DELETE ON fairshare.role_arn_grants TO fairshare_admin;
SELECT pg_catalog.pg_extension_config_dump('fairshare.role_arn_grants'::regclass, '');
