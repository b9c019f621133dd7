/*-------------------------------------------------------------------------
 *
 * attempts.c
 *		The SageMaker calls a dispatcher turn sends for each placed attempt,
 *		and when: creates (after a lookup when the attempt is suspect),
 *		stops, describes, the ListTags that proves a job is ours (see
 *		dispatch.c for the rules).
 *
 *-------------------------------------------------------------------------
 */
#include "pg_prelude.h"

#include "aws/credentials.h"
#include "aws/sigv4.h"
#include "datums.h"
#include "settings.h"
#include "statement.h"
#include "worker/dispatch_internal.h"
#include "worker/fence.h"
#include "worker/xact.h"

void
dispatch_send_call(FairshareDispatch *d, AttemptTrack *t, FsSmOperation op, Jsonb *request)
{
	fs_sm_submit(d->client, op, t->endpoint_url[0] ? t->endpoint_url : NULL,
				 t->region[0] ? t->region : NULL, request, (uint64) t->job_id);
	t->in_flight = true;
}

Jsonb *
dispatch_name_request(const char *name)
{
	JsonbParseState *state = NULL;
	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	fairshare_jsonb_push_string(&state, "TrainingJobName", name);
	return JsonbValueToJsonb(pushJsonbValue(&state, WJB_END_OBJECT, NULL));
}

/* {"ResourceArn": arn, "MaxResults": 100}: fairshare's tags come with the first page. */
Jsonb *
dispatch_list_tags_request(const char *arn)
{
	JsonbParseState *state = NULL;
	JsonbValue	k,
				v;

	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	fairshare_jsonb_push_string(&state, "ResourceArn", arn);
	k.type = jbvString;
	k.val.string.val = "MaxResults";
	k.val.string.len = strlen("MaxResults");
	pushJsonbValue(&state, WJB_KEY, &k);
	v.type = jbvNumeric;
	v.val.numeric = int64_to_numeric(100);
	pushJsonbValue(&state, WJB_VALUE, &v);
	return JsonbValueToJsonb(pushJsonbValue(&state, WJB_END_OBJECT, NULL));
}

/*
 * The fairshare:job-submitted tag of an attempt's training job.  The time
 * tells a job from a lost one that had its id (outcome.c, ours_by_tags);
 * the signature, which only the dispatcher can make, tells a training job
 * it created from one that anyone else created under the same name, with
 * tags copied from the job's earlier attempts.
 */
char *
fairshare_submission_tag(const char *tag_key, const char *name, int64 submitted_us)
{
	char	   *signed_text = psprintf("%s." INT64_FORMAT, name, submitted_us);
	char		mac[65];

	if (!fs_sigv4_hmac_sha256_hex((const unsigned char *) tag_key, strlen(tag_key),
								  signed_text, strlen(signed_text), mac))
		ereport(ERROR,
				(errcode(ERRCODE_EXTERNAL_ROUTINE_EXCEPTION),
				 errmsg("fairshare: could not sign the fairshare:job-submitted tag of %s", name),
				 errdetail("OpenSSL's HMAC-SHA256 failed.")));
	return psprintf(INT64_FORMAT ".%s", submitted_us, mac);
}

char *
dispatch_submission_tag(const FairshareDispatch *d, const char *name, int64 submitted_us)
{
	return fairshare_submission_tag(d->tag_key, name, submitted_us);
}

/*
 * Where an attempt's environment names no region, its create goes to the
 * server's region as it resolves now (fairshare.region, AWS_REGION), and
 * that region is recorded on the attempt (job_attempts.region) in the
 * transaction that reads the create requests, committed before any is
 * sent.  From then on the attempt is looked up, created again, described
 * and stopped there (dispatch.c, work_stmt): after a change of the
 * server's region, a lookup of an unconfirmed create in the new region
 * would not find the training job the first create made there, and a
 * second one would be created while the first ran on, unfollowed.
 *
 * An attempt row another transaction holds (an admin's open UPDATE of its
 * status_reason) is skipped, never waited for: its create goes out
 * unrecorded, and is followed in the server's region as it resolves later.
 */
static void
record_create_regions(FairshareDispatch *d, const int64 *job_ids, char **names, uint64 n)
{
	static FairshareStatement record_region_stmt = {
		.what = "record the region of the attempts' creates",
		.sql = "UPDATE fairshare.job_attempts a SET region = $2 "
			"FROM (SELECT training_job_name FROM fairshare.job_attempts "
			"WHERE training_job_name = ANY ($1) AND region IS NULL FOR NO KEY UPDATE SKIP LOCKED) w "
			"WHERE a.training_job_name = w.training_job_name",
		.argtypes = {TEXTARRAYOID, TEXTOID},
	};
	const char *region = fs_aws_region();
	Datum	   *unpinned;
	int			n_unpinned = 0;

	/* no region: the creates fail unsent, saying so (sagemaker_client.c) */
	if (region == NULL || region[0] == '\0' || !fs_aws_valid_region(region) ||
		strlen(region) >= sizeof(((AttemptTrack *) NULL)->region))
		return;
	unpinned = palloc(sizeof(Datum) * Max(n, 1));
	for (uint64 i = 0; i < n; i++)
	{
		AttemptTrack *t = hash_search(d->tracks, &job_ids[i], HASH_FIND, NULL);

		if (t == NULL || t->region[0] != '\0' || names[i] == NULL || strcmp(t->name, names[i]) != 0)
			continue;
		unpinned[n_unpinned++] = CStringGetTextDatum(names[i]);
		strlcpy(t->region, region, sizeof(t->region));
	}
	if (n_unpinned > 0)
	{
		Datum		values[2] = {fairshare_text_array(unpinned, n_unpinned), CStringGetTextDatum(region)};

		fairshare_run_statement(&record_region_stmt, values, NULL);
	}
}

/*
 * Send CreateTrainingJob for the n attempts of a turn that need one.  Their
 * bodies are read in one short transaction (which records where the
 * creates go), committed before any is submitted; an attempt whose job
 * moved on (another attempt, or no longer SCHEDULED) gets nothing.  The body is create_training_job_request()'s,
 * with its fairshare:job-submitted tag signed ($2, in the order of $1);
 * its Tags are always an array (the function appends fairshare's own).
 */
void
dispatch_send_creates(FairshareDispatch *d, AttemptTrack **want, int n)
{
	static FairshareStatement requests_stmt = {
		.what = "read the create requests",
		.sql = "SELECT j.job_id, j.training_job_name, "
			"r || pg_catalog.jsonb_build_object('Tags', "
			"(SELECT pg_catalog.jsonb_agg(CASE WHEN x.tag ->> 'Key' = 'fairshare:job-submitted' "
			"THEN pg_catalog.jsonb_build_object('Key', 'fairshare:job-submitted', "
			"'Value', ($2::pg_catalog.text[])[pg_catalog.array_position($1, j.job_id)]) "
			"ELSE x.tag END ORDER BY x.n) "
			"FROM pg_catalog.jsonb_array_elements(r -> 'Tags') WITH ORDINALITY AS x (tag, n))) "
			"FROM fairshare.jobs j CROSS JOIN LATERAL fairshare.create_training_job_request(j) AS r "
			"WHERE j.job_id = ANY($1) AND j.status = 'SCHEDULED'",
		.argtypes = {INT8ARRAYOID, TEXTARRAYOID},
		.read_only = true,
	};
	Datum		values[2];
	Datum	   *ids;
	Datum	   *tags;
	int64	   *got_ids;
	char	  **got_names;
	Jsonb	  **got_requests;
	uint64		got = 0;
	MemoryContext outer = CurrentMemoryContext;

	if (n == 0)
		return;
	ids = palloc(sizeof(Datum) * n);
	tags = palloc(sizeof(Datum) * n);
	for (int i = 0; i < n; i++)
	{
		ids[i] = Int64GetDatum(want[i]->job_id);
		tags[i] = CStringGetTextDatum(dispatch_submission_tag(d, want[i]->name, want[i]->submitted_us));
	}
	values[0] = fairshare_int8_array(ids, n);
	values[1] = fairshare_text_array(tags, n);

	fairshare_xact_begin("fairshare dispatcher: create requests");
	got = fairshare_run_statement(&requests_stmt, values, NULL);
	{
		/* Copy out of SPI's memory: the transaction ends before we submit. */
		MemoryContext spi = MemoryContextSwitchTo(outer);

		got_ids = palloc(sizeof(int64) * Max(got, 1));
		got_names = palloc(sizeof(char *) * Max(got, 1));
		got_requests = palloc(sizeof(Jsonb *) * Max(got, 1));
		for (uint64 i = 0; i < got; i++)
		{
			HeapTuple	row = SPI_tuptable->vals[i];
			TupleDesc	desc = SPI_tuptable->tupdesc;
			bool		isnull;
			Datum		r;

			got_ids[i] = DatumGetInt64(SPI_getbinval(row, desc, 1, &isnull));
			got_names[i] = SPI_getvalue(row, desc, 2);
			r = SPI_getbinval(row, desc, 3, &isnull);
			got_requests[i] = isnull ? NULL : DatumGetJsonbPCopy(r);
		}
		MemoryContextSwitchTo(spi);
	}
	record_create_regions(d, got_ids, got_names, got);
	fairshare_xact_commit();
	if (got > 0)
		fairshare_fence();		/* still the leader? (fence.c) */

	for (uint64 i = 0; i < got; i++)
	{
		AttemptTrack *t = hash_search(d->tracks, &got_ids[i], HASH_FIND, NULL);

		if (t == NULL || t->in_flight || got_names[i] == NULL || got_requests[i] == NULL ||
			strcmp(t->name, got_names[i]) != 0)
			continue;
		if (t->first_create == 0)
			t->first_create = GetCurrentTimestamp();
		dispatch_send_call(d, t, FS_SM_CREATE_TRAINING_JOB, got_requests[i]);
	}
}

/*
 * The stop of an attempt that never reached SageMaker: it never started.
 * fairshare._cancel_unsent does not count a preemption of it toward
 * preemption_retries.
 */
void
dispatch_cancel_unsent(FairshareDispatch *d, AttemptTrack *t)
{
	/* held by another transaction: the next turn asks again */
	if (dispatch_record_cancel_unsent(t) == OUTCOME_LEFT_PLACED)
		d->turn_needed = true;
}

/*
 * A turn with nothing new to decide: only the DescribeTrainingJob polls
 * that are due, from what the tracks know, without a pass or a read of the
 * work.  Returns how long to wait.
 */
long
dispatch_describe_due(FairshareDispatch *d, TimestampTz now, long wait_ms)
{
	HASH_SEQ_STATUS seq;
	AttemptTrack *t;

	hash_seq_init(&seq, d->tracks);
	while ((t = hash_seq_search(&seq)) != NULL)
	{
		if (t->in_flight || !t->exists)
			continue;
		if (t->next_describe <= now)
			dispatch_send_call(d, t, FS_SM_DESCRIBE_TRAINING_JOB, dispatch_name_request(t->name));
		else
			wait_ms = Min(wait_ms, Max((long) ((t->next_describe - now) / 1000), 1));
	}
	return wait_ms;
}

/*
 * An attempt whose creates keep getting no usable answer (a request
 * SageMaker answers with 5xx every time, say) must not hold its instances
 * and be sent again for ever.  Past fairshare.create_retry_limit such
 * creates, or fairshare.create_retry_timeout since the first, it fails with
 * the last error and its job follows its retry rules.  Called only when
 * the attempt is about to be created again, that is once SageMaker has
 * said it does not know it: nothing created is left behind.
 */
bool
dispatch_create_given_up(FairshareDispatch *d, AttemptTrack *t, TimestampTz now)
{
	char	   *reason;

	if (t->failed_creates < fairshare_create_retry_limit &&
		(t->first_create == 0 ||
		 now < TimestampTzPlusMilliseconds(t->first_create, (int64) fairshare_create_retry_timeout_s * 1000)))
		return false;
	reason = psprintf("CreateTrainingJobFailed: %d CreateTrainingJob calls over %lld s got no usable answer "
					  "(fairshare.create_retry_limit %d, fairshare.create_retry_timeout %d s); the last: %s",
					  t->failed_creates, (long long) ((now - t->first_create) / USECS_PER_SEC),
					  fairshare_create_retry_limit, fairshare_create_retry_timeout_s, t->last_create_error);
	if (dispatch_apply_status(t->job_id, dispatch_made_up_response(t->name, "Failed", reason)) == OUTCOME_LEFT_PLACED)
		d->turn_needed = true;
	else
		t->next_describe = TimestampTzPlusMilliseconds(now, fairshare_poll_interval_ms);
	return true;
}
