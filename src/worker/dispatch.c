/*-------------------------------------------------------------------------
 *
 * dispatch.c
 *		One dispatcher turn: the scheduling pass, and carrying its decisions
 *		out against SageMaker, exactly once.
 *
 * The training job name of an attempt is committed (at placement) before
 * any CreateTrainingJob is sent, and SageMaker refuses a second job with
 * the same name.  So a create can always be sent again: ResourceInUse means
 * "it exists already" and the job is adopted.  What needs care is knowing
 * whether an attempt may already exist, so that a stop request or a crash
 * never leaves a training job running that nobody follows, and never makes
 * one that nobody asked for:
 *
 *	 - An attempt without an ARN that this process has not created, and
 *	   that was placed before it started (a previous dispatcher may have
 *	   sent it before crashing), or whose create ended without an answer
 *	   (the engine does not resend a create that was sent and went
 *	   unanswered, see resend_unanswered_creates), or whose outcome could
 *	   not be written, is *suspect*: it is looked up with
 *	   DescribeTrainingJob first, and created only if SageMaker does not
 *	   know it.  ResourceInUse on a create is still adopted, should it come.
 *	 - A training job this process did not see itself create (ResourceInUse,
 *	   or one a lookup found) is adopted only once ListTags shows it is this
 *	   installation's and this job's (the fairshare:installation and
 *	   fairshare:job-id tags every create carries).  Another installation's
 *	   job of the same name (a second database, this one dropped and created
 *	   again, a failover that lost the end of the WAL) is never reported as
 *	   ours and never stopped: the attempt fails with a reason that says so.
 *	 - A stop request for an attempt that was never sent is carried out
 *	   without calling SageMaker: it never started.
 *	 - Every other stop is a StopTrainingJob; the job keeps its capacity
 *	   until DescribeTrainingJob reports it Stopped.
 *
 * The creates of a turn read their bodies in one short transaction, which
 * commits before any is sent; the outcomes of each batch of answers are
 * written together in one short transaction as they arrive, through
 * fairshare.apply_status() where they are SageMaker states; no transaction
 * is open while a call is in flight.  What this process
 * remembers about attempts (the tracks below) is only an optimisation and a
 * guard against sending two calls for one attempt at once: after a restart
 * everything is read again from the tables.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_prelude.h"

#include "pgstat.h"
#include "storage/latch.h"
#include "utils/hsearch.h"
#include "utils/snapmgr.h"
#include "postmaster/interrupt.h"
#include "utils/wait_event.h"

#include "aws/sagemaker_client.h"
#include "datums.h"
#include "settings.h"
#include "progress.h"
#include "sql_api/schedule.h"
#include "tables/job_status.h"
#include "tables/installation.h"
#include "worker/dispatch.h"
#include "worker/dispatcher.h"
#include "worker/log_throttle.h"
#include "worker/xact.h"

#define TRAINING_JOB_NAME_MAX 64
#define MAX_RESULTS_PER_WAIT 64

/*
 * The most jobs one scheduling pass of the dispatcher places (and the most
 * new jobs it takes into their queues).  A pass costs about 100-150 us per
 * placed job; 512 keeps a pass of a burst near 60-80 ms, so its creates go
 * out soon, while a pass is still long enough that its fixed cost (the
 * world, the work query) stays small per job.
 */
#define DISPATCH_PASS_PLACEMENTS 512

/*
 * Outcomes are written in batches: at most OUTCOME_BATCH_MAX answers, or
 * what came within OUTCOME_BATCH_MS of the first one, in one transaction.
 * Under a stream of answers one transaction per answer would cost more
 * than the answers; a few milliseconds of delay on an ARN or a status costs
 * nothing (the capacity is already held).
 */
#define OUTCOME_BATCH_MAX	128
#define OUTCOME_BATCH_MS	20
#define OUTCOME_BATCH_SLOTS (OUTCOME_BATCH_MAX + MAX_RESULTS_PER_WAIT)

/* What the dispatcher knows about one placed attempt. */
typedef struct AttemptTrack
{
	int64		job_id;			/* hash key */
	char		name[TRAINING_JOB_NAME_MAX];	/* the attempt it is about */
	bool		in_flight;		/* a call for this attempt is outstanding */
	bool		exists;			/* SageMaker knows it (we created it, or saw it) */
	bool		owned;			/* proven ours: we created it, or its tags say so */
	bool		suspect;		/* may exist: describe before creating */
	bool		seen;			/* in this turn's work */
	TimestampTz next_describe;
	int			failed_creates; /* creates that got no usable answer */
	TimestampTz first_create;	/* when the first create was sent; 0 if none */
	char		last_create_error[256]; /* what the last of those failed with */
	char		endpoint_url[256];	/* the environment's; "" for the default */
	char		region[64];		/* the environment's; "" for the default */
} AttemptTrack;

/*
 * Outcomes of one batch of answers, written together in one short
 * transaction (flush_outcomes) before the next wait.
 */
typedef struct OutcomeBatch
{
	int			n_arns;
	Datum		arn_ids[OUTCOME_BATCH_SLOTS];
	Datum		arn_names[OUTCOME_BATCH_SLOTS];
	Datum		arns[OUTCOME_BATCH_SLOTS];
	int			n_statuses;
	Datum		status_ids[OUTCOME_BATCH_SLOTS];
	Datum		statuses[OUTCOME_BATCH_SLOTS];
	TimestampTz since;			/* when the oldest of them arrived */
} OutcomeBatch;

struct FairshareDispatch
{
	FsSmClient *client;
	char		installation_id[64];	/* fairshare.installation, read every turn */
	HTAB	   *tracks;
	TimestampTz started_at;		/* attempts placed before this are suspect */
	bool		turn_needed;	/* an outcome changed what a pass would decide */
	bool		pass_again;		/* the last pass stopped with more to place */
	bool		need_pass;		/* the next turn runs a pass and reads the work */
	TimestampTz last_pass_at;	/* when the last such turn began */
	MemoryContext cxt;			/* the tracks */
	MemoryContext wait_cxt;		/* reset on every wait */
	OutcomeBatch batch;			/* answers not yet written (in wait_cxt) */
};

/*
 * The dispatcher's client, moved along during its scheduling passes (a
 * progress callback, progress.h): the creates of the last pass keep going
 * out, and their answers coming in, while the next pass runs.
 */
static void
pump_during_pass(void *client)
{
	fs_sm_pump((FsSmClient *) client);
}

FairshareDispatch *
fairshare_dispatch_create(void)
{
	FairshareDispatch *d = MemoryContextAllocZero(TopMemoryContext, sizeof(FairshareDispatch));
	HASHCTL		ctl;

	d->cxt = AllocSetContextCreate(TopMemoryContext, "fairshare dispatcher attempts",
								   ALLOCSET_DEFAULT_SIZES);
	d->wait_cxt = AllocSetContextCreate(TopMemoryContext, "fairshare dispatcher outcomes",
										ALLOCSET_DEFAULT_SIZES);
	ctl.keysize = sizeof(int64);
	ctl.entrysize = sizeof(AttemptTrack);
	ctl.hcxt = d->cxt;
	d->tracks = hash_create("fairshare dispatcher attempts", 1024, &ctl,
							HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	/* The client lives as long as the process, not as long as a turn. */
	{
		MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);
		FsSmOptions opts;

		d->client = fs_sm_client_create();
		MemoryContextSwitchTo(old);

		/*
		 * A create that got no answer is not sent again blindly: it becomes
		 * suspect, and is created again only if DescribeTrainingJob does not
		 * know it.  So SageMaker is asked once per name, not just answered
		 * ResourceInUse the second time.
		 */
		fs_sm_default_options(&opts);
		opts.resend_unanswered_creates = false;
		fs_sm_client_set_options(d->client, &opts);
	}
	d->started_at = GetCurrentTimestamp();
	d->need_pass = true;
	fairshare_progress_register(pump_during_pass, d->client);
	return d;
}

void
fairshare_dispatch_reset(FairshareDispatch *d)
{
	/*
	 * A turn failed part way.  Calls in flight still complete and are
	 * applied; treat every attempt without an answer as suspect, which is
	 * always safe.
	 */
	HASH_SEQ_STATUS seq;
	AttemptTrack *t;

	hash_seq_init(&seq, d->tracks);
	while ((t = hash_seq_search(&seq)) != NULL)
		if (!t->exists)
			t->suspect = true;
	/* Unwritten outcomes are lost: a created attempt's ARN comes with its next describe. */
	d->batch.n_arns = d->batch.n_statuses = 0;
	d->need_pass = true;
}

void
fairshare_dispatch_destroy(FairshareDispatch *d)
{
	fairshare_progress_register(NULL, NULL);
	fs_sm_client_destroy(d->client);
	MemoryContextDelete(d->cxt);
	MemoryContextDelete(d->wait_cxt);
	pfree(d);
}

static void
exec_params(const char *sql, int nargs, Oid *types, Datum *values)
{
	int			ret = SPI_execute_with_args(sql, nargs, types, values, NULL, false, 0);

	if (ret < 0)
		elog(ERROR, "fairshare dispatcher: \"%s\" failed: %s", sql, SPI_result_code_string(ret));
}

/* What writing one job's outcome came to. */
typedef enum OutcomeWrite
{
	OUTCOME_STAYS_PLACED,		/* written; the job is still placed */
	OUTCOME_LEFT_PLACED,		/* written; capacity freed or the job waits again */
	OUTCOME_JOB_BUSY			/* not written: another transaction holds the row */
} OutcomeWrite;

/*
 * One of fairshare's outcome functions, function_call(job_id, arg), in its
 * own transaction.  The job's row is locked first without waiting: a
 * user's transaction left open on that job must not stall the dispatcher,
 * so then nothing is written and the caller tries again later.  Left
 * placed means capacity was freed or the job is waiting again, and a pass
 * may decide something new.
 */
static OutcomeWrite
write_outcome(const char *function_call, int64 job_id, Oid arg_type, Datum arg)
{
	Oid			types[2] = {INT8OID, arg_type};
	Datum		values[2] = {Int64GetDatum(job_id), arg};
	OutcomeWrite outcome = OUTCOME_JOB_BUSY;
	char	   *query = psprintf("SELECT %s NOT IN " FS_PLACED_STATUSES_SQL, function_call);

	fairshare_xact_begin("fairshare dispatcher: outcome");
	if (SPI_execute_with_args("SELECT 1 FROM fairshare.jobs WHERE job_id = $1 FOR UPDATE SKIP LOCKED",
							  1, types, values, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not lock job " INT64_FORMAT, job_id);
	if (SPI_processed == 1)
	{
		if (SPI_execute_with_args(query, 2, types, values, NULL, false, 0) != SPI_OK_SELECT)
			elog(ERROR, "%s failed", function_call);
		outcome = OUTCOME_STAYS_PLACED;
		if (SPI_processed == 1)
		{
			bool		isnull;

			if (DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)))
				outcome = OUTCOME_LEFT_PLACED;
		}
	}
	fairshare_xact_commit();
	pfree(query);
	return outcome;
}

static OutcomeWrite
apply_status(int64 job_id, Jsonb *response)
{
	return write_outcome("fairshare.apply_status($1, $2)", job_id, JSONBOID, JsonbPGetDatum(response));
}

/*
 * Why an attempt that SageMaker has not confirmed still waits in SCHEDULED,
 * in its status_reason: "why is my job not running?" should not need the
 * server log.  Only the attempt's own row, only while it is SCHEDULED.
 */
static void
note_call_trouble(const AttemptTrack *t, const char *reason)
{
	Oid			types[3] = {INT8OID, TEXTOID, TEXTOID};
	Datum		values[3] = {Int64GetDatum(t->job_id), CStringGetTextDatum(t->name),
	CStringGetTextDatum(reason)};

	fairshare_xact_begin("fairshare dispatcher: status_reason");
	/* a note, not an outcome: skipped while another transaction holds the row */
	if (SPI_execute_with_args("UPDATE fairshare.jobs SET status_reason = $3 "
							  "WHERE job_id IN (SELECT job_id FROM fairshare.jobs WHERE job_id = $1 "
							  "AND training_job_name = $2 AND status = 'SCHEDULED' "
							  "AND status_reason IS DISTINCT FROM $3 FOR NO KEY UPDATE SKIP LOCKED)",
							  3, types, values, NULL, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not record why job " INT64_FORMAT " waits", t->job_id);
	fairshare_xact_commit();
}

/* A DescribeTrainingJob-shaped answer we make up ourselves. */
static Jsonb *
made_up_response(const char *name, const char *status, const char *failure)
{
	Oid			types[3] = {TEXTOID, TEXTOID, TEXTOID};
	Datum		values[3] = {CStringGetTextDatum(name), CStringGetTextDatum(status),
	failure ? CStringGetTextDatum(failure) : (Datum) 0};
	char		nulls[3] = {' ', ' ', failure ? ' ' : 'n'};
	Jsonb	   *result;
	bool		isnull;
	MemoryContext outer = CurrentMemoryContext;

	fairshare_xact_begin("fairshare dispatcher: response");
	if (SPI_execute_with_args("SELECT jsonb_strip_nulls(jsonb_build_object('TrainingJobName', $1, "
							  "'TrainingJobStatus', $2, 'SecondaryStatus', $2, 'FailureReason', $3))",
							  3, types, values, nulls, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not build a response");
	result = DatumGetJsonbPCopy(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	{
		MemoryContext spi = MemoryContextSwitchTo(outer);
		Jsonb	   *copy = palloc(VARSIZE(result));

		memcpy(copy, result, VARSIZE(result));
		MemoryContextSwitchTo(spi);
		result = copy;
	}
	fairshare_xact_commit();
	return result;
}

/* ---------- sending ---------- */

static void
send_call(FairshareDispatch *d, AttemptTrack *t, FsSmOperation op, Jsonb *request)
{
	fs_sm_submit(d->client, op, t->endpoint_url[0] ? t->endpoint_url : NULL,
				 t->region[0] ? t->region : NULL, request, (uint64) t->job_id);
	t->in_flight = true;
}

static Jsonb *
name_request(const char *name)
{
	JsonbParseState *state = NULL;

	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	fairshare_jsonb_push_string(&state, "TrainingJobName", name);
	return JsonbValueToJsonb(pushJsonbValue(&state, WJB_END_OBJECT, NULL));
}

/* {"ResourceArn": arn, "MaxResults": 100}: fairshare's tags come with the first page. */
static Jsonb *
list_tags_request(const char *arn)
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

/* The Value of the tag with this Key in a ListTags answer, or NULL. */
static char *
tag_value(Jsonb *response, const char *key)
{
	JsonbValue	k;
	JsonbValue *tags;
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;

	if (response == NULL || !JB_ROOT_IS_OBJECT(response))
		return NULL;
	k.type = jbvString;
	k.val.string.val = "Tags";
	k.val.string.len = 4;
	tags = findJsonbValueFromContainer(&response->root, JB_FOBJECT, &k);
	if (tags == NULL || tags->type != jbvBinary || !JsonContainerIsArray(tags->val.binary.data))
		return NULL;
	it = JsonbIteratorInit(tags->val.binary.data);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		JsonbValue *tk;
		JsonbValue *tv;

		if (tok != WJB_ELEM || v.type != jbvBinary || !JsonContainerIsObject(v.val.binary.data))
			continue;
		k.val.string.val = "Key";
		k.val.string.len = 3;
		tk = findJsonbValueFromContainer(v.val.binary.data, JB_FOBJECT, &k);
		k.val.string.val = "Value";
		k.val.string.len = 5;
		tv = findJsonbValueFromContainer(v.val.binary.data, JB_FOBJECT, &k);
		if (tk != NULL && tk->type == jbvString && tv != NULL && tv->type == jbvString &&
			tk->val.string.len == strlen(key) && memcmp(tk->val.string.val, key, tk->val.string.len) == 0)
			return pnstrdup(tv->val.string.val, tv->val.string.len);
	}
	return NULL;
}

/*
 * Is the training job whose ListTags answer this is the attempt t's own?
 * Its fairshare:installation tag must be this installation's and its
 * fairshare:job-id tag t's job.  An attempt placed before fairshare
 * tagged installations (its name has no installation part) has no
 * installation tag; it is adopted on its job id and queue tags.  Otherwise
 * *why says whose it is.
 */
static bool
ours_by_tags(const FairshareDispatch *d, const AttemptTrack *t, Jsonb *tags, char **why)
{
	char	   *installation = tag_value(tags, "fairshare:installation");
	char	   *job = tag_value(tags, "fairshare:job-id");
	char	   *own_job = psprintf(INT64_FORMAT, t->job_id);
	char	   *first = fairshare_training_job_name_for(d->installation_id, t->job_id, 1);
	bool		named_with_installation;

	/* named as now, with the installation: all of the first attempt's name but its "1" */
	named_with_installation = strncmp(t->name, first, strlen(first) - 1) == 0;
	if (job != NULL && strcmp(job, own_job) == 0 &&
		(installation != NULL ? strcmp(installation, d->installation_id) == 0 :
		 !named_with_installation && tag_value(tags, "fairshare:job-queue") != NULL))
		return true;
	*why = psprintf("TrainingJobNameConflict: a training job named %s already exists in SageMaker and is not "
					"this attempt's (its fairshare:installation tag is %s, its fairshare:job-id tag %s; "
					"this is installation %s, job %s); fairshare did not adopt it",
					t->name, installation ? installation : "missing", job ? job : "missing",
					d->installation_id, own_job);
	return false;
}

/*
 * Send CreateTrainingJob for the n attempts of a turn that need one.  Their
 * bodies are read in one short transaction, committed before any is
 * submitted; an attempt whose job moved on (another attempt, or no longer
 * SCHEDULED) gets nothing.
 */
static void
send_creates(FairshareDispatch *d, AttemptTrack **want, int n)
{
	Oid			types[1] = {INT8ARRAYOID};
	Datum		values[1];
	Datum	   *ids;
	int64	   *got_ids;
	char	  **got_names;
	Jsonb	  **got_requests;
	uint64		got = 0;
	MemoryContext outer = CurrentMemoryContext;

	if (n == 0)
		return;
	ids = palloc(sizeof(Datum) * n);
	for (int i = 0; i < n; i++)
		ids[i] = Int64GetDatum(want[i]->job_id);
	values[0] = PointerGetDatum(construct_array(ids, n, INT8OID, sizeof(int64), FLOAT8PASSBYVAL,
												TYPALIGN_DOUBLE));

	fairshare_xact_begin("fairshare dispatcher: create requests");
	if (SPI_execute_with_args("SELECT j.job_id, j.training_job_name, fairshare.create_training_job_request(j) "
							  "FROM fairshare.jobs j WHERE j.job_id = ANY($1) AND j.status = 'SCHEDULED'",
							  1, types, values, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the create requests");
	got = SPI_processed;
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
	fairshare_xact_commit();

	for (uint64 i = 0; i < got; i++)
	{
		AttemptTrack *t = hash_search(d->tracks, &got_ids[i], HASH_FIND, NULL);

		if (t == NULL || t->in_flight || got_names[i] == NULL || got_requests[i] == NULL ||
			strcmp(t->name, got_names[i]) != 0)
			continue;
		if (t->first_create == 0)
			t->first_create = GetCurrentTimestamp();
		send_call(d, t, FS_SM_CREATE_TRAINING_JOB, got_requests[i]);
	}
}

/*
 * The stop of an attempt that never reached SageMaker: it never started.
 * fairshare._cancel_unsent does not count a preemption of it toward
 * preemption_retries.
 */
static void
cancel_unsent(FairshareDispatch *d, AttemptTrack *t)
{
	/* held by another transaction: the next turn asks again */
	if (write_outcome("fairshare._cancel_unsent($1, $2)", t->job_id, TEXTOID,
					  CStringGetTextDatum(t->name)) == OUTCOME_LEFT_PLACED)
		d->turn_needed = true;
}

/* ---------- a turn ---------- */

/*
 * A turn with nothing new to decide: only the DescribeTrainingJob polls
 * that are due, from what the tracks know, without a pass or a read of the
 * work.  Returns how long to wait.
 */
static long
describe_due(FairshareDispatch *d, TimestampTz now, long wait_ms)
{
	HASH_SEQ_STATUS seq;
	AttemptTrack *t;

	hash_seq_init(&seq, d->tracks);
	while ((t = hash_seq_search(&seq)) != NULL)
	{
		if (t->in_flight || !t->exists)
			continue;
		if (t->next_describe <= now)
			send_call(d, t, FS_SM_DESCRIBE_TRAINING_JOB, name_request(t->name));
		else
			wait_ms = Min(wait_ms, Max((long) ((t->next_describe - now) / 1000), 1));
	}
	return wait_ms;
}

/*
 * A scheduling pass in its own transaction, placing at most
 * DISPATCH_PASS_PLACEMENTS jobs and never waiting for the pass lock.
 * Returns whether it stopped with work left: jobs it could have placed
 * beyond the limit, or new jobs it did not take in.  Otherwise a pass at
 * once would decide nothing new: what it placed was all that fit, and what
 * changes that (a commit, an outcome) asks for a pass itself.
 */
static bool
run_pass(void)
{
	static bool said_lock_held = false;
	FairsharePassOptions options = {0};
	FairsharePassOutcome outcome;

	options.placement_limit = DISPATCH_PASS_PLACEMENTS;
	options.lock_nowait = true;
	fairshare_xact_begin("fairshare dispatcher: scheduling pass");
	fairshare_pass(&options, NULL, NULL, &outcome);
	fairshare_xact_commit();

	/*
	 * Another session's pass holds the lock (a schedule() in a transaction
	 * left open, say): no pass this turn, and none waited for; the calls
	 * go on.  Said once per such spell.
	 */
	if (outcome.lock_missed && !said_lock_held)
		ereport(LOG,
				(errmsg("fairshare dispatcher: another session holds the scheduling pass lock; passes are skipped until it commits"),
				 errhint("A fairshare.schedule() call in a transaction holds the lock until that transaction ends.")));
	said_lock_held = outcome.lock_missed;
	return outcome.left_work;
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
static bool
create_given_up(FairshareDispatch *d, AttemptTrack *t, TimestampTz now)
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
	if (apply_status(t->job_id, made_up_response(t->name, "Failed", reason)) == OUTCOME_LEFT_PLACED)
		d->turn_needed = true;
	else
		t->next_describe = TimestampTzPlusMilliseconds(now, fairshare_poll_interval_ms);
	return true;
}

long
fairshare_dispatch_turn(FairshareDispatch *d)
{
	TimestampTz now;
	long		wait_ms = fairshare_poll_interval_ms;
	HASH_SEQ_STATUS seq;
	AttemptTrack *t;
	uint64		n;
	int64	   *ids;
	char	  **names;
	bool	   *has_arn;
	bool	   *stop_wanted;
	char	  **endpoints;
	char	  **regions;
	bool	   *placed_before;
	AttemptTrack **want_create;
	int			n_create = 0;
	MemoryContext turn = CurrentMemoryContext;

	/*
	 * Only a change to jobs (the latch), an outcome that frees capacity or
	 * requeues a job, a pass that placed jobs, or poll_interval since the
	 * last pass, can give a pass and the work query something new.  A turn
	 * that only has describes due sends them and waits again: with
	 * thousands of jobs in SageMaker describes are due all the time, and a
	 * pass and a scan of every placed job for each would be most of the
	 * dispatcher's work.
	 */
	now = GetCurrentTimestamp();
	if (!d->need_pass &&
		now < TimestampTzPlusMilliseconds(d->last_pass_at, fairshare_poll_interval_ms))
		return describe_due(d, now,
							Max((long) ((TimestampTzPlusMilliseconds(d->last_pass_at, fairshare_poll_interval_ms)
										 - now) / 1000), 1));
	d->need_pass = false;
	d->last_pass_at = now;
	d->turn_needed = false;

	/*
	 * One call of schedule() places at most DISPATCH_PASS_PLACEMENTS jobs;
	 * when it stopped there with more to place, the next pass comes at once
	 * (see fairshare_dispatch_wait), not at the next poll.  The calls this
	 * one leads to go on during it.
	 */
	d->pass_again = run_pass();

	/* The placed attempts and what each needs. */
	fairshare_xact_begin("fairshare dispatcher: work");
	strlcpy(d->installation_id, fairshare_installation_id(), sizeof(d->installation_id));
	if (SPI_execute("SELECT j.job_id, j.training_job_name, j.training_job_arn IS NOT NULL, "
					"j.stop_kind IS NOT NULL AND j.stop_sent_at IS NULL, e.endpoint_url, e.region, "
					"j.scheduled_at "
					"FROM fairshare.jobs j JOIN fairshare.service_environments e ON e.name = j.service_environment "
					"WHERE j.status IN " FS_PLACED_STATUSES_SQL " ORDER BY j.job_id",
					true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the dispatcher's work");
	n = SPI_processed;
	{
		/* Copy out of SPI's memory into the turn's (the caller's) context. */
		MemoryContext spi = MemoryContextSwitchTo(turn);

		ids = palloc(sizeof(int64) * Max(n, 1));
		names = palloc(sizeof(char *) * Max(n, 1));
		has_arn = palloc(sizeof(bool) * Max(n, 1));
		stop_wanted = palloc(sizeof(bool) * Max(n, 1));
		endpoints = palloc(sizeof(char *) * Max(n, 1));
		regions = palloc(sizeof(char *) * Max(n, 1));
		placed_before = palloc(sizeof(bool) * Max(n, 1));
		want_create = palloc(sizeof(AttemptTrack *) * Max(n, 1));
		for (uint64 i = 0; i < n; i++)
		{
			HeapTuple	row = SPI_tuptable->vals[i];
			TupleDesc	desc = SPI_tuptable->tupdesc;
			bool		isnull;

			ids[i] = DatumGetInt64(SPI_getbinval(row, desc, 1, &isnull));
			names[i] = SPI_getvalue(row, desc, 2);
			has_arn[i] = DatumGetBool(SPI_getbinval(row, desc, 3, &isnull));
			stop_wanted[i] = DatumGetBool(SPI_getbinval(row, desc, 4, &isnull));
			endpoints[i] = SPI_getvalue(row, desc, 5);
			regions[i] = SPI_getvalue(row, desc, 6);
			placed_before[i] = DatumGetTimestampTz(SPI_getbinval(row, desc, 7, &isnull)) < d->started_at;
		}
		MemoryContextSwitchTo(spi);
	}
	fairshare_xact_commit();

	hash_seq_init(&seq, d->tracks);
	while ((t = hash_seq_search(&seq)) != NULL)
		t->seen = false;

	now = GetCurrentTimestamp();
	for (uint64 i = 0; i < n; i++)
	{
		bool		found;

		if (names[i] == NULL || strlen(names[i]) >= TRAINING_JOB_NAME_MAX)
			continue;
		t = hash_search(d->tracks, &ids[i], HASH_ENTER, &found);
		if (!found || strcmp(t->name, names[i]) != 0)
		{
			/* A new attempt (or one we never saw). */
			strlcpy(t->name, names[i], TRAINING_JOB_NAME_MAX);
			t->in_flight = false;
			t->failed_creates = 0;
			t->first_create = 0;
			t->last_create_error[0] = '\0';
			t->exists = has_arn[i];
			/* an ARN is written only for a create of ours or a proven adoption */
			t->owned = has_arn[i];
			/* Placed before we started: a previous dispatcher may have sent it. */
			t->suspect = !has_arn[i] && placed_before[i];
			t->next_describe = now;
		}
		t->seen = true;
		strlcpy(t->endpoint_url, endpoints[i] ? endpoints[i] : "", sizeof(t->endpoint_url));
		strlcpy(t->region, regions[i] ? regions[i] : "", sizeof(t->region));
		if (has_arn[i])
			t->exists = t->owned = true;
		if (t->in_flight)
			continue;

		if (t->suspect && t->next_describe > now)
		{
			/*
			 * A lookup that failed, or a create with no usable answer, is
			 * tried again a poll interval later, not on every turn.
			 */
			long		due_ms = (long) ((t->next_describe - now) / 1000);

			wait_ms = Min(wait_ms, Max(due_ms, 1));
		}
		else if (stop_wanted[i])
		{
			/* never stop a training job not proven ours: look it up first */
			if (t->exists && t->owned)
				send_call(d, t, FS_SM_STOP_TRAINING_JOB, name_request(t->name));
			else if (t->exists || t->suspect)
				send_call(d, t, FS_SM_DESCRIBE_TRAINING_JOB, name_request(t->name));
			else
				cancel_unsent(d, t);
		}
		else if (!t->exists)
		{
			if (t->suspect)
				send_call(d, t, FS_SM_DESCRIBE_TRAINING_JOB, name_request(t->name));
			else if (create_given_up(d, t, now))
				continue;
			else
				want_create[n_create++] = t;
		}
		else if (t->next_describe <= now)
			send_call(d, t, FS_SM_DESCRIBE_TRAINING_JOB, name_request(t->name));
		else
		{
			long		due_ms = (long) ((t->next_describe - now) / 1000);

			wait_ms = Min(wait_ms, Max(due_ms, 1));
		}
	}

	/* Creates go out together: one transaction reads all their bodies. */
	send_creates(d, want_create, n_create);

	/* Forget attempts that are over. */
	hash_seq_init(&seq, d->tracks);
	while ((t = hash_seq_search(&seq)) != NULL)
		if (!t->seen && !t->in_flight)
			hash_search(d->tracks, &t->job_id, HASH_REMOVE, NULL);
	return wait_ms;
}

/* ---------- outcomes ---------- */

/* A created attempt's ARN, written by the next flush_outcomes. */
static void
queue_arn(FairshareDispatch *d, AttemptTrack *t, const char *arn)
{
	OutcomeBatch *b = &d->batch;

	Assert(b->n_arns < OUTCOME_BATCH_SLOTS);
	if (b->n_arns + b->n_statuses == 0)
		b->since = GetCurrentTimestamp();
	b->arn_ids[b->n_arns] = Int64GetDatum(t->job_id);
	b->arn_names[b->n_arns] = CStringGetTextDatum(t->name);
	b->arns[b->n_arns] = CStringGetTextDatum(arn);
	b->n_arns++;
}

/* A DescribeTrainingJob answer, applied by the next flush_outcomes. */
static void
queue_status(FairshareDispatch *d, AttemptTrack *t, Jsonb *response)
{
	OutcomeBatch *b = &d->batch;

	Assert(b->n_statuses < OUTCOME_BATCH_SLOTS);
	if (b->n_arns + b->n_statuses == 0)
		b->since = GetCurrentTimestamp();
	b->status_ids[b->n_statuses] = Int64GetDatum(t->job_id);
	b->statuses[b->n_statuses] = JsonbPGetDatum(response);
	b->n_statuses++;
}

/*
 * Lock, in job_id order, the rows of the batch's jobs that nobody else has
 * locked, and return their ids.  A user's open transaction holding a
 * job's row (after update_job_priority, say) must not stall every other
 * job's outcomes: that job's answer is skipped, and its next
 * DescribeTrainingJob (a poll interval on) brings it again -- the ARN of
 * a create too.
 */
static Datum
lock_batch_jobs(const OutcomeBatch *b)
{
	Datum	   *ids = palloc(sizeof(Datum) * (b->n_arns + b->n_statuses + 1));
	Oid			types[1] = {INT8ARRAYOID};
	Datum		values[1];
	bool		isnull;
	Datum		locked;
	int64		skipped;
	int			n = 0;

	for (int i = 0; i < b->n_arns; i++)
		ids[n++] = b->arn_ids[i];
	for (int i = 0; i < b->n_statuses; i++)
		ids[n++] = b->status_ids[i];
	values[0] = PointerGetDatum(construct_array(ids, n, INT8OID, sizeof(int64), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	if (SPI_execute_with_args("SELECT coalesce(array_agg(job_id ORDER BY job_id), '{}'), "
							  "cardinality(array(SELECT DISTINCT unnest($1::bigint[]))) - count(*) "
							  "FROM (SELECT job_id FROM fairshare.jobs WHERE job_id = ANY($1::bigint[]) "
							  "ORDER BY job_id FOR NO KEY UPDATE SKIP LOCKED) l",
							  1, types, values, NULL, false, 0) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "could not lock the jobs of a batch of outcomes");
	locked = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	skipped = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
	if (skipped > 0)
		ereport(DEBUG1,
				(errmsg_internal("fairshare dispatcher: " INT64_FORMAT " job(s) of a batch are locked by another transaction; their answers wait for the next describe",
								 skipped)));
	return SPI_datumTransfer(locked, false, -1);
}

/*
 * Write the queued outcomes of one batch of answers in one short
 * transaction: the ARNs of created attempts, then fairshare.apply_status()
 * for each DescribeTrainingJob answer, for the jobs lock_batch_jobs() got.
 * Notes whether any job left the placed states (a pass may decide
 * something new).
 */
static void
flush_outcomes(FairshareDispatch *d)
{
	OutcomeBatch *b = &d->batch;
	Datum		locked;

	if (b->n_arns == 0 && b->n_statuses == 0)
		return;
	fairshare_xact_begin("fairshare dispatcher: outcomes");
	locked = lock_batch_jobs(b);
	if (b->n_arns > 0)
	{
		Oid			types[4] = {INT8ARRAYOID, TEXTARRAYOID, TEXTARRAYOID, INT8ARRAYOID};
		Datum		values[4];

		values[0] = PointerGetDatum(construct_array(b->arn_ids, b->n_arns, INT8OID, sizeof(int64),
													FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
		values[1] = PointerGetDatum(construct_array(b->arn_names, b->n_arns, TEXTOID, -1, false,
													TYPALIGN_INT));
		values[2] = PointerGetDatum(construct_array(b->arns, b->n_arns, TEXTOID, -1, false,
													TYPALIGN_INT));
		values[3] = locked;
		/*
		 * No join with unnest(): right after a burst the planner's
		 * statistics may still say jobs holds no placed rows, and a nested
		 * loop over every placed job per batch made each flush cost
		 * thousands of rows.  The ids go through the primary key; each
		 * row's name and ARN are found by position (a batch is small).
		 */
		exec_params("UPDATE fairshare.jobs j SET training_job_arn = ($3::text[])[array_position($1::bigint[], j.job_id)] "
					"WHERE j.job_id = ANY($1::bigint[]) AND j.job_id = ANY($4::bigint[]) "
					"AND j.training_job_name = ($2::text[])[array_position($1::bigint[], j.job_id)] "
					"AND j.status IN " FS_PLACED_STATUSES_SQL " AND j.training_job_arn IS NULL",
					4, types, values);
	}
	if (b->n_statuses > 0)
	{
		Oid			types[3] = {INT8ARRAYOID, JSONBARRAYOID, INT8ARRAYOID};
		Datum		values[3];
		bool		isnull;

		values[0] = PointerGetDatum(construct_array(b->status_ids, b->n_statuses, INT8OID, sizeof(int64),
													FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
		values[1] = PointerGetDatum(construct_array(b->statuses, b->n_statuses, JSONBOID, -1, false,
													TYPALIGN_INT));
		values[2] = locked;
		if (SPI_execute_with_args("SELECT coalesce(bool_or(s NOT IN " FS_PLACED_STATUSES_SQL "), false) "
								  "FROM (SELECT fairshare.apply_status(u.job_id, u.response) AS s "
								  "FROM unnest($1::bigint[], $2::jsonb[]) WITH ORDINALITY AS u(job_id, response, n) "
								  "WHERE u.job_id = ANY($3::bigint[]) "
								  "ORDER BY u.job_id, u.n) applied",
								  3, types, values, NULL, false, 0) != SPI_OK_SELECT || SPI_processed != 1)
			elog(ERROR, "fairshare.apply_status failed");
		if (DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)))
			d->turn_needed = true;
	}
	fairshare_xact_commit();
	b->n_arns = 0;
	b->n_statuses = 0;
}

static void
record_stop_sent(AttemptTrack *t)
{
	Oid			types[2] = {INT8OID, TEXTOID};
	Datum		values[2] = {Int64GetDatum(t->job_id), CStringGetTextDatum(t->name)};

	fairshare_xact_begin("fairshare dispatcher: stop sent");
	/* skipped while another transaction holds the row: a resent stop is harmless */
	exec_params("UPDATE fairshare.jobs SET stop_sent_at = now() "
				"WHERE job_id IN (SELECT job_id FROM fairshare.jobs WHERE job_id = $1 "
				"AND training_job_name = $2 AND stop_sent_at IS NULL FOR NO KEY UPDATE SKIP LOCKED)",
				2, types, values);
	fairshare_xact_commit();
}

/* A top-level string member of a JSON object, or NULL. */
static char *
jsonb_string_field(Jsonb *jb, const char *key)
{
	JsonbValue	k;
	JsonbValue *v;

	if (jb == NULL || !JB_ROOT_IS_OBJECT(jb))
		return NULL;
	k.type = jbvString;
	k.val.string.val = (char *) key;
	k.val.string.len = strlen(key);
	v = findJsonbValueFromContainer(&jb->root, JB_FOBJECT, &k);
	if (v == NULL || v->type != jbvString)
		return NULL;
	return pnstrdup(v->val.string.val, v->val.string.len);
}

static char *
failure_reason(const FsSmResult *r)
{
	return psprintf("%s: %s", r->error_type ? r->error_type : "Error",
					r->message ? r->message : "no message");
}

/*
 * A call that failed, in the log: once a minute for each operation and
 * class of error, saying how many like it were held back meanwhile (the
 * job's status_reason has each attempt's own).
 */
static void
warn_throttled(const FsSmResult *r, const char *name, const char *detail)
{
	int			held;

	/* the kind is the operation and the class of error, not its exact type:
	 * an outage answers InternalFailure and ServiceUnavailable by turns */
	if (!fs_log_due(psprintf("%s:%d", fs_sm_operation_name(r->operation), (int) r->error_class), &held))
		return;
	ereport(WARNING,
			(errmsg("fairshare dispatcher: %s %s failed: %s", fs_sm_operation_name(r->operation), name,
					failure_reason(r)),
			 detail ? errdetail("%s", detail) : 0,
			 held > 0 ? errhint("%d more %s calls failed like this in the last minute and were not logged.",
								held, fs_sm_operation_name(r->operation)) : 0));
}

static void
handle_result(FairshareDispatch *d, const FsSmResult *r)
{
	int64		job_id = (int64) r->tag;
	AttemptTrack *t = hash_search(d->tracks, &job_id, HASH_FIND, NULL);
	TimestampTz now = GetCurrentTimestamp();
	TimestampTz next_poll = TimestampTzPlusMilliseconds(now, fairshare_poll_interval_ms);

	if (t == NULL)
		return;
	t->in_flight = false;

	switch (r->operation)
	{
		case FS_SM_CREATE_TRAINING_JOB:
			switch (r->error_class)
			{
				case FS_SM_OK:
					{
						char	   *arn = jsonb_string_field(r->response, "TrainingJobArn");

						t->exists = t->owned = true;
						t->suspect = false;
						t->next_describe = next_poll;
						if (arn)
							queue_arn(d, t, arn);
					}
					break;
				case FS_SM_RESOURCE_IN_USE:
					/*
					 * It exists already: a lost answer, a previous dispatcher
					 * -- or another installation's job of the same name.  The
					 * lookup and its tags tell which.
					 */
					t->exists = true;
					t->owned = false;
					t->suspect = false;
					t->next_describe = now;
					break;
				case FS_SM_RESOURCE_LIMIT_EXCEEDED:
				case FS_SM_VALIDATION:
				case FS_SM_ACCESS_DENIED:
				case FS_SM_RESOURCE_NOT_FOUND:
				case FS_SM_OTHER_CLIENT_ERROR:
					/*
					 * SageMaker refused this attempt (a 4xx it answered after
					 * reading the request: nothing was created): the retry
					 * rules decide.  AccessDenied belongs here, typically a
					 * RoleArn the server may not pass.
					 */
					switch (apply_status(t->job_id, made_up_response(t->name, "Failed", failure_reason(r))))
					{
						case OUTCOME_LEFT_PLACED:
							d->turn_needed = true;
							break;
						case OUTCOME_STAYS_PLACED:
							break;
						case OUTCOME_JOB_BUSY:
							/*
							 * Not written: looked up a poll interval from now,
							 * and, not being known to SageMaker, sent again.
							 */
							t->suspect = true;
							t->next_describe = next_poll;
							break;
					}
					break;
				default:

					/*
					 * No answer we can trust (retries exhausted, credentials
					 * refused, no endpoint, TLS): it may or may not exist.
					 * Look it up a poll interval from now; the job keeps its
					 * place and says why it waits.
					 */
					t->suspect = true;
					t->next_describe = next_poll;
					t->failed_creates++;
					strlcpy(t->last_create_error, failure_reason(r), sizeof(t->last_create_error));
					note_call_trouble(t, psprintf("CreateTrainingJob %s got no usable answer (%s); it is looked up "
												  "and, if SageMaker does not know it, sent again (%d of at most %d)",
												  t->name, failure_reason(r), t->failed_creates,
												  fairshare_create_retry_limit));
					warn_throttled(r, t->name, "It will be looked up and, if SageMaker does not know it, created again.");
					break;
			}
			break;

		case FS_SM_DESCRIBE_TRAINING_JOB:
			switch (r->error_class)
			{
				case FS_SM_OK:
					t->exists = true;
					t->suspect = false;
					t->next_describe = next_poll;
					if (t->owned)
						queue_status(d, t, r->response);
					else
					{
						/* Not seen created by us: prove it ours before anything is believed. */
						char	   *arn = jsonb_string_field(r->response, "TrainingJobArn");

						if (arn != NULL)
							send_call(d, t, FS_SM_LIST_TAGS, list_tags_request(arn));
					}
					break;
				case FS_SM_RESOURCE_NOT_FOUND:
					if (t->exists)
					{
						OutcomeWrite w = apply_status(t->job_id,
													  made_up_response(t->name, "Failed",
																	   "ResourceNotFound: the training job is no longer known to SageMaker"));

						if (w == OUTCOME_LEFT_PLACED)
							d->turn_needed = true;
						else if (w == OUTCOME_JOB_BUSY)
							t->next_describe = next_poll;	/* the next lookup says it again */
					}
					else
					{
						/* It was never created: the next turn creates it (or drops a stop). */
						t->suspect = false;
						d->turn_needed = true;
					}
					break;
				default:
					t->next_describe = next_poll;
					if (!t->exists)
						note_call_trouble(t, psprintf("DescribeTrainingJob %s, the lookup of an attempt that may "
													  "have been created, failed (%s); it is tried again",
													  t->name, failure_reason(r)));
					warn_throttled(r, t->name, NULL);
					break;
			}
			break;

		case FS_SM_LIST_TAGS:
			switch (r->error_class)
			{
				case FS_SM_OK:
					{
						char	   *why;

						if (ours_by_tags(d, t, r->response, &why))
						{
							t->owned = true;
							t->next_describe = now; /* now its status counts */
						}
						else
						{
							ereport(WARNING,
									(errmsg("fairshare dispatcher: job " INT64_FORMAT ": %s", t->job_id, why),
									 errhint("Give each installation sharing a SageMaker account its own fairshare.job_name_prefix.")));
							if (apply_status(t->job_id, made_up_response(t->name, "Failed", why)) == OUTCOME_LEFT_PLACED)
								d->turn_needed = true;
							else
								t->next_describe = next_poll;
						}
					}
					break;
				case FS_SM_RESOURCE_NOT_FOUND:
					/* gone between the lookup and its tags: look again */
					t->exists = false;
					t->suspect = true;
					t->next_describe = next_poll;
					break;
				default:
					t->next_describe = next_poll;
					note_call_trouble(t, psprintf("ListTags for %s, which shows whether the existing training job "
												  "is this attempt's, failed (%s); it is tried again",
												  t->name, failure_reason(r)));
					break;
			}
			break;

		case FS_SM_STOP_TRAINING_JOB:
			switch (r->error_class)
			{
				case FS_SM_OK:
					record_stop_sent(t);
					t->next_describe = now;
					break;
				case FS_SM_RESOURCE_NOT_FOUND:
					if (!t->exists)
						cancel_unsent(d, t);
					t->next_describe = now;
					break;
				case FS_SM_VALIDATION:
					/* Already stopping or finished: the next describe says how it ended. */
					record_stop_sent(t);
					t->next_describe = now;
					break;
				default:
					warn_throttled(r, t->name, NULL);
					break;
			}
			break;

		default:
			break;
	}
}

/*
 * The one contained-error wrapper: work(d, arg) with errcontext describe(arg)
 * on any error it raises; an ERROR is reported, its transaction rolled
 * back, and false returned -- the turn goes on.  An outcome that cannot be
 * written (a trigger on fairshare.jobs, a job deleted under us, ...) must
 * not keep the others from being written.
 */
static bool
run_contained(FairshareDispatch *d, void (*work) (FairshareDispatch *d, void *arg),
			  void (*describe) (void *arg), void *arg)
{
	MemoryContext cxt = CurrentMemoryContext;
	ErrorContextCallback errcallback;
	volatile bool ok = true;

	errcallback.callback = describe;
	errcallback.arg = arg;
	errcallback.previous = error_context_stack;
	error_context_stack = &errcallback;
	PG_TRY();
	{
		work(d, arg);
	}
	PG_CATCH();
	{
		error_context_stack = errcallback.previous;
		fairshare_xact_report_and_roll_back(cxt);
		ok = false;
	}
	PG_END_TRY();
	error_context_stack = errcallback.previous;
	return ok;
}

/*
 * After an ERROR while an outcome was written: have the attempt looked up
 * again after a poll interval (as suspect when SageMaker was never seen to
 * know it, and no longer in flight when in_flight_done).
 */
static void
forget_outcome(FairshareDispatch *d, int64 job_id, bool in_flight_done)
{
	AttemptTrack *t;

	t = hash_search(d->tracks, &job_id, HASH_FIND, NULL);
	if (t == NULL)
		return;
	if (in_flight_done)
		t->in_flight = false;
	if (!t->exists)
		t->suspect = true;
	t->next_describe = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), fairshare_poll_interval_ms);
}

/* errcontext for an outcome being applied. */
static void
outcome_error_context(void *arg)
{
	const FsSmResult *r = (const FsSmResult *) arg;

	errcontext("applying the outcome of SageMaker %s for job %lld",
			   fs_sm_operation_name(r->operation), (long long) r->tag);
}

static void
handle_result_work(FairshareDispatch *d, void *arg)
{
	handle_result(d, (const FsSmResult *) arg);
}

/*
 * handle_result, with an ERROR in it contained: the results after it in
 * the same batch are handed out already and must still be applied, or their
 * attempts would stay "in flight" for good and never be followed again.
 * The attempt whose outcome could not be written is looked up afresh.
 */
static void
handle_result_guarded(FairshareDispatch *d, const FsSmResult *r)
{
	if (!run_contained(d, handle_result_work, outcome_error_context, (void *) r))
		forget_outcome(d, (int64) r->tag, true);
}

/* One DescribeTrainingJob answer to apply on its own. */
typedef struct StatusToApply
{
	int64		job_id;
	Jsonb	   *response;
} StatusToApply;

static void
describe_error_context(void *arg)
{
	errcontext("applying the outcome of SageMaker DescribeTrainingJob for job %lld",
			   (long long) ((const StatusToApply *) arg)->job_id);
}

static void
apply_status_work(FairshareDispatch *d, void *arg)
{
	const StatusToApply *s = (const StatusToApply *) arg;

	/* held by another transaction: the answer comes again with the next describe */
	if (apply_status(s->job_id, s->response) == OUTCOME_LEFT_PLACED)
		d->turn_needed = true;
}

/*
 * One DescribeTrainingJob answer applied on its own, an ERROR reported and
 * contained: the attempt is looked up again after a poll interval.
 */
static void
apply_status_guarded(FairshareDispatch *d, int64 job_id, Jsonb *response)
{
	StatusToApply s = {job_id, response};

	if (!run_contained(d, apply_status_work, describe_error_context, &s))
		forget_outcome(d, job_id, false);
}

static void
batch_error_context(void *arg)
{
	const OutcomeBatch *b = (const OutcomeBatch *) arg;

	errcontext("writing the outcomes of %d SageMaker answers (%d ARNs, %d DescribeTrainingJob answers) in one transaction",
			   b->n_arns + b->n_statuses, b->n_arns, b->n_statuses);
}

static void
flush_outcomes_work(FairshareDispatch *d, void *arg)
{
	flush_outcomes(d);
}

/*
 * flush_outcomes, with an ERROR contained the same way.  One bad outcome
 * must not keep the others of its batch from being written: after a failed
 * batch each DescribeTrainingJob answer is applied on its own, and the one
 * that fails is looked up again after a poll interval.  The ARNs of the
 * batch are dropped; each comes back with its attempt's next describe.
 */
static void
flush_outcomes_guarded(FairshareDispatch *d)
{
	OutcomeBatch *b = &d->batch;

	if (!run_contained(d, flush_outcomes_work, batch_error_context, b))
	{
		int			n = b->n_statuses;

		b->n_arns = b->n_statuses = 0;
		for (int i = 0; i < n; i++)
			apply_status_guarded(d, DatumGetInt64(b->status_ids[i]), DatumGetJsonbP(b->statuses[i]));
	}
}

/*
 * Write the outcomes collected so far, then free the memory the results
 * and the batch were in (the results are all handled by then).
 */
static void
write_batch(FairshareDispatch *d)
{
	flush_outcomes_guarded(d);
	d->batch.n_arns = d->batch.n_statuses = 0;
	MemoryContextReset(d->wait_cxt);
}

/* Hand out up to MAX_RESULTS_PER_WAIT results within timeout_ms, and handle them. */
static int
collect_results(FairshareDispatch *d, long timeout_ms)
{
	FsSmResult *done[MAX_RESULTS_PER_WAIT];
	int			n = fs_sm_wait(d->client, timeout_ms, done, MAX_RESULTS_PER_WAIT);

	for (int i = 0; i < n; i++)
		handle_result_guarded(d, done[i]);
	return n;
}

/*
 * Wait up to timeout_ms, applying outcomes as they arrive, in batches (see
 * OUTCOME_BATCH_MAX).  Returns early when the latch is set (a transaction
 * changed jobs), or when an outcome means a new pass may decide something
 * (a job finished, failed, or went back to its queue); otherwise keeps
 * waiting, so a stream of answers does not turn into a stream of passes.
 * After a pass that may have left jobs to place it only collects what is
 * final already and returns at once: the next pass comes straight away,
 * and the calls in flight go on during it (pump_during_pass).
 */
void
fairshare_dispatch_wait(FairshareDispatch *d, long timeout_ms)
{
	TimestampTz end = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), timeout_ms);
	MemoryContext outer = MemoryContextSwitchTo(d->wait_cxt);
	OutcomeBatch *b = &d->batch;

	/*
	 * turn_needed is not cleared here: what set it since the turn's pass
	 * began (a stop never sent, so cancelled, freeing its room; an answer
	 * taken in during the pass) is news that pass did not see.  The next
	 * pass clears it.
	 */
	/* What a failed flush left is in memory about to go (see reset). */
	b->n_arns = b->n_statuses = 0;
	MemoryContextReset(d->wait_cxt);

	if (d->pass_again)
	{
		while (b->n_arns + b->n_statuses <= OUTCOME_BATCH_MAX &&
			   collect_results(d, 0) == MAX_RESULTS_PER_WAIT)
			;
		write_batch(d);
		d->need_pass = true;
	}
	while (!d->need_pass)
	{
		TimestampTz now = GetCurrentTimestamp();
		long		left_ms = (long) ((end - now) / 1000);
		long		wait_ms = left_ms;
		int			queued = b->n_arns + b->n_statuses;

		if (queued > 0)
		{
			TimestampTz due = TimestampTzPlusMilliseconds(b->since, OUTCOME_BATCH_MS);

			if (queued >= OUTCOME_BATCH_MAX || now >= due || left_ms <= 0 ||
				fs_sm_pending(d->client) == 0)
				write_batch(d);
			else
				wait_ms = Min(wait_ms, Max((long) ((due - now) / 1000), 1));
		}
		if (MyLatch->is_set || d->turn_needed || ConfigReloadPending)
		{
			write_batch(d);
			d->need_pass = true;
			break;
		}
		if (left_ms <= 0)
			break;
		collect_results(d, wait_ms);
		CHECK_FOR_INTERRUPTS();
	}

	/*
	 * Reset the latch only before a turn with a pass: that pass sees every
	 * commit that set it.  Left set, it ends the next wait at once.
	 */
	if (d->need_pass)
		ResetLatch(MyLatch);
	MemoryContextSwitchTo(outer);
}
