/*-------------------------------------------------------------------------
 *
 * outcome.c
 *		What each SageMaker answer means for its job: ARNs and statuses
 *		queued for the next batch, adoption by tags, failures and their
 *		retries, each applied with its errors contained so that one bad
 *		answer never keeps the others from being written.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_prelude.h"

#include "settings.h"
#include "statement.h"
#include "tables/installation.h"
#include "worker/dispatch_internal.h"
#include "worker/log_throttle.h"
#include "worker/xact.h"

/*
 * How many DescribeTrainingJob answers in a row, a poll interval apart,
 * must say that SageMaker no longer knows a training job it knew before
 * its job fails.
 */
#define NOT_FOUND_LOOKUPS	3

/* A DescribeTrainingJob-shaped answer we make up ourselves. */
Jsonb *
dispatch_made_up_response(const char *name, const char *status, const char *failure)
{
	static FairshareStatement response_stmt = {
		.what = "build a response",
		.sql = "SELECT jsonb_strip_nulls(jsonb_build_object('TrainingJobName', $1, "
			"'TrainingJobStatus', $2, 'SecondaryStatus', $2, 'FailureReason', $3))",
		.argtypes = {TEXTOID, TEXTOID, TEXTOID},
		.read_only = true,
		.max_rows = 1,
	};
	Datum		values[3] = {CStringGetTextDatum(name), CStringGetTextDatum(status),
	failure ? CStringGetTextDatum(failure) : (Datum) 0};
	char		nulls[3] = {' ', ' ', failure ? ' ' : 'n'};
	Jsonb	   *result;
	bool		isnull;
	MemoryContext outer = CurrentMemoryContext;

	fairshare_xact_begin("fairshare dispatcher: response");
	if (fairshare_run_statement(&response_stmt, values, nulls) != 1)
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
 * The time in a fairshare:job-submitted tag's value ("<Unix microseconds>.
 * <signature>"), into *us; false when the value does not begin with one.
 */
static bool
submitted_us_of(const char *value, int64 *us)
{
	char	   *end;

	errno = 0;
	*us = strtoi64(value, &end, 10);
	return errno == 0 && end != value && (*end == '\0' || *end == '.');
}

/* That time as a timestamp, for a message, or the value as is. */
static char *
submitted_as_time(const char *value)
{
	int64		us;

	if (!submitted_us_of(value, &us))
		return pstrdup(value);
	return pstrdup(timestamptz_to_str(us - (int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY));
}

/*
 * Is the training job whose ListTags answer this is the attempt t's own?
 * Its fairshare:installation tag must be this installation's and its
 * fairshare:job-id tag t's job.  An attempt placed before fairshare
 * tagged installations (its name has no installation part) has no
 * installation tag; it is adopted on its job id and queue tags.  Otherwise
 * *why says whose it is.
 *
 * The fairshare:job-submitted tag (when the job was submitted, in
 * microseconds, signed with the attempt's name: dispatch_submission_tag())
 * must be t's too: after an asynchronous failover
 * lost the end of the WAL, a job submitted on the new primary can be given
 * a lost job's id, and so its attempt the lost attempt's name and its
 * installation and job id tags.  Only the submission time tells them
 * apart.  Every training job named with the installation carries it (both
 * came in the same release), so one without it was made by someone else:
 * the installation id and a waiting job's id are no secret, and anyone
 * allowed to create training jobs in the account could otherwise make the
 * job's next attempt, with their own image and output, and have it taken
 * for the job's.  The signature is what they cannot copy: the submission
 * time is in the job's row, and in the tags of the job's earlier training
 * jobs, but each attempt's name is signed anew with a key only the
 * catalog owner reads.  Only 0.1.0's names, without the installation, go
 * without the tag; the name is judged without its prefix, which a reload
 * may have changed since it was given.
 */
static bool
ours_by_tags(const FairshareDispatch *d, const AttemptTrack *t, Jsonb *tags, char **why)
{
	char	   *installation = tag_value(tags, "fairshare:installation");
	char	   *job = tag_value(tags, "fairshare:job-id");
	char	   *own_job = psprintf(INT64_FORMAT, t->job_id);
	char	   *submitted = tag_value(tags, "fairshare:job-submitted");
	char	   *own_submitted = dispatch_submission_tag(d, t->name, t->submitted_us);
	int64		tagged_us;
	bool		named_with_installation;

	named_with_installation = fairshare_training_job_name_has_installation(t->name, d->installation_id, t->job_id);
	if (job != NULL && strcmp(job, own_job) == 0 &&
		(installation != NULL ? strcmp(installation, d->installation_id) == 0 :
		 !named_with_installation && tag_value(tags, "fairshare:job-queue") != NULL))
	{
		if (submitted == NULL ? !named_with_installation : strcmp(submitted, own_submitted) == 0)
			return true;
		if (submitted == NULL)
		{
			*why = psprintf("TrainingJobNameConflict: a training job named %s already exists in SageMaker and is not "
							"this attempt's: it has no fairshare:job-submitted tag, which every training job "
							"fairshare names so carries; fairshare did not adopt it",
							t->name);
			return false;
		}
		if (submitted_us_of(submitted, &tagged_us) && tagged_us == t->submitted_us)
		{
			/* this job's time, but not signed for this name under this installation's key */
			*why = psprintf("TrainingJobNameConflict: a training job named %s already exists in SageMaker and is not "
							"this attempt's: its fairshare:job-submitted tag is not signed by this installation "
							"(someone else made it under this name, or it was signed under a tag_key since "
							"replaced); fairshare did not adopt it",
							t->name);
			return false;
		}
		*why = psprintf("TrainingJobNameConflict: a training job named %s already exists in SageMaker and is not "
						"this attempt's: it belongs to an earlier job %s of this installation, submitted at %s "
						"(this one was submitted at %s), whose row this database no longer has (an "
						"asynchronous failover or a restore lost it); fairshare did not adopt it",
						t->name, own_job, submitted_as_time(submitted), submitted_as_time(own_submitted));
		return false;
	}
	*why = psprintf("TrainingJobNameConflict: a training job named %s already exists in SageMaker and is not "
					"this attempt's (its fairshare:installation tag is %s, its fairshare:job-id tag %s; "
					"this is installation %s, job %s); fairshare did not adopt it",
					t->name, installation ? installation : "missing", job ? job : "missing",
					d->installation_id, own_job);
	return false;
}

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

/*
 * A create with no answer we can trust: it may or may not exist.  Look it
 * up a poll interval from now; the job keeps its place and says why it
 * waits.  refused: the last try was refused, but an earlier one went
 * unanswered.
 */
static void
look_up_unanswered_create(AttemptTrack *t, const FsSmResult *r, TimestampTz next_poll, bool refused)
{
	t->suspect = true;
	t->next_describe = next_poll;
	t->failed_creates++;
	strlcpy(t->last_create_error, failure_reason(r), sizeof(t->last_create_error));
	dispatch_note_call_trouble(t, psprintf(refused ?
								  "CreateTrainingJob %s was refused (%s) after an earlier try got no answer, which "
								  "SageMaker may have acted on; it is looked up and, if SageMaker does not know it, "
								  "sent again (%d of at most %d)" :
								  "CreateTrainingJob %s got no usable answer (%s); it is looked up "
								  "and, if SageMaker does not know it, sent again (%d of at most %d)",
								  t->name, failure_reason(r), t->failed_creates,
								  fairshare_create_retry_limit));
	warn_throttled(r, t->name, "It will be looked up and, if SageMaker does not know it, created again.");
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
					 * An earlier try of this call went unanswered or got a
					 * 5xx, and SageMaker may have acted on it: the refusal
					 * speaks for the last try only (a ResourceLimitExceeded
					 * may even be the first try's training job using the
					 * quota).  Look the name up before anything is decided.
					 */
					if (r->ambiguous_tries > 0)
					{
						look_up_unanswered_create(t, r, next_poll, true);
						break;
					}

					/*
					 * SageMaker refused this attempt (a 4xx it answered after
					 * reading the request: nothing was created): the retry
					 * rules decide.  AccessDenied belongs here, typically a
					 * RoleArn the server may not pass.
					 */
					switch (dispatch_apply_status(t->job_id, dispatch_made_up_response(t->name, "Failed", failure_reason(r))))
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
					/* no answer we can trust: retries exhausted, credentials refused, no endpoint, TLS */
					look_up_unanswered_create(t, r, next_poll, false);
					break;
			}
			break;

		case FS_SM_DESCRIBE_TRAINING_JOB:
			switch (r->error_class)
			{
				case FS_SM_OK:
					t->exists = true;
					t->suspect = false;
					t->not_found = 0;
					t->next_describe = next_poll;
					if (t->owned)
						queue_status(d, t, r->response);
					else
					{
						/* Not seen created by us: prove it ours before anything is believed. */
						char	   *arn = jsonb_string_field(r->response, "TrainingJobArn");

						if (arn != NULL)
							dispatch_send_call(d, t, FS_SM_LIST_TAGS, dispatch_list_tags_request(arn));
					}
					break;
				case FS_SM_RESOURCE_NOT_FOUND:
					if (t->exists && ++t->not_found < NOT_FOUND_LOOKUPS)
					{
						/*
						 * SageMaker knew it and says it does not: believed
						 * only when said again, a poll interval apart.  One
						 * answer may be a passing fault, or come from
						 * another endpoint than the one that made it; a job
						 * failed on it would leave its training job running
						 * with nobody following it.
						 */
						warn_throttled(r, t->name,
									   psprintf("SageMaker knew this training job; it is looked up again (%d of %d lookups) before the job fails.",
												t->not_found, NOT_FOUND_LOOKUPS));
						t->next_describe = next_poll;
					}
					else if (t->exists)
					{
						OutcomeWrite w = dispatch_apply_status(t->job_id,
													  dispatch_made_up_response(t->name, "Failed",
																	   psprintf("ResourceNotFound: the training job is no longer known to SageMaker (%d lookups in a row)",
																				t->not_found)));
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
						dispatch_note_call_trouble(t, psprintf("DescribeTrainingJob %s, the lookup of an attempt that may "
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
									 errhint("Give each installation sharing a SageMaker account its own fairshare.job_name_prefix; "
											 "a training job someone else made under one of fairshare's names is left alone.")));
							if (dispatch_apply_status(t->job_id, dispatch_made_up_response(t->name, "Failed", why)) == OUTCOME_LEFT_PLACED)
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
					dispatch_note_call_trouble(t, psprintf("ListTags for %s, which shows whether the existing training job "
												  "is this attempt's, failed (%s); it is tried again",
												  t->name, failure_reason(r)));
					break;
			}
			break;
		case FS_SM_STOP_TRAINING_JOB:
			switch (r->error_class)
			{
				case FS_SM_OK:
					dispatch_record_stop_sent(t);
					t->next_describe = now;
					break;
				case FS_SM_RESOURCE_NOT_FOUND:
					if (!t->exists)
						dispatch_cancel_unsent(d, t);
					t->next_describe = now;
					t->next_stop = next_poll;
					break;
				case FS_SM_VALIDATION:
					/* Already stopping or finished: the next describe says how it ended. */
					dispatch_record_stop_sent(t);
					t->next_describe = now;
					break;
				default:
					/*
					 * Not sent (no permission, an outage): sent again a poll
					 * interval from now, and meanwhile looked up, which also
					 * sees the training job end by itself.
					 */
					warn_throttled(r, t->name, NULL);
					t->next_stop = next_poll;
					t->next_describe = now;
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
void
dispatch_handle_result_guarded(FairshareDispatch *d, const FsSmResult *r)
{
	if (!run_contained(d, handle_result_work, outcome_error_context, (void *) r))
		forget_outcome(d, (int64) r->tag, true);
}

/*
 * The turn's own writes -- the stop of an attempt never sent, a create
 * given up -- contained as answers are: a trigger of yours that refuses
 * one must not end the turn, dropping the creates it gathered and leaving
 * the attempts after this one for the next.  The attempt is looked up
 * again a poll interval later.
 */
typedef struct TurnWrite
{
	AttemptTrack *track;
	const char *why;			/* for the error's context */
	TimestampTz now;
	bool		given_up;
} TurnWrite;

static void
turn_write_error_context(void *arg)
{
	const TurnWrite *w = (const TurnWrite *) arg;

	errcontext("ending attempt %s of job %lld, which %s", w->track->name, (long long) w->track->job_id,
			   w->why);
}

static void
cancel_unsent_work(FairshareDispatch *d, void *arg)
{
	dispatch_cancel_unsent(d, ((TurnWrite *) arg)->track);
}

static void
create_given_up_work(FairshareDispatch *d, void *arg)
{
	TurnWrite  *w = (TurnWrite *) arg;

	w->given_up = dispatch_create_given_up(d, w->track, w->now);
}

void
dispatch_cancel_unsent_guarded(FairshareDispatch *d, AttemptTrack *t)
{
	TurnWrite	w = {.track = t, .why = "was never sent and is to stop"};

	if (!run_contained(d, cancel_unsent_work, turn_write_error_context, &w))
		forget_outcome(d, t->job_id, false);
}

/* Whether the attempt was given up (or its write failed): not to be created now. */
bool
dispatch_create_given_up_guarded(FairshareDispatch *d, AttemptTrack *t, TimestampTz now)
{
	TurnWrite	w = {.track = t, .why = "could not be created", .now = now};

	if (run_contained(d, create_given_up_work, turn_write_error_context, &w))
		return w.given_up;
	forget_outcome(d, t->job_id, false);
	return true;
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
	if (dispatch_apply_status(s->job_id, s->response) == OUTCOME_LEFT_PLACED)
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
	dispatch_flush_outcomes(d);
}

/*
 * flush_outcomes, with an ERROR contained the same way.  One bad outcome
 * must not keep the others of its batch from being written: after a failed
 * batch each DescribeTrainingJob answer is applied on its own, and the one
 * that fails is looked up again after a poll interval.  The ARNs of the
 * batch are dropped; each comes back with its attempt's next describe.
 */
void
dispatch_flush_outcomes_guarded(FairshareDispatch *d)
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
