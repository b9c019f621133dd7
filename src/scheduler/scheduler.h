/*-------------------------------------------------------------------------
 *
 * scheduler.h
 *		The pure scheduling core of fairshare: plain structs in, decisions out.
 *
 * One call, fs_schedule(), runs one *pass* over a snapshot of the world
 * (environments and their capacity limits, queues, shares, the jobs that
 * hold capacity and a prefix of each share's RUNNABLE jobs) and returns
 * what to do: which jobs to place where, which running jobs to preempt and
 * for whom, which jobs capacity is held for (nominations), which jobs can
 * never run, the new decayed usage of every fair share, and for every job
 * it considered and left waiting a structured reason that
 * fs_format_wait_reason() turns into a sentence with numbers.
 *
 * The rules are those of docs/scheduling.md, cited in this folder by their
 * section numbers (2.1 to 2.7); src/scheduler/README.md says
 * what the core decided where those rules are silent.
 *
 * What this code must never do: include a PostgreSQL header, call SPI,
 * keep global or static mutable state, call malloc/free directly, or read
 * the clock.  It is plain C99 (only <stdint.h>, <stdbool.h>, <stddef.h>,
 * <string.h>, <math.h>, <stdio.h>), so the SQL wrapper can run it inside
 * the server with palloc in a per-pass memory context while tests,
 * benchmarks and the workload simulator run it with malloc.  Every exported
 * name starts with fs_ or Fs so it cannot clash with the server's symbols.
 *
 * Conventions
 *	 - Environments, queues, shares and running jobs are referred to by their
 *	   index in the FsInput arrays; instance types by an interned id
 *	   0 .. n_instance_types-1 (the wrapper maps names to ids).
 *	 - A capacity unit is FS_UNIT_NUM_INSTANCES or an instance type id.
 *	 - Times (FsTime) are microseconds on any one clock, e.g. TimestampTz;
 *	   durations are microseconds too.
 *	 - The core never modifies its input and keeps no pointer into it after
 *	   returning, except that FsResult refers to jobs by their job_id.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FAIRSHARE_SCHEDULER_H
#define FAIRSHARE_SCHEDULER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Microseconds (PostgreSQL's TimestampTz fits as is). */
typedef int64_t FsTime;

#define FS_USECS_PER_SEC	INT64_C(1000000)
#define FS_SECONDS(s)		((FsTime) (s) * FS_USECS_PER_SEC)

/* The capacity unit 'NUM_INSTANCES'; every other unit is an instance type id. */
#define FS_UNIT_NUM_INSTANCES	(-1)

/*
 * Memory.  Every byte the core uses comes from alloc(ctx, size); it returns
 * memory aligned for any type and never returns NULL (palloc raises an
 * ERROR instead, a test allocator aborts).  free may be NULL when the caller
 * owns an arena it resets after the pass; otherwise the core frees all its
 * scratch memory before fs_schedule() returns, and fs_result_free() frees
 * the result.
 */
typedef struct FsAllocator
{
	void	   *(*alloc) (void *ctx, size_t size);
	void		(*free) (void *ctx, void *ptr);
	void	   *ctx;
} FsAllocator;

/* One capacity limit: at most max_capacity instances of a unit at once. */
typedef struct FsLimit
{
	int			unit;			/* FS_UNIT_NUM_INSTANCES or an instance type id */
	int64_t		max_capacity;
} FsLimit;

/* A service environment (a pool of SageMaker capacity). */
typedef struct FsEnvironment
{
	const char *name;
	bool		enabled;		/* DISABLED: nothing new is placed here */
	int			n_limits;
	const FsLimit *limits;		/* at most one per unit */
} FsEnvironment;

typedef enum FsPolicyKind
{
	FS_POLICY_FIFO,				/* no scheduling policy */
	FS_POLICY_FAIR_SHARE,
	FS_POLICY_QUOTA_SHARE
} FsPolicyKind;

/*
 * The kind of a queue's scheduling policy from its name in
 * fairshare.scheduling_policies.kind: NULL (no policy) is FIFO.  The one
 * parser, for the pass and for the submission check alike.
 */
extern FsPolicyKind fs_policy_kind_from_name(const char *kind);

typedef enum FsIdleAssignment
{
	FS_IDLE_FIFO,				/* the borrowing offer that waited longest first */
	FS_IDLE_FAIR				/* lowest (borrowed + n) / weight first */
} FsIdleAssignment;

typedef enum FsStrategy
{
	FS_STRATEGY_RESERVE,		/* unused capacity is kept; never borrows */
	FS_STRATEGY_LEND,			/* unused capacity may be borrowed; never borrows */
	FS_STRATEGY_LEND_AND_BORROW /* lends, and borrows up to borrow_limit */
} FsStrategy;

/*
 * A job queue.  The wrapper passes ENABLED queues only.  Every queue has at
 * least one share: a FIFO queue has exactly one (any name; the wrapper may
 * use the queue's name), a fair-share queue one per share identifier that
 * has jobs or stored usage, a quota-share queue one per ENABLED quota share.
 */
typedef struct FsQueue
{
	const char *name;
	int			priority;		/* higher is served first; ties by name */
	FsPolicyKind policy;
	bool		strict_fifo;	/* FIFO: a head that does not fit blocks the rest */
	int			n_environments;
	const int  *environments;	/* indexes into FsInput.environments, in order */
	FsTime		share_decay;	/* FAIR_SHARE: half-life of usage; 0 = held now */
	int			compute_reservation;	/* FAIR_SHARE: 0..99 (percent) */
	FsIdleAssignment idle_assignment;	/* QUOTA_SHARE */
} FsQueue;

typedef enum FsNominationKind
{
	FS_NOMINATION_NONE,
	FS_NOMINATION_PREEMPTION,	/* victims were stopped to make room for it */
	FS_NOMINATION_STARVATION	/* waited past starvation_wait; room held as it frees */
} FsNominationKind;

/*
 * A nomination: capacity on (environment, instance_type) held for one job.
 * The wrapper stores it with the job (kind, environment, type, since) and
 * passes it back on every pass until the job is placed or the nomination
 * is dropped.
 */
typedef struct FsNomination
{
	FsNominationKind kind;
	int			environment;
	int			instance_type;
	FsTime		since;
} FsNomination;

/* (environment, instance type) that a job must not use until `until'. */
typedef struct FsBackoff
{
	int			environment;
	int			instance_type;
	FsTime		until;
} FsBackoff;

/* A RUNNABLE job, loaded as part of its share's prefix. */
typedef struct FsRunnableJob
{
	int64_t		job_id;			/* > 0 */
	int			priority;		/* scheduling_priority (FIFO queues ignore it) */
	FsTime		runnable_at;
	int			instance_count; /* > 0 */
	int			n_instance_types;
	const int  *instance_types; /* in order of preference */
	int			n_backoffs;
	const FsBackoff *backoffs;	/* expired entries are ignored */
	FsNomination nomination;	/* kind NONE when it has none */

	/*
	 * The longest it can hold its instances once placed: its time limit
	 * (MaxRuntimeInSeconds) plus the wrapper's allowance for startup and
	 * stop; 0 = unknown.  A job with a known bound may back-fill room held
	 * for a starving job if it is certain to be gone before that job's
	 * room could be complete (src/scheduler/README.md, "Starvation").
	 */
	FsTime		max_occupancy;
} FsRunnableJob;

/*
 * A share: the single share of a FIFO queue, a fair-share identifier, or a
 * quota share.  `runnable' is a PREFIX of the share's RUNNABLE jobs in the
 * share's order -- FIFO: runnable_at, job_id; fair and quota shares:
 * priority descending, runnable_at, job_id -- as the wrapper reads them
 * through an index (the core sorts the prefix again, cheaply, so a slightly
 * wrong order is harmless, but the prefix itself must be the right one),
 * PLUS every RUNNABLE job of the share that has a nomination, wherever it
 * stands: room is held for it, and a pass that does not see it would give
 * that room away.  (An index on the nomination columns finds them.)
 */
typedef struct FsShare
{
	const char *name;
	int			queue;			/* index into FsInput.queues */

	/* FAIR_SHARE */
	double		weight;			/* weight_factor (fs_share_weight()); <= 0 means 1 */
	double		usage;			/* stored decayed usage U, in instances */
	FsTime		usage_at;		/* when U was stored; <= 0: never */

	/* QUOTA_SHARE (weight above is also its idle_assignment FAIR weight) */
	int			n_limits;
	const FsLimit *limits;		/* L_q, at most one per unit */
	FsStrategy	strategy;
	int			borrow_limit;	/* percent of its own limit; -1 = unlimited */
	bool		in_share_preemption;

	int			n_runnable;
	const FsRunnableJob *runnable;
	bool		more_runnable;	/* RUNNABLE jobs exist beyond the prefix */
} FsShare;

/*
 * A job that occupies capacity: SCHEDULED, STARTING or RUNNING, including
 * while a stop is in progress.  Pass every one of them, also those of
 * disabled queues and shares (with share = -1): they fill environments.
 */
typedef struct FsRunningJob
{
	int64_t		job_id;
	int			share;			/* index into FsInput.shares, or -1 */
	int			environment;
	int			instance_type;
	int			instance_count;
	int			priority;		/* current scheduling_priority */
	FsTime		started_at;		/* when placed (scheduled_at until it started);
								 * not before now: placed by an earlier pass at
								 * this moment, never a victim now */
	bool		stopping;		/* StopTrainingJob sent, not yet stopped */
	int64_t		stopping_for;	/* job_id the stop makes room for, 0 = none */
	FsTime		ends_by;		/* it will have freed its instances by then at
								 * the latest (placement + max_occupancy);
								 * 0 = unknown */

	/*
	 * Checkpoints, for the work a stop would lose (fs_lost_work()).  A job
	 * whose request has CheckpointConfig saves its training every
	 * checkpoint_interval, counted from checkpoint_from, when its training
	 * began (SageMaker's 'Training' status): a stop loses only what it did
	 * since the last one, and its next attempt resumes from it.  interval 0:
	 * it keeps nothing and loses everything since started_at; from 0 (or
	 * after now): not training yet, nothing kept so far.
	 */
	FsTime		checkpoint_interval;
	FsTime		checkpoint_from;
} FsRunningJob;

/*
 * Which of the victims the rules allow goes first (docs/scheduling.md 2.6: after
 * "young" jobs last, the share most over its limit and the lowest priority).
 * LEAST_LOST, the rule: the job whose stop loses the least work per
 * instance of the need it frees (src/scheduler/README.md, "Preemption");
 * LATEST_STARTED: the most recently started, the order before checkpoints
 * were counted, kept so that benchmarks can measure the difference.
 */
typedef enum FsVictimOrder
{
	FS_VICTIMS_LEAST_LOST,
	FS_VICTIMS_LATEST_STARTED
} FsVictimOrder;

typedef struct FsInput
{
	FsTime		now;
	FsTime		preemption_min_runtime; /* fairshare.preemption_min_runtime */
	FsTime		starvation_wait;	/* fairshare.starvation_seconds; <= 0: off */
	FsVictimOrder victim_order; /* 0 (LEAST_LOST) unless comparing */

	/*
	 * fairshare.reclaim_wait: a reclaim that victims could make room for
	 * first waits this long, nominated and holding the room that frees by
	 * itself, and then preempts only what is still short; 0: preempt at
	 * once (src/scheduler/README.md, "Preemption").
	 */
	FsTime		reclaim_wait;

	/*
	 * fairshare.checkpoint_on_stop: a victim that keeps checkpoints is
	 * taken to write one more when it is stopped (SageMaker's stop gives
	 * the script time to), so it loses only its startup (fs_lost_work()).
	 */
	bool		checkpoint_on_stop;
	bool		collect_wait_reasons;	/* fill FsResult.wait_reasons */

	/*
	 * A bounded pass: once the pass has placed or preempted this many jobs,
	 * counting the job each reclaim was for (fs_decision_counted(); a
	 * reclaim's victims and its nomination together), it decides nothing
	 * more -- the wrapper writes no more than that, and the next pass
	 * decides the rest on what it wrote.  Its decisions up to there are the
	 * same as without the limit.  0: no limit.
	 */
	int			decision_limit;

	int			n_instance_types;
	const char *const *instance_type_names; /* [n_instance_types], for sentences */
	int			n_environments;
	const FsEnvironment *environments;
	int			n_queues;
	const FsQueue *queues;
	int			n_shares;
	const FsShare *shares;
	int			n_running;
	const FsRunningJob *running;
} FsInput;

/* ---------- what a pass decides ---------- */

typedef enum FsDecisionKind
{
	FS_DECISION_PLACE,			/* start job on (environment, instance_type) */
	FS_DECISION_PREEMPT,		/* stop running job_id to make room for for_job_id */
	FS_DECISION_NOMINATE,		/* hold (environment, type) for the job from now on;
								 * replaces any earlier nomination of the job */
	FS_DECISION_KEEP_NOMINATION,	/* earlier nomination still stands */
	FS_DECISION_DROP_NOMINATION,	/* earlier nomination no longer stands */
	FS_DECISION_MISCONFIGURED	/* job can never fit; stays RUNNABLE with reason */
} FsDecisionKind;

typedef enum FsPreemptReason
{
	FS_PREEMPT_NONE,
	FS_PREEMPT_RECLAIM,			/* for_job's share reclaims its guarantee */
	FS_PREEMPT_IN_SHARE			/* higher-priority job of the same share */
} FsPreemptReason;

typedef enum FsMisconfiguration
{
	FS_MISCONFIG_NONE,
	FS_MISCONFIG_ENVIRONMENT_MAX,	/* MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE */
	FS_MISCONFIG_QUOTA_SHARE_MAX	/* MISCONFIGURATION:QUOTA_SHARE_MAX_RESOURCE */
} FsMisconfiguration;

typedef struct FsDecision
{
	FsDecisionKind kind;
	int64_t		job_id;			/* the placed/nominated/... job, or the victim */
	int			share;			/* job_id's share (-1 for a victim of no share) */
	int			environment;	/* -1 when not about a placement */
	int			instance_type;
	int			instance_count;

	/*
	 * PLACE: the starving job whose held room this placement uses (0:
	 * none), and when that room is complete at the latest.  Either this
	 * job's time limit ends it by then (backfill_gone_by, the latest it is
	 * gone), or (backfill_gone_by 0) it keeps no more than jobs ending by
	 * then give back beyond what the starving job needs.
	 */
	int64_t		backfill_for_job_id;
	FsTime		backfill_complete_by;
	FsTime		backfill_gone_by;

	/*
	 * PLACE of a quota share's job, for its reason: the share's limit that
	 * binds its guarantee for the job (the unit fs_quota_room() finds
	 * shortest; 0 when none applies), what counts against that limit once
	 * the job is placed, and how many of its instances go beyond it.
	 */
	int64_t		share_limit;
	int64_t		share_holds;
	int64_t		share_borrowed;

	/* PREEMPT */
	FsPreemptReason preempt_reason;
	int64_t		for_job_id;
	int			for_share;
	int			for_priority;
	int64_t		victim_share_held;	/* victim's share: instances held, stopping ones too */
	int64_t		victim_share_nominated; /* ... and held for its nominated jobs */
	int64_t		victim_share_limit; /* its limit in the same unit (-1: none) */
	int			victim_priority;	/* the victim's scheduling_priority */
	bool		victim_young;	/* ran less than preemption_min_runtime: no
								 * other job could free the room */
	FsTime		victim_lost;	/* fs_lost_work(): time its stop loses */
	FsTime		victim_checkpoint_interval; /* 0: it keeps no checkpoints */

	/* NOMINATE, KEEP_NOMINATION, DROP_NOMINATION */
	FsNominationKind nomination_kind;
	FsTime		nominated_since;
	bool		reclaim_waits;	/* PREEMPTION with no victims yet: it waits
								 * fairshare.reclaim_wait for room to free
								 * (DROP: it has waited; step 2 reclaims) */

	/*
	 * NOMINATE, KEEP_NOMINATION of a starving job: its held room is complete
	 * by then at the latest, by the time limits of the jobs it waits for;
	 * what back-fills it never makes that later (0: not known, or the job
	 * waits for something other than room).
	 */
	FsTime		room_complete_by;

	/* MISCONFIGURED */
	FsMisconfiguration misconfiguration;
	int64_t		largest_limit;	/* the most any (environment, type) allows */
} FsDecision;

typedef enum FsWaitKind
{
	FS_WAIT_CAPACITY,			/* an environment limit has too little unused capacity */
	FS_WAIT_HELD,				/* it would fit, but the room is held for a nominated job */
	FS_WAIT_RESERVED,			/* kept for RESERVE shares or the compute reservation */
	FS_WAIT_SHARE_LIMIT,		/* the quota share is at the most it may hold */
	FS_WAIT_NOMINATED,			/* room is held for it; waiting for it to free up */
	FS_WAIT_BACKOFF,			/* every usable pair is in capacity back-off */
	FS_WAIT_ENVIRONMENT_DISABLED,	/* the only environments it fits are disabled */
	FS_WAIT_STRICT_FIFO,		/* behind a head that does not fit (strict_fifo) */
	FS_WAIT_MISCONFIGURED		/* can never fit */
} FsWaitKind;

/*
 * Why a job considered in this pass was left waiting.  The numbers are
 * about the first (environment, instance type) pair, in fallback order,
 * that could ever hold the job, taken when the job was last considered.
 */
typedef struct FsWaitReason
{
	int64_t		job_id;
	int			share;
	int			position;		/* 1-based position in its share's order */
	FsWaitKind	kind;
	int			environment;	/* -1 if none */
	int			instance_type;	/* -1 if none */
	int			unit;			/* the blocking limit's unit */
	bool		share_level;	/* the limit is the quota share's, not the environment's */
	int			needed;			/* the job's instance count */
	int64_t		limit;			/* the blocking limit (for a share: the most it may hold) */
	int64_t		in_use;			/* instances occupying it (share: held by the share) */
	int64_t		held;			/* held for nominations (share: its nominated jobs) */
	int64_t		reserved;		/* kept for RESERVE shares / compute reservation */
	int64_t		free;			/* limit - in_use - held - reserved, >= 0 */
	int64_t		held_for_job_id;	/* HELD: the job the room is held for */
	int64_t		stopping;		/* NOMINATED: instances still stopping for it */
	FsNominationKind nomination_kind;	/* NOMINATED */
	FsTime		backoff_until;	/* BACKOFF */
	int64_t		blocked_by_job_id;	/* STRICT_FIFO */
	FsMisconfiguration misconfiguration;	/* MISCONFIGURED */
	FsStrategy	strategy;		/* SHARE_LIMIT: why the share cannot go further */
	int64_t		share_guarantee;	/* SHARE_LIMIT: the share's own limit */
	double		share_usage;	/* FAIR_SHARE: U after the pass */
	double		share_weight;	/* FAIR_SHARE: weight */
} FsWaitReason;

typedef struct FsPassStats
{
	int			considered;		/* loaded jobs looked at */
	int			placed;
	int			preempted;
	int			nominated;		/* new nominations */
	int			misconfigured;
} FsPassStats;

typedef struct FsResult
{
	int			n_decisions;
	FsDecision *decisions;		/* in the order they were taken */
	int			n_wait_reasons;
	FsWaitReason *wait_reasons; /* only with collect_wait_reasons */
	int			n_shares;
	double	   *share_usage;	/* [n_shares]: fair-share U to store, as of now */
	int64_t    *share_held;		/* [n_shares]: instances held after the pass */

	/*
	 * A share with more_runnable placed jobs in this pass, so jobs beyond its
	 * loaded prefix may fit too: run another pass (the wrapper loops while
	 * this is set and the pass placed something).
	 */
	bool		more_jobs_needed;

	/*
	 * The pass reached the input's decision_limit and stopped there: what
	 * it did not decide waits for the next pass.
	 */
	bool		decision_limit_reached;
	FsPassStats stats;
} FsResult;

/*
 * Does decision i of r count against FsInput.decision_limit?  A placement,
 * a preemption (one per victim), and the nomination of the job a reclaim
 * stopped victims for (it comes right after them): each writes a job row,
 * so a reclaim of k victims spends k + 1.  Other nominations (a reclaim
 * that waits without victims, a starving job, one made again on victims
 * still stopping) do not count: they come one per job that waits, and a
 * pass that counted them could spend a small budget on the same jobs'
 * nominations every time and never reach a reclaim behind them.
 */
static inline bool
fs_decision_counted(const FsResult *r, int i)
{
	FsDecisionKind kind = r->decisions[i].kind;

	return kind == FS_DECISION_PLACE || kind == FS_DECISION_PREEMPT ||
		(kind == FS_DECISION_NOMINATE && i > 0 && r->decisions[i - 1].kind == FS_DECISION_PREEMPT);
}

/* ---------- functions ---------- */

/*
 * One scheduling pass.  Its decisions come in the order they were made, a
 * reclaim's PREEMPTs together and right before its NOMINATE, so that any
 * prefix cut before a PLACE or a reclaim is a state the pass went through.
 * The wrapper applies them in order (a bounded pass such a prefix), stores
 * share_usage for fair shares, and while a share with more jobs placed or
 * nominated all that was loaded for it, runs another pass at the same
 * `now' with fresh heads (those passes are one pass to the user: nothing
 * placed by one is a victim of the next).  See src/scheduler/README.md.
 */
extern FsResult *fs_schedule(const FsInput *input, const FsAllocator *allocator);
extern void fs_result_free(FsResult *result, const FsAllocator *allocator);

/*
 * Checks the input's indexes and ranges; false with a message when
 * something is out of range (a wrapper bug: fs_schedule() skips such
 * entries rather than crash, but its decisions are then meaningless).
 */
extern bool fs_check_input(const FsInput *input, char *message, size_t size);

/*
 * What a pass on this input can decide nothing about but their nominated
 * jobs, so that the wrapper may leave their other RUNNABLE jobs out: the
 * pass decides the same without them, but that they are MISCONFIGURED,
 * which a pass with room says (the property tests check it on every pass).
 *
 * fs_queues_without_room: queues that cannot preempt (FIFO, fair share)
 * whose every environment is switched off or full to its NUM_INSTANCES
 * limit with the running jobs, at least one full; env_occupied is scratch of n_environments.
 * fs_shares_without_room: the shares of those queues, and of a full
 * quota-share queue the shares that cannot reclaim (they hold their
 * NUM_INSTANCES limit, and do not preempt within the share); scratch is of
 * n_environments + n_shares.  Both return how many they name.
 */
extern int	fs_queues_without_room(const FsInput *input, int64_t *env_occupied, bool *without_room);
extern int	fs_shares_without_room(const FsInput *input, int64_t *scratch, bool *without_room);

/*
 * Plain-English sentences.  Both write at most size bytes (always
 * NUL-terminated) and return the length the whole sentence needs, like
 * snprintf.  fs_format_decision() gives the status_reason of a placed job
 * (why it was placed), a PREEMPT victim, a nominated or a MISCONFIGURED
 * job.
 */
/*
 * The time of work a stop of this running job now would lose, per instance:
 * everything since started_at, less the training its checkpoints kept
 * (whole checkpoint intervals since checkpoint_from).  Times its
 * instance_count, the instance-time lost.
 */
extern FsTime fs_lost_work(const FsInput *input, const FsRunningJob *run);

extern size_t fs_format_wait_reason(const FsInput *input, const FsWaitReason *reason,
									char *buf, size_t size);
extern size_t fs_format_decision(const FsInput *input, const FsDecision *decision,
								 char *buf, size_t size);

/*
 * The order in which a queue's loaded RUNNABLE jobs would be placed if
 * capacity allowed, for queue_snapshot(): FIFO order; fair-share order with
 * each pick adding its instances to its share's usage; quota-share order
 * (nominated jobs, then jobs within their share's guarantee by priority,
 * then borrowing offers in idle_assignment order, then jobs their share
 * cannot hold now).  Misconfigured jobs come last.  Returns the number of
 * entries (at most max_jobs; <= 0 means all) in *order, allocated with the
 * allocator (free it with allocator->free when that is not NULL).
 */
typedef struct FsOrderEntry
{
	int64_t		job_id;
	int			share;
	int			job;			/* index into that share's runnable[] */
	int			position;		/* 1-based */
} FsOrderEntry;

extern int	fs_queue_order(const FsInput *input, int queue, int max_jobs,
						   const FsAllocator *allocator, FsOrderEntry **order);

/*
 * Fair-share helpers the wrapper may use when it resolves shares.
 *
 * fs_share_weight: the weight of `identifier' in a share_distribution: the
 * exact entry, else the entry ending in '*' whose prefix it starts with
 * (the longest, should several match), else 1.0.
 *
 * fs_share_entries_overlap: true (and *a, *b set) when two entries overlap,
 * e.g. 'team*' and 'team-a', or 'team*' and 'te*'.
 *
 * fs_decayed_usage: U <- U * 2^(-dt/H) + held_now * (1 - 2^(-dt/H)), with
 * dt = now - usage_at; H = 0 (or never stored) gives held_now.
 *
 * fs_fair_first_keys: for each share of a FAIR_SHARE queue, the key its
 * first RUNNABLE job enters the queue's turn with, (U + n) x weight: U
 * decayed to now towards the instances the share holds (its running jobs
 * in input->running), n the instances of that job (first_instances[s]; 1
 * when it is 0 or less).  The turn serves the lowest key first, so a
 * wrapper can load deeper heads for the shares it will serve first.  -1
 * for the shares of other queues.  held is scratch of n_shares.
 */
typedef struct FsWeightEntry
{
	const char *share_identifier;
	double		weight_factor;
} FsWeightEntry;

extern double fs_share_weight(const FsWeightEntry *entries, int n_entries,
							  const char *identifier);
extern bool fs_share_entries_overlap(const FsWeightEntry *entries, int n_entries,
									 int *a, int *b);
extern double fs_decayed_usage(double usage, FsTime usage_at, FsTime now,
							   FsTime half_life, int64_t held_now);
extern void fs_fair_first_keys(const FsInput *input, const int *first_instances,
							   int64_t *held, double *key);

#endif							/* FAIRSHARE_SCHEDULER_H */
