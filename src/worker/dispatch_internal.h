/*-------------------------------------------------------------------------
 *
 * dispatch_internal.h
 *		What the files of a dispatcher turn share: what the dispatcher
 *		knows about each attempt, the batch of outcomes not yet written,
 *		and the functions each file offers the others.
 *
 *	 dispatch.c		the loop: a turn, a wait, the scheduling pass
 *	 attempts.c		the calls each attempt needs, and when
 *	 outcome.c		what each SageMaker answer means for its job
 *	 job_writes.c	the SQL that writes outcomes to fairshare.jobs
 *
 *-------------------------------------------------------------------------
 */
#ifndef FAIRSHARE_DISPATCH_INTERNAL_H
#define FAIRSHARE_DISPATCH_INTERNAL_H

#include "aws/sagemaker_client.h"
#include "utils/hsearch.h"
#include "worker/dispatch.h"

#define TRAINING_JOB_NAME_MAX 64
#define MAX_RESULTS_PER_WAIT 64

/*
 * The most jobs one scheduling pass of the dispatcher places or preempts,
 * counting the job each reclaim is for (fs_decision_counted()), and the
 * most new jobs it takes into their queues.  At 1,000 shares a pass reads
 * its world in about 50 ms and then costs about 0.12 ms per job row it
 * writes: at 256 the median pass of a burst takes 59-99 ms, at 512 a
 * reclaiming pass took 110-135 ms (docs/benchmarks.md, 'Scale').
 * Smaller passes read the world more often over a burst, which costs
 * little next to sending it: SageMaker's creates go out at
 * fairshare.api_rate_limit a second.
 */
#define DISPATCH_PASS_DECISIONS 256

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
	TimestampTz next_stop;		/* a stop that failed is sent again no sooner */
	int			failed_creates; /* creates that got no usable answer */
	int			not_found;		/* lookups in a row SageMaker said it no longer knows it */
	TimestampTz first_create;	/* when the first create was sent; 0 if none */
	char		last_create_error[256]; /* what the last of those failed with */
	char		endpoint_url[256];	/* the environment's; "" for the default */
	char		region[64];		/* the environment's; "" for the default */
	int64		submitted_us;	/* the job's created_at, as its tag has it */
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
	char		tag_key[65];	/* and its tag_key: never in a message */
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

/* What writing one job's outcome came to. */
typedef enum OutcomeWrite
{
	OUTCOME_STAYS_PLACED,		/* written; the job is still placed */
	OUTCOME_LEFT_PLACED,		/* written; capacity freed or the job waits again */
	OUTCOME_JOB_BUSY			/* not written: another transaction holds the row */
} OutcomeWrite;

/* attempts.c */
extern void dispatch_send_call(FairshareDispatch *d, AttemptTrack *t, FsSmOperation op, Jsonb *request);
extern Jsonb *dispatch_name_request(const char *name);
extern Jsonb *dispatch_list_tags_request(const char *arn);
extern void dispatch_send_creates(FairshareDispatch *d, AttemptTrack **want, int n);
extern char *dispatch_submission_tag(const FairshareDispatch *d, const char *name, int64 submitted_us);
extern void dispatch_cancel_unsent(FairshareDispatch *d, AttemptTrack *t);
extern long dispatch_describe_due(FairshareDispatch *d, TimestampTz now, long wait_ms);
extern bool dispatch_create_given_up(FairshareDispatch *d, AttemptTrack *t, TimestampTz now);

/* outcome.c */
extern Jsonb *dispatch_made_up_response(const char *name, const char *status, const char *failure);
extern void dispatch_handle_result_guarded(FairshareDispatch *d, const FsSmResult *r);
extern void dispatch_flush_outcomes_guarded(FairshareDispatch *d);
extern void dispatch_cancel_unsent_guarded(FairshareDispatch *d, AttemptTrack *t);
extern bool dispatch_create_given_up_guarded(FairshareDispatch *d, AttemptTrack *t, TimestampTz now);

/* job_writes.c */
extern OutcomeWrite dispatch_apply_status(int64 job_id, Jsonb *response);
extern OutcomeWrite dispatch_record_cancel_unsent(const AttemptTrack *t);
extern void dispatch_note_call_trouble(const AttemptTrack *t, const char *reason);
extern void dispatch_flush_outcomes(FairshareDispatch *d);
extern void dispatch_record_stop_sent(AttemptTrack *t);

#endif							/* FAIRSHARE_DISPATCH_INTERNAL_H */
