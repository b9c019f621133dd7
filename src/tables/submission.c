/*-------------------------------------------------------------------------
 *
 * submission.c
 *		The BEFORE INSERT trigger on fairshare.jobs: validate a submission.
 *
 * A job is submitted with a plain INSERT.  This trigger rejects every bad
 * input with a message that names the field and the rule and a specific
 * SQLSTATE (so nothing is written), and fills instance_types and
 * instance_count from the request's ResourceConfig when they are not given.
 *
 * It is C, not PL/pgSQL, because it runs for every submitted job: the
 * queue's configuration comes from a per-backend cache (config_cache.c)
 * instead of three queries per row, which keeps INSERT throughput close to
 * that of a plain table (bench/submit).  The rarely used optional fields
 * (evaluate_on_exit, tags) are checked by fairshare._check_job_options() in
 * SQL, only when present.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_prelude.h"

#include <math.h>

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "utils/array.h"
#include "utils/numeric.h"
#include "utils/rel.h"

#include "settings.h"
#include "statement.h"
#include "tables/catalog_version.h"
#include "tables/config_cache.h"
#include "tables/job_row.h"
#include "tables/lookup.h"

PG_FUNCTION_INFO_V1(fairshare_validate_job_submission);

#define MAX_REQUEST_BYTES 10240

/*
 * The deepest CreateTrainingJob shape nests six levels (the request,
 * InputDataConfig, a channel, DataSource, S3DataSource, AttributeNames);
 * anything much deeper SageMaker cannot accept (it answers deep nesting
 * with a 500 that would be retried), so it is refused here.
 */
#define MAX_REQUEST_DEPTH 10
#define MAX_INSTANCE_COUNT 1000000
#define MAX_INSTANCE_TYPES 10

/*
 * The length of a JSON object's text written without spaces, as a client
 * such as boto3's compact JSON sends it.  PostgreSQL's text of a jsonb puts
 * one space after the colon of every key and one after every comma between
 * two items; counting those out makes the limit one on the JSON the client
 * could have sent, not on how PostgreSQL prints it.  An item is a key, an
 * array element, or a container inside an array (one not after a key).
 */
static int
compact_json_length(Jsonb *jb)
{
	int			length = strlen(JsonbToCString(NULL, &jb->root, VARSIZE(jb)));
	JsonbIterator *it = JsonbIteratorInit(&jb->root);
	JsonbIteratorToken previous = WJB_DONE;
	JsonbIteratorToken token;
	JsonbValue	v;
	int			keys = 0;
	int			items = 0;
	int			nonempty_containers = 0;

	while ((token = JsonbIteratorNext(&it, &v, false)) != WJB_DONE)
	{
		bool		begins = token == WJB_BEGIN_ARRAY || token == WJB_BEGIN_OBJECT;

		if (token == WJB_KEY)
			keys++;
		if (token == WJB_KEY || token == WJB_ELEM ||
			(begins && previous != WJB_DONE && previous != WJB_KEY))
			items++;
		if ((previous == WJB_BEGIN_ARRAY || previous == WJB_BEGIN_OBJECT) &&
			token != WJB_END_ARRAY && token != WJB_END_OBJECT)
			nonempty_containers++;
		previous = token;
	}
	/* ": " once per key; ", " between the items of each container */
	return length - keys - (items - nonempty_containers);
}

/*
 * Columns fairshare sets, in the order they are reported: a submission that
 * gives any of them a value other than its default is refused.
 */
static const JobColumn set_by_fairshare[] = {
	COL_STATUS, COL_STATUS_REASON, COL_CREATED_AT, COL_RUNNABLE_AT,
	COL_SCHEDULED_AT, COL_STARTED_AT, COL_STOPPED_AT, COL_SERVICE_ENVIRONMENT,
	COL_INSTANCE_TYPE, COL_TRAINING_JOB_NAME, COL_TRAINING_JOB_ARN,
	COL_ATTEMPTS, COL_PREEMPTIONS, COL_SUBMITTED_BY, COL_STOP_KIND,
	COL_STOP_REASON, COL_STOP_REQUESTED_AT, COL_STOP_SENT_AT, COL_PREEMPTED_FOR,
	COL_NOMINATION_KIND, COL_NOMINATED_ENVIRONMENT, COL_NOMINATED_INSTANCE_TYPE,
	COL_NOMINATED_AT, COL_SUBMITTER_OID
};

typedef JobRow Submission;

static char *
text_value(const Submission *s, JobColumn c)
{
	return s->isnull[c] ? NULL : TextDatumGetCString(s->values[c]);
}

/* [A-Za-z0-9_-]{1,max} */
static bool
is_simple_name(const char *name, size_t max)
{
	size_t		len = strlen(name);

	if (len < 1 || len > max)
		return false;
	for (const char *p = name; *p; p++)
		if (!isalnum((unsigned char) *p) && *p != '_' && *p != '-')
			return false;
	return true;
}

/* ml.<family>.<size>, lower-case letters and digits: SageMaker's shape. */
static bool
is_instance_type(const char *s, int len)
{
	int			dots = 0;
	int			run = 0;

	if (len < 3 || strncmp(s, "ml.", 3) != 0)
		return false;
	for (int i = 3; i < len; i++)
	{
		if (s[i] == '.')
		{
			if (run == 0)
				return false;
			dots++;
			run = 0;
		}
		else if ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9'))
			run++;
		else
			return false;
	}
	return dots == 1 && run > 0;
}

static char *
jsonb_value_text(JsonbValue *v)
{
	return JsonbToCString(NULL, &JsonbValueToJsonb(v)->root, 0);
}

/* jsonb_typeof() of a whole jsonb value, by PostgreSQL's own names. */
static const char *
jsonb_type_name(Jsonb *jb)
{
	JsonbValue	v;

	v.type = jbvBinary;
	v.val.binary.data = &jb->root;
	v.val.binary.len = VARSIZE(jb) - VARHDRSZ;
	return JsonbTypeName(&v);
}

static JsonbValue *
object_field(JsonbContainer *container, const char *key)
{
	JsonbValue	k;

	k.type = jbvString;
	k.val.string.val = (char *) key;
	k.val.string.len = strlen(key);
	return findJsonbValueFromContainer(container, JB_FOBJECT, &k);
}

static bool
is_object(JsonbValue *v)
{
	return v != NULL && v->type == jbvBinary && JsonContainerIsObject(v->val.binary.data);
}

/* A positive whole number no larger than MAX_INSTANCE_COUNT, or -1. */
static int
instance_count_of(JsonbValue *v)
{
	double		d;

	if (v->type != jbvNumeric)
		return -1;
	d = strtod(DatumGetCString(DirectFunctionCall1(numeric_out, NumericGetDatum(v->val.numeric))), NULL);
	if (!isfinite(d) || d != floor(d) || d < 1)
		return -1;
	return d > MAX_INSTANCE_COUNT ? 0 : (int) d;
}

static void
check_not_set_by_fairshare(const Submission *s)
{
	for (int i = 0; i < lengthof(set_by_fairshare); i++)
	{
		JobColumn	c = set_by_fairshare[i];
		bool		given;

		if (s->isnull[c])
			continue;
		switch (c)
		{
			case COL_STATUS:
				given = strcmp(DatumGetCString(DirectFunctionCall1(enum_out, s->values[c])),
							   "SUBMITTED") != 0;
				break;
			case COL_CREATED_AT:
				given = DatumGetTimestampTz(s->values[c]) != GetCurrentTransactionStartTimestamp();
				break;
			case COL_ATTEMPTS:
			case COL_PREEMPTIONS:
				given = DatumGetInt32(s->values[c]) != 0;
				break;
			case COL_SUBMITTED_BY:
				given = strcmp(TextDatumGetCString(s->values[c]),
							   GetUserNameFromId(GetUserId(), false)) != 0;
				break;
			case COL_SUBMITTER_OID:
				given = DatumGetObjectId(s->values[c]) != InvalidOid &&
					DatumGetObjectId(s->values[c]) != GetUserId();
				break;
			default:
				given = true;
		}
		if (given)
			ereport(ERROR,
					(errcode(ERRCODE_GENERATED_ALWAYS),
					 errmsg("column \"%s\" is set by fairshare and cannot be given when submitting a job",
							fairshare_job_column_names[c]),
					 errhint("Leave it out of the INSERT: a new job starts as SUBMITTED and fairshare fills in its placement.")));
	}
}

/*
 * With fairshare.require_share_grant on, the job's share (its fair share or
 * quota share) must be granted (fairshare.share_grants) to a role whose
 * privileges the submitter has, as AWS Batch asks for the
 * batch:ShareIdentifier condition of the caller's permissions: a share's
 * weight or guarantee otherwise protects the share, not a team, since
 * anyone may submit under it.  Superusers are not checked.
 */
static void
check_share_granted(const char *queue, const char *share)
{
	Oid			user = GetUserId();

	if (!fairshare_require_share_grant || superuser_arg(user) ||
		fairshare_share_granted(user, queue, share))
		return;
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("role \"%s\" may not submit jobs under share \"%s\" of job queue \"%s\"",
					GetUserNameFromId(user, false), share, queue),
			 errdetail("fairshare.require_share_grant is on, and fairshare.share_grants grants that share to no role whose privileges \"%s\" has.",
					   GetUserNameFromId(user, false)),
			 errhint("An admin may grant it: INSERT INTO fairshare.share_grants (role, job_queue, share) VALUES (<role>, <queue>, <share>); each may be a prefix ending in *.")));
}

static const QueueConfig *
check_queue_and_share(const Submission *s)
{
	char	   *queue_name = text_value(s, COL_JOB_QUEUE);
	char	   *share_identifier = text_value(s, COL_SHARE_IDENTIFIER);
	char	   *quota_share = text_value(s, COL_QUOTA_SHARE);
	const QueueConfig *queue;

	if (queue_name == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_NOT_NULL_VIOLATION),
				 errmsg("job_queue is required"),
				 errhint("SELECT name FROM fairshare.job_queues lists the queues.")));
	queue = fairshare_lookup_queue(queue_name);
	if (queue == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FOREIGN_KEY_VIOLATION),
				 errmsg("job queue \"%s\" does not exist", queue_name),
				 errhint("SELECT name FROM fairshare.job_queues lists the queues.")));
	if (!queue->accepts_jobs)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("job queue \"%s\" does not accept new jobs", queue_name),
				 errdetail("Its accepts_jobs is false (DISABLED through the AWS Batch API, or being deleted); "
						   "the jobs already in it still run."),
				 errhint("Enable it (UPDATE fairshare.job_queues SET accepts_jobs = true, or UpdateJobQueue "
						 "with state ENABLED), or submit to another queue.")));

	if (queue->kind == FS_POLICY_FAIR_SHARE)
	{
		if (share_identifier == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_CHECK_VIOLATION),
					 errmsg("job queue \"%s\" is a fair-share queue: share_identifier is required",
							queue_name)));
		if (!is_simple_name(share_identifier, 255))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid share identifier \"%s\"", share_identifier),
					 errhint("A share identifier is 1 to 255 letters, digits, hyphens and underscores.")));
	}
	else if (share_identifier != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_CHECK_VIOLATION),
				 errmsg("job queue \"%s\" is not a fair-share queue: share_identifier must not be set",
						queue_name)));

	if (queue->kind == FS_POLICY_QUOTA_SHARE)
	{
		if (quota_share == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_CHECK_VIOLATION),
					 errmsg("job queue \"%s\" is a quota-share queue: quota_share is required",
							queue_name)));
		if (!fairshare_queue_has_quota_share(queue, quota_share))
			ereport(ERROR,
					(errcode(ERRCODE_FOREIGN_KEY_VIOLATION),
					 errmsg("quota share \"%s\" does not exist in job queue \"%s\"",
							quota_share, queue_name)));
		if (!fairshare_quota_share_accepts_jobs(queue, quota_share))
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("quota share \"%s\" of job queue \"%s\" does not accept new jobs",
							quota_share, queue_name),
					 errdetail("Its accepts_jobs is false (DISABLED through the AWS Batch API, or being deleted); "
							   "the jobs already in it still run."),
					 errhint("Enable it (UpdateQuotaShare with state ENABLED), or submit to another share.")));
	}
	else if (quota_share != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_CHECK_VIOLATION),
				 errmsg("job queue \"%s\" is not a quota-share queue: quota_share must not be set",
						queue_name)));
	if (share_identifier != NULL || quota_share != NULL)
		check_share_granted(queue_name, share_identifier != NULL ? share_identifier : quota_share);
	return queue;
}

/* How deeply arrays and objects nest in a request (the request is 1). */
static int
request_depth(Jsonb *request)
{
	JsonbIterator *it = JsonbIteratorInit(&request->root);
	JsonbValue	v;
	JsonbIteratorToken tok;
	int			depth = 0;
	int			deepest = 0;

	while ((tok = JsonbIteratorNext(&it, &v, false)) != WJB_DONE)
	{
		if (tok == WJB_BEGIN_ARRAY || tok == WJB_BEGIN_OBJECT)
		{
			depth++;
			deepest = Max(deepest, depth);
		}
		else if (tok == WJB_END_ARRAY || tok == WJB_END_OBJECT)
			depth--;
	}
	return deepest;
}

/*
 * The request's SageMaker Tags may not use the keys fairshare adds itself
 * ("fairshare:...": the installation and job id that prove a training job
 * ours) nor AWS's own ("aws:...", which SageMaker refuses), nor one key
 * twice (SageMaker refuses that too).  Keys are compared among the first
 * MAX_TAGS_COMPARED only: more than that is refused by check_tag_count.
 */
#define MAX_TAGS_COMPARED	64

static void
check_request_tags(Jsonb *request)
{
	JsonbValue *tags = object_field(&request->root, "Tags");
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	JsonbValue	seen[MAX_TAGS_COMPARED];
	int			n_seen = 0;

	if (tags == NULL)
		return;
	if (tags->type != jbvBinary || !JsonContainerIsArray(tags->val.binary.data))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("request Tags must be a JSON array of {\"Key\": ..., \"Value\": ...} objects")));
	it = JsonbIteratorInit(tags->val.binary.data);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		JsonbValue *key;

		if (tok != WJB_ELEM)
			continue;
		if (!is_object(&v) || (key = object_field(v.val.binary.data, "Key")) == NULL ||
			key->type != jbvString)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("request Tags must be a JSON array of {\"Key\": ..., \"Value\": ...} objects")));
		if ((key->val.string.len >= 10 && pg_strncasecmp(key->val.string.val, "fairshare:", 10) == 0) ||
			(key->val.string.len >= 4 && pg_strncasecmp(key->val.string.val, "aws:", 4) == 0))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("request tag key \"%.*s\" is reserved",
							key->val.string.len, key->val.string.val),
					 errhint("fairshare sets the fairshare: tags of every training job itself, and AWS the aws: ones.")));
		for (int i = 0; i < n_seen; i++)
			if (seen[i].val.string.len == key->val.string.len &&
				memcmp(seen[i].val.string.val, key->val.string.val, key->val.string.len) == 0)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("request tag key \"%.*s\" is given twice",
								key->val.string.len, key->val.string.val),
						 errhint("SageMaker refuses a training job's tag key given twice.")));
		if (n_seen < MAX_TAGS_COMPARED)
			seen[n_seen++] = *key;
	}
}

/*
 * SageMaker allows a training job 50 tags, and the one the dispatcher
 * creates has the request's Tags, the job's tags (which win on a key both
 * have) and four of fairshare's own (create_training_job_request(): the
 * installation, the job id, the queue, the submission time).  More is refused here, saying what
 * to change, rather than by SageMaker at the first attempt, which would
 * fail the job.  Run after both are known to be well formed.
 */
#define SAGEMAKER_MAX_TAGS		50
#define FAIRSHARE_OWN_TAGS		4

static void
check_tag_count(const Submission *s)
{
	Jsonb	   *request = DatumGetJsonbP(s->values[COL_REQUEST]);
	Jsonb	   *job_tags = s->isnull[COL_TAGS] ? NULL : DatumGetJsonbP(s->values[COL_TAGS]);
	JsonbValue *request_tags = object_field(&request->root, "Tags");
	int			n = 0;

	if (job_tags != NULL && JB_ROOT_IS_OBJECT(job_tags))
		n = JB_ROOT_COUNT(job_tags);
	if (request_tags != NULL && request_tags->type == jbvBinary)
	{
		JsonbIterator *it = JsonbIteratorInit(request_tags->val.binary.data);
		JsonbValue	v;
		JsonbIteratorToken tok;

		while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
		{
			JsonbValue *key;

			if (tok != WJB_ELEM || !is_object(&v) ||
				(key = object_field(v.val.binary.data, "Key")) == NULL || key->type != jbvString)
				continue;
			if (job_tags == NULL || !JB_ROOT_IS_OBJECT(job_tags) ||
				findJsonbValueFromContainer(&job_tags->root, JB_FOBJECT, key) == NULL)
				n++;
		}
	}
	if (n + FAIRSHARE_OWN_TAGS > SAGEMAKER_MAX_TAGS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the job's tags and its request's Tags have %d keys; a job may have at most %d",
						n, SAGEMAKER_MAX_TAGS - FAIRSHARE_OWN_TAGS),
				 errhint("SageMaker allows a training job %d tags, and fairshare adds %d of its own to each.",
						 SAGEMAKER_MAX_TAGS, FAIRSHARE_OWN_TAGS)));
}

/*
 * With fairshare.require_role_arn_grant on, the job's RoleArn must be
 * granted (fairshare.role_arn_grants) to a role whose privileges the
 * submitter has.  The dispatcher passes every job's role to SageMaker with
 * the server's AWS credentials; AWS Batch asks the caller of
 * SubmitServiceJob for iam:PassRole on it, and without this any submitter
 * could have code of its own run as any role the dispatcher may pass.
 * Superusers are not checked: they may do anything anyway.
 */
static void
check_role_arn_granted(const char *role_arn)
{
	Oid			user = GetUserId();

	if (!fairshare_require_role_arn_grant || superuser_arg(user) ||
		fairshare_role_arn_granted(user, role_arn))
		return;
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("role \"%s\" may not submit jobs that run as %s", GetUserNameFromId(user, false), role_arn),
			 errdetail("fairshare.require_role_arn_grant is on, and fairshare.role_arn_grants grants that RoleArn to no role whose privileges \"%s\" has.",
					   GetUserNameFromId(user, false)),
			 errhint("An admin may grant it: INSERT INTO fairshare.role_arn_grants (role, role_arn) VALUES (<role>, <the ARN, or a prefix of it ending in *>).")));
}

/*
 * Check the request and return its ResourceConfig's InstanceCount (0 when
 * absent) and InstanceType (NULL when absent).
 */
static void
check_request(const Submission *s, int *request_count, char **request_type)
{
	Jsonb	   *request;
	JsonbValue *v;
	JsonbValue *resource_config;

	if (s->isnull[COL_REQUEST] ||
		!JB_ROOT_IS_OBJECT(request = DatumGetJsonbP(s->values[COL_REQUEST])) ||
		JB_ROOT_IS_SCALAR(request))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("request must be a JSON object: the body of a SageMaker CreateTrainingJob call"),
				 errhint("Got %s.", s->isnull[COL_REQUEST] ? "NULL" :
						 jsonb_type_name(DatumGetJsonbP(s->values[COL_REQUEST])))));

	/* Text can be at most six times the binary size (\uXXXX escapes). */
	if ((Size) VARSIZE(request) * 6 > MAX_REQUEST_BYTES)
	{
		int			bytes = compact_json_length(request);

		if (bytes > MAX_REQUEST_BYTES)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("request is %d bytes of JSON text (written without spaces); at most %d are allowed",
							bytes, MAX_REQUEST_BYTES),
					 errhint("Keep large hyperparameters and configuration in S3 and pass their location.")));
	}

	v = object_field(&request->root, "RoleArn");
	if (v == NULL || v->type != jbvString || v->val.string.len == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("request lacks RoleArn"),
				 errhint("SageMaker needs the ARN of the IAM role the training job runs as.")));
	check_role_arn_granted(pnstrdup(v->val.string.val, v->val.string.len));
	if (!is_object(object_field(&request->root, "OutputDataConfig")))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("request lacks OutputDataConfig"),
				 errhint("SageMaker needs OutputDataConfig with an S3OutputPath for the model artifacts.")));
	if (object_field(&request->root, "TrainingJobName") != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("request must not set TrainingJobName"),
				 errhint("fairshare names each attempt's training job: fairshare.job_name_prefix, the installation, the job id and the attempt number.")));
	if (request_depth(request) > MAX_REQUEST_DEPTH)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("request nests arrays and objects %d levels deep; at most %d are allowed",
						request_depth(request), MAX_REQUEST_DEPTH),
				 errhint("No CreateTrainingJob field nests that deep; SageMaker would refuse the request.")));
	check_request_tags(request);

	*request_count = 0;
	*request_type = NULL;
	resource_config = object_field(&request->root, "ResourceConfig");
	if (resource_config == NULL)
		return;
	if (!is_object(resource_config))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("request ResourceConfig must be a JSON object")));
	if (object_field(resource_config->val.binary.data, "InstanceGroups") != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("heterogeneous clusters (ResourceConfig.InstanceGroups) are not supported"),
				 errhint("A job runs instance_count instances of one instance type: use ResourceConfig.InstanceType and InstanceCount, and list fallback types in instance_types.")));

	v = object_field(resource_config->val.binary.data, "InstanceCount");
	if (v != NULL)
	{
		*request_count = instance_count_of(v);
		if (*request_count < 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("request ResourceConfig.InstanceCount %s is not a positive whole number",
							jsonb_value_text(v))));
		if (*request_count == 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("request ResourceConfig.InstanceCount %s is out of range",
							jsonb_value_text(v))));
	}
	v = object_field(resource_config->val.binary.data, "InstanceType");
	if (v != NULL)
	{
		if (v->type != jbvString || !is_instance_type(v->val.string.val, v->val.string.len))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("request ResourceConfig.InstanceType %s is not an instance type",
							jsonb_value_text(v)),
					 errhint("Instance types look like ml.p4d.24xlarge.")));
		*request_type = pnstrdup(v->val.string.val, v->val.string.len);
	}
}

/* Check instance_types (filling it from the request if needed). */
static void
check_instance_types(Submission *s, const QueueConfig *queue, const char *request_type)
{
	Datum	   *elems;
	bool	   *nulls;
	int			n;

	if (s->isnull[COL_INSTANCE_TYPES])
	{
		Datum		type;

		if (request_type == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("instance type is missing"),
					 errhint("Set ResourceConfig.InstanceType in the request, or list types in instance_types.")));
		type = CStringGetTextDatum(request_type);
			fairshare_job_row_set(s, COL_INSTANCE_TYPES,
							  PointerGetDatum(construct_array(&type, 1, TEXTOID, -1, false, TYPALIGN_INT)),
							  false);
	}
	if (ARR_NDIM(DatumGetArrayTypeP(s->values[COL_INSTANCE_TYPES])) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("instance_types must be a one-dimensional array"),
				 errhint("List the types in order of preference: '{ml.p5.48xlarge,ml.p4d.24xlarge}'.")));
	deconstruct_array(DatumGetArrayTypeP(s->values[COL_INSTANCE_TYPES]),
					  TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &n);
	if (n < 1 || n > MAX_INSTANCE_TYPES)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("instance_types lists %d types; from 1 to %d are allowed", n, MAX_INSTANCE_TYPES)));
	for (int i = 0; i < n; i++)
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("instance_types must not contain NULL")));
	for (int i = 0; i < n; i++)
	{
		char	   *type = TextDatumGetCString(elems[i]);

		if (!is_instance_type(type, strlen(type)))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("\"%s\" in instance_types is not an instance type", type),
					 errhint("Instance types look like ml.p4d.24xlarge.")));
		for (int j = 0; j < i; j++)
			if (strcmp(type, TextDatumGetCString(elems[j])) == 0)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("instance_types lists \"%s\" twice", type)));
	}
	for (int i = 0; i < n; i++)
	{
		char	   *type = TextDatumGetCString(elems[i]);

		if (!fairshare_queue_can_run_type(queue, type))
			ereport(ERROR,
					(errcode(ERRCODE_CHECK_VIOLATION),
					 errmsg("instance type %s cannot run in any service environment of job queue \"%s\"",
							type, queue->name),
					 errhint("Give one of the queue's environments a capacity limit for %s or NUM_INSTANCES, or leave the type out.",
							 type)));
	}
}

static void
check_int_range(const Submission *s, JobColumn c, int min, int max, bool null_ok, const char *hint)
{
	if (s->isnull[c] ? !null_ok :
		(DatumGetInt32(s->values[c]) < min || DatumGetInt32(s->values[c]) > max))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s %s is out of range", fairshare_job_column_names[c],
						s->isnull[c] ? "NULL" : psprintf("%d", DatumGetInt32(s->values[c]))),
				 errhint("%s", hint)));
}

/* evaluate_on_exit and tags are rare: checked in SQL, only when given. */
static void
check_job_options(const Submission *s)
{
	static FairshareStatement check_stmt = {
		.what = "check the job's evaluate_on_exit and tags",
		.sql = "SELECT fairshare._check_job_options($1, $2)",
		.argtypes = {JSONBOID, JSONBOID},
		.read_only = true,
	};
	Datum		values[2] = {s->values[COL_EVALUATE_ON_EXIT], s->values[COL_TAGS]};
	char		nulls[2] = {s->isnull[COL_EVALUATE_ON_EXIT] ? 'n' : ' ',
	s->isnull[COL_TAGS] ? 'n' : ' '};
	int			path_level;

	if (s->isnull[COL_EVALUATE_ON_EXIT] && s->isnull[COL_TAGS])
		return;
	/* A per-row trigger carries no SET clause: pin the path here. */
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	path_level = fairshare_pin_search_path();
	fairshare_run_statement(&check_stmt, values, nulls);
	fairshare_unpin_search_path(path_level);
	SPI_finish();
}

Datum
fairshare_validate_job_submission(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;
	HeapTuple	tuple;
	Submission	s;
	const QueueConfig *queue;
	char	   *job_name;
	int			request_count;
	char	   *request_type;

	fairshare_require_catalog_version();
	if (!CALLED_AS_TRIGGER(fcinfo) || !TRIGGER_FIRED_BEFORE(trigdata->tg_event) ||
		!TRIGGER_FIRED_FOR_ROW(trigdata->tg_event) || !TRIGGER_FIRED_BY_INSERT(trigdata->tg_event))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("fairshare._validate_job_submission() must be a BEFORE INSERT row trigger")));

	fairshare_config_cache_begin_check();
	tuple = trigdata->tg_trigtuple;
	fairshare_job_row_read(trigdata->tg_relation, tuple, &s);

	check_not_set_by_fairshare(&s);

	job_name = text_value(&s, COL_JOB_NAME);
	if (job_name == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_NOT_NULL_VIOLATION),
				 errmsg("job_name is required")));
	if (!is_simple_name(job_name, 128))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid job name \"%s\"", job_name),
				 errhint("A job name is 1 to 128 letters, digits, hyphens and underscores.")));

	queue = check_queue_and_share(&s);

	check_int_range(&s, COL_SCHEDULING_PRIORITY, 0, 9999, false,
					"scheduling_priority is from 0 to 9999; higher runs first.");

	check_request(&s, &request_count, &request_type);

	if (s.isnull[COL_INSTANCE_COUNT])
	{
		if (request_count == 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("instance count is missing"),
					 errhint("Set ResourceConfig.InstanceCount in the request, or the instance_count column.")));
		fairshare_job_row_set(&s, COL_INSTANCE_COUNT, Int32GetDatum(request_count), false);
	}
	check_int_range(&s, COL_INSTANCE_COUNT, 1, MAX_INSTANCE_COUNT, false,
					"A job needs from 1 to 1000000 instances.");

	check_instance_types(&s, queue, request_type);

	check_int_range(&s, COL_RETRY_ATTEMPTS, 1, 10, false,
					"retry_attempts counts attempts in total, from 1 (no retry) to 10.");
	check_int_range(&s, COL_PREEMPTION_RETRIES, 0, INT_MAX, true,
					"preemption_retries is 0 or more, or NULL for no limit.");
	check_int_range(&s, COL_ATTEMPT_DURATION_SECONDS, 1, INT_MAX, true,
					"attempt_duration_seconds is at least 1, or NULL for no timeout.");
	check_job_options(&s);
	check_tag_count(&s);

	/* ownership keeps to the role, not to whoever has its name later */
	fairshare_job_row_set(&s, COL_SUBMITTER_OID, ObjectIdGetDatum(GetUserId()), false);
	return PointerGetDatum(fairshare_job_row_apply(trigdata->tg_relation, tuple, &s));
}
