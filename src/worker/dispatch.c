/*-------------------------------------------------------------------------
 *
 * dispatch.c
 *		The dispatcher's loop: one turn -- the scheduling pass, and
 *		carrying its decisions out against SageMaker, exactly once.
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
 *	   installation's and this job's (the fairshare:installation,
 *	   fairshare:job-id and fairshare:job-submitted tags every create
 *	   carries).  Another installation's
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
 * remembers about attempts (the tracks, dispatch_internal.h) is only an
 * optimisation and a guard against sending two calls for one attempt at
 * once: after a restart everything is read again from the tables.
 *
 * This file is the loop: a turn (the pass, reading the work, deciding the
 * calls) and a wait (collecting answers, writing them in batches).  The
 * calls each attempt needs are attempts.c, what an answer means for its job
 * outcome.c, and the SQL of those writes job_writes.c.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_prelude.h"

#include "storage/latch.h"
#include "postmaster/interrupt.h"

#include "settings.h"
#include "progress.h"
#include "sql_api/schedule.h"
#include "statement.h"
#include "tables/job_status.h"
#include "tables/installation.h"
#include "worker/dispatch_internal.h"
#include "worker/xact.h"

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

/*
 * A scheduling pass in its own transaction, placing or preempting at most
 * DISPATCH_PASS_DECISIONS jobs and never waiting for the pass lock.
 * Returns whether it stopped with work left: decisions beyond the limit,
 * left for the next pass, or new jobs it did not take in.  Otherwise a
 * pass at once would decide nothing new: what it placed was all that fit,
 * and what changes that (a commit, an outcome) asks for a pass itself.
 */
static bool
run_pass(void)
{
	static bool said_lock_held = false;
	FairsharePassOptions options = {0};
	FairsharePassOutcome outcome;

	options.decision_limit = DISPATCH_PASS_DECISIONS;
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

/* The placed attempts and what each needs, for a turn. */
/*
 * The region of an attempt whose training job exists is the one in its
 * ARN, where an environment names none: a reload of fairshare.region (or
 * AWS_REGION) must not send the describes and stops of training jobs that
 * run on to another region, where SageMaker does not know them.  Before
 * the ARN is known, it is the region its first create went to
 * (job_attempts.region, attempts.c), for the same reason.
 */
static FairshareStatement work_stmt = {
	.what = "read the dispatcher's work",
	.sql = "SELECT j.job_id, j.training_job_name, j.training_job_arn IS NOT NULL, "
		"j.stop_kind IS NOT NULL AND j.stop_sent_at IS NULL, e.endpoint_url, "
		"coalesce(e.region, CASE WHEN j.training_job_arn ~ '^arn:aws[a-z-]*:sagemaker:[a-z0-9-]+:' "
		"THEN split_part(j.training_job_arn, ':', 4) END, "
		"(SELECT a.region FROM fairshare.job_attempts a WHERE a.training_job_name = j.training_job_name)), "
		"j.scheduled_at, j.created_at "
		"FROM fairshare.jobs j JOIN fairshare.service_environments e ON e.name = j.service_environment "
		"WHERE j.status IN " FS_PLACED_STATUSES_SQL " ORDER BY j.job_id",
	.read_only = true,
};

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
	int64	   *submitted_us;
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
		return dispatch_describe_due(d, now,
							Max((long) ((TimestampTzPlusMilliseconds(d->last_pass_at, fairshare_poll_interval_ms)
										 - now) / 1000), 1));
	d->need_pass = false;
	d->last_pass_at = now;
	d->turn_needed = false;

	/*
	 * One pass places or preempts at most DISPATCH_PASS_DECISIONS jobs;
	 * when it stopped there with more to decide, the next pass comes at once
	 * (see fairshare_dispatch_wait), not at the next poll.  The calls this
	 * one leads to go on during it.
	 */
	d->pass_again = run_pass();

	/* The placed attempts and what each needs. */
	fairshare_xact_begin("fairshare dispatcher: work");
	fairshare_installation_id_and_tag_key(d->installation_id, sizeof(d->installation_id),
										  d->tag_key, sizeof(d->tag_key));
	n = fairshare_run_statement(&work_stmt, NULL, NULL);
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
		submitted_us = palloc(sizeof(int64) * Max(n, 1));
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
			/* Unix microseconds, as create_training_job_request() tags it */
			submitted_us[i] = DatumGetTimestampTz(SPI_getbinval(row, desc, 8, &isnull)) +
				(int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY;
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
			t->not_found = 0;
			t->first_create = 0;
			t->last_create_error[0] = '\0';
			t->exists = has_arn[i];
			/* an ARN is written only for a create of ours or a proven adoption */
			t->owned = has_arn[i];
			/* Placed before we started: a previous dispatcher may have sent it. */
			t->suspect = !has_arn[i] && placed_before[i];
			t->next_describe = now;
			t->next_stop = 0;
		}
		t->seen = true;
		t->submitted_us = submitted_us[i];
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
		else if (stop_wanted[i] && (t->next_stop <= now || !t->exists))
		{
			/*
			 * Never stop a training job not proven ours: look it up first.
			 * A stop that failed waits a poll interval before it is sent
			 * again, and the describes go on meanwhile (below): a stop that
			 * keeps failing must not keep the job from being seen to end.
			 */
			if (t->exists && t->owned)
				dispatch_send_call(d, t, FS_SM_STOP_TRAINING_JOB, dispatch_name_request(t->name));
			else if (t->exists || t->suspect)
				dispatch_send_call(d, t, FS_SM_DESCRIBE_TRAINING_JOB, dispatch_name_request(t->name));
			else
				dispatch_cancel_unsent_guarded(d, t);
		}
		else if (!t->exists)
		{
			if (t->suspect)
				dispatch_send_call(d, t, FS_SM_DESCRIBE_TRAINING_JOB, dispatch_name_request(t->name));
			else if (dispatch_create_given_up_guarded(d, t, now))
				continue;
			else
				want_create[n_create++] = t;
		}
		else if (t->next_describe <= now)
			dispatch_send_call(d, t, FS_SM_DESCRIBE_TRAINING_JOB, dispatch_name_request(t->name));
		else
		{
			TimestampTz due = stop_wanted[i] ? Min(t->next_describe, t->next_stop) : t->next_describe;
			long		due_ms = (long) ((due - now) / 1000);

			wait_ms = Min(wait_ms, Max(due_ms, 1));
		}
	}

	/* Creates go out together: one transaction reads all their bodies. */
	dispatch_send_creates(d, want_create, n_create);

	/* Forget attempts that are over. */
	hash_seq_init(&seq, d->tracks);
	while ((t = hash_seq_search(&seq)) != NULL)
		if (!t->seen && !t->in_flight)
			hash_search(d->tracks, &t->job_id, HASH_REMOVE, NULL);
	return wait_ms;
}

/*
 * Write the outcomes collected so far, then free the memory the results
 * and the batch were in (the results are all handled by then).
 */
static void
write_batch(FairshareDispatch *d)
{
	dispatch_flush_outcomes_guarded(d);
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
		dispatch_handle_result_guarded(d, done[i]);
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
