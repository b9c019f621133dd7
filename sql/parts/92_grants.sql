-- 92_grants.sql — what a submitter's jobs may name: the IAM roles they run
-- as, and the queues' shares they are counted under.
--
-- The dispatcher creates every training job with the server's AWS
-- credentials, so it is the dispatcher's principal that passes a job's
-- RoleArn to SageMaker, whoever submitted the job; and any submitter may
-- name any fair share or quota share.  AWS Batch limits both with the
-- caller's own IAM permissions: iam:PassRole on the role, and the
-- batch:ShareIdentifier condition key.  These tables are fairshare's
-- equivalent: with fairshare.require_role_arn_grant (resp.
-- fairshare.require_share_grant) on, a job may name only a RoleArn (resp.
-- a queue's share) granted here to a role whose privileges its submitter
-- has.  src/tables/submission.c checks them at INSERT, from the per-backend
-- configuration cache.  docs/security.md, "What a submitter may name".
--
-- A grant is kept by the role's OID and name, as an API key is, and counts
-- only while they still go together: a regrole records no dependency, so
-- a dropped role's grants stay behind, and its OID may later be another
-- role's.  Each pattern is exact, a prefix ending in *, or * for any.
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

CREATE TABLE fairshare.share_grants (
	role		regrole NOT NULL,
	role_name	name NOT NULL,
	job_queue	text NOT NULL,
	share		text NOT NULL,
	granted_at	timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (role, job_queue, share)
);
COMMENT ON TABLE fairshare.share_grants IS
	'The shares (a fair-share queue''s share_identifier, a quota-share queue''s quota_share) the jobs of each role '
	'and its members may be submitted under, when fairshare.require_share_grant is on; job_queue and share are each '
	'a name, a prefix of one ending in *, or * for any.  Admins insert and delete grants: '
	'INSERT INTO fairshare.share_grants (role, job_queue, share) VALUES (''team_a'', ''gpu-queue'', ''TeamA*'').';
COMMENT ON COLUMN fairshare.share_grants.role_name IS
	'The role''s name when it was granted (set by fairshare): the grant counts only while role still has it.';

-- Fills role_name and checks the patterns, with messages that say what is
-- wrong; runs as the admin who writes the row.
CREATE FUNCTION fairshare._check_grant()
RETURNS trigger LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	name_pattern CONSTANT text := '^([A-Za-z0-9_-]+\*?|\*)$';
BEGIN
	IF TG_OP <> 'INSERT' OR TG_LEVEL <> 'ROW' OR TG_WHEN <> 'BEFORE'
	   OR TG_RELID NOT IN ('fairshare.role_arn_grants'::regclass, 'fairshare.share_grants'::regclass) THEN
		RAISE EXCEPTION 'fairshare._check_grant() is the BEFORE INSERT row trigger of fairshare.role_arn_grants and fairshare.share_grants only'
			USING ERRCODE = '39P01';
	END IF;
	SELECT r.rolname INTO NEW.role_name FROM pg_catalog.pg_roles r WHERE r.oid = NEW.role::oid;
	IF NEW.role_name IS NULL THEN
		PERFORM fairshare._reject('42704', format('role with OID %s does not exist', NEW.role::oid));
	END IF;
	NEW.granted_at := now();
	IF TG_RELID = 'fairshare.role_arn_grants'::regclass THEN
		IF NEW.role_arn IS NULL
		   OR NEW.role_arn !~ '^(\*|arn:aws[a-z-]*:iam::[0-9]{12}:role/[A-Za-z0-9+=,.@_/-]*\*?)$'
		   OR NEW.role_arn ~ ':role/$' THEN
			PERFORM fairshare._reject('22023',
				format('invalid role_arn %L: not an IAM role ARN, a prefix of one ending in *, or *', NEW.role_arn),
				'Examples: arn:aws:iam::123456789012:role/team-a-training, arn:aws:iam::123456789012:role/team-a-*, *.');
		END IF;
	ELSE
		IF NEW.job_queue IS NULL OR NEW.job_queue !~ name_pattern OR length(NEW.job_queue) > 129 THEN
			PERFORM fairshare._reject('22023',
				format('invalid job_queue %L: not a queue''s name, a prefix of one ending in *, or *', NEW.job_queue),
				'Examples: gpu-queue, gpu-*, *.');
		END IF;
		IF NEW.share IS NULL OR NEW.share !~ name_pattern OR length(NEW.share) > 256 THEN
			PERFORM fairshare._reject('22023',
				format('invalid share %L: not a share identifier or quota share name, a prefix of one ending in *, or *', NEW.share),
				'Examples: TeamA, TeamA*, *.');
		END IF;
	END IF;
	RETURN NEW;
END
$$;
REVOKE ALL ON FUNCTION fairshare._check_grant() FROM PUBLIC;

DO $grants$
DECLARE
	t text;
BEGIN
	FOREACH t IN ARRAY ARRAY['role_arn_grants', 'share_grants']
	LOOP
		EXECUTE format('CREATE TRIGGER check_grant BEFORE INSERT ON fairshare.%I '
					   'FOR EACH ROW EXECUTE FUNCTION fairshare._check_grant()', t);
		-- Submitting backends cache the grants with the queues' configuration.
		EXECUTE format('CREATE TRIGGER config_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE '
					   'ON fairshare.%I FOR EACH STATEMENT EXECUTE FUNCTION fairshare._config_changed()', t);
		EXECUTE format('REVOKE ALL ON fairshare.%I FROM PUBLIC', t);
		EXECUTE format('GRANT SELECT ON fairshare.%I TO fairshare_admin, fairshare_submitter, fairshare_viewer', t);
		EXECUTE format('GRANT DELETE ON fairshare.%I TO fairshare_admin', t);
		PERFORM pg_catalog.pg_extension_config_dump(('fairshare.' || t)::regclass, '');
	END LOOP;
END
$grants$;
GRANT INSERT (role, role_arn) ON fairshare.role_arn_grants TO fairshare_admin;
GRANT INSERT (role, job_queue, share) ON fairshare.share_grants TO fairshare_admin;
