/*-------------------------------------------------------------------------
 *
 * internal.h
 *		State of one scheduling pass, shared by the files of the core.
 *
 * Not part of the API (scheduler.h is).  Like the rest of src/scheduler/,
 * it must never include a PostgreSQL header or hold global state: all of a
 * pass lives in one FsPass on the caller's stack and in memory from the
 * caller's allocator.
 *
 * Vocabulary (as in fairshare.c):
 *	 job		a RUNNABLE job loaded for this pass (FsJobState)
 *	 running	a job that occupies capacity (FsRunningJob)
 *	 pair		an (environment, instance type) a job may be placed on
 *	 unit		a capacity unit: index 0 is NUM_INSTANCES, index t+1 type t
 *	 occupied	instances of running jobs (stopping ones too) and of this
 *				pass's placements
 *	 held		instances held for nominated jobs (nominees)
 *	 nominee	a job that capacity is held for
 *	 victim		a running job stopped to make room for a nominee
 *
 *-------------------------------------------------------------------------
 */
#ifndef FAIRSHARE_SCHEDULER_INTERNAL_H
#define FAIRSHARE_SCHEDULER_INTERNAL_H

#include "scheduler.h"

#define FS_UNIT_INDEX(unit)		((unit) + 1)	/* NUM_INSTANCES -> 0 */
#define FS_NO_LIMIT				(-1)
#define FS_UNLIMITED			INT64_MAX

/* ---------- memory: an arena on top of the caller's allocator ---------- */

typedef struct FsArenaChunk FsArenaChunk;

typedef struct FsArena
{
	const FsAllocator *allocator;
	FsArenaChunk *chunks;
} FsArena;

extern void fs_arena_init(FsArena *arena, const FsAllocator *allocator);
extern void *fs_arena_alloc(FsArena *arena, size_t size);	/* zeroed */
extern void fs_arena_release(FsArena *arena);
extern void *fs_alloc_zero(const FsAllocator *allocator, size_t size);

/* ---------- small algorithms (util.c): no qsort in our headers ---------- */

typedef int (*FsCompare) (const void *a, const void *b, const void *ctx);

extern void fs_sort(void *base, int n, size_t size, FsCompare cmp,
					const void *ctx, FsArena *arena);

/* A binary min-heap of ints ordered by a caller's "a goes before b". */
typedef bool (*FsBefore) (const void *ctx, int a, int b);

typedef struct FsHeap
{
	int		   *items;
	int			n;
	FsBefore	before;
	const void *ctx;
} FsHeap;

extern void fs_heap_init(FsHeap *heap, int capacity, FsBefore before,
						 const void *ctx, FsArena *arena);
extern void fs_heap_push(FsHeap *heap, int item);
extern int	fs_heap_pop(FsHeap *heap);
extern void fs_heap_sift_top(FsHeap *heap);

/* ---------- the pass ---------- */

typedef enum FsJobStatus
{
	FS_JOB_WAITING,
	FS_JOB_PLACED,
	FS_JOB_NOMINATED,
	FS_JOB_MISCONFIGURED
} FsJobStatus;

/* Why an attempt to place a job on a pair failed (best one kept). */
typedef struct FsFit
{
	FsWaitKind	kind;
	int			rank;			/* lower = tells the user more; see capacity.c */
	int			environment;
	int			instance_type;
	int			unit;
	bool		share_level;
	int64_t		limit;
	int64_t		in_use;
	int64_t		held;
	int64_t		reserved;
	int64_t		held_for_job_id;
	FsTime		backoff_until;
} FsFit;

typedef struct FsJobState
{
	const FsRunnableJob *job;
	int			share;
	int			position;		/* 1-based, in share order */
	int			nominee;		/* index into pass->nominees, or -1 */
	int			wait;			/* index into result->wait_reasons, or -1 */
	FsJobStatus status;
	FsMisconfiguration misconfiguration;
	bool		misconfiguration_known;
	bool		considered;
	bool		tried_guaranteed;	/* quota step 2 tried it within its guarantee */
	bool		reclaim_now;	/* its reclaim waited out reclaim_wait: no more waiting */
	int			placed_env;		/* where this pass placed it (status PLACED) */
	int			placed_type;
	bool		could_fit_known;
	uint64_t	could_fit;		/* bit e * n_types + t: pair (e, t) could ever fit */
} FsJobState;

typedef struct FsShareState
{
	int			first_job;		/* slice of pass->jobs, in share order */
	int			n_jobs;
	int			cursor;			/* next job a queue turn looks at */
	int			head;			/* first job not placed or misconfigured */
	int64_t		held_instances; /* running (incl. stopping) + placed */
	int64_t		running_jobs;
	double		usage;			/* fair share: decayed U + placements */
	bool		restricted;		/* fair share: may not use the compute reservation */
	int			placed;

	/* quota shares only, [n_units] each; limit FS_NO_LIMIT when it has none */
	int64_t    *limit;
	int64_t    *held;			/* non-stopping running + placed */
	int64_t    *stopping;
	int64_t    *nominated;		/* instances of its nominees */
	int64_t    *stopped_now;	/* victims chosen in this pass (also in stopping) */
	int64_t    *unused_kept;	/* RESERVE: its unused limits at the start of the
								 * round, less what its own placements used since */
	int		   *running;		/* indexes of its running jobs (in-share victims) */
	int			n_running;
	bool		listed_over;	/* in its queue's over list (fs_quota_shares_over) */

	/*
	 * Victim candidates: instances of its running jobs that are not
	 * stopping and started before now, [environment position in its queue
	 * x (instance type, or n_instance_types for none)]; NULL until a
	 * reclaim search asks (preemption.c), then kept as victims are taken.
	 */
	int64_t    *candidate_instances;

	/*
	 * Victim searches that failed: [environment position in its queue x
	 * instance type], the smallest instance count no victims could make room
	 * for (0: none failed).  Within one step candidates only dwindle and room
	 * only shrinks, so a bigger job of the share fails there too.
	 */
	int		   *search_failed;
} FsShareState;

typedef struct FsQueueState
{
	int		   *shares;			/* its shares, in input order */
	int			n_shares;
	int		   *running;		/* indexes of running jobs of its shares */
	int			n_running;
	int64_t    *reserve_unused; /* quota: [n_units] unused limits of RESERVE shares */
	int64_t    *reserve_kept;	/* ... kept for this round: their unused_kept summed
								 * (capacity.c: fs_keep_reserve, quota_place) */
	int64_t    *fair_reserved;	/* fair share: [n_environments of FsInput] */
	int		   *over;			/* quota: shares that may hold more than their
								 * limit, NULL until a reclaim asks */
	int			n_over;
	int			starver;		/* nominee of its starvation nomination, or -1 */
	int			first_starving; /* first failed head past starvation_wait, or -1 */
	int64_t		placed_before_starving; /* placements in its environments then */
} FsQueueState;

typedef struct FsNominee
{
	int			job;			/* index into pass->jobs */
	FsNominationKind kind;
	int			environment;
	int			instance_type;
	int			count;
	FsTime		since;
	bool		active;			/* false once placed or dropped */
	bool		hold_applied;
	int64_t		stopping_num;	/* its victims still stopping, in the environment */
	int64_t		stopping_type;	/* ... of its instance type */
	int64_t		hold_num;		/* what it holds of the NUM_INSTANCES unit */
	int64_t		hold_type;		/* ... and of its instance type */

	/*
	 * A starvation nominee holding room: its room is complete by then at the
	 * latest, counting only jobs whose end is known (0: not known).
	 * A job certain to be gone by then may use the held room (back-fill).
	 */
	FsTime		complete_by;

	/*
	 * ... and what the jobs known to be gone by complete_by free, per unit:
	 * of the room it holds now, all but count - released is not needed then,
	 * and a job of any length may use that much (capacity.c: spare_of_hold).
	 */
	int64_t		released_num;
	int64_t		released_type;
} FsNominee;

typedef struct FsPass
{
	const FsInput *in;
	const FsAllocator *allocator;
	FsArena		arena;
	int			n_units;

	/* environments: [e * n_units + unit index] */
	int64_t    *env_max;		/* FS_NO_LIMIT when no limit of that unit */
	int64_t    *env_occupied;
	int64_t    *env_held;
	int64_t    *env_held_starving;	/* ... of it, for starvation nominees */
	int64_t    *env_total;		/* [e]: instances in total (compute reservation) */
	int64_t    *env_placements; /* [e]: placements made there in this pass */

	FsShareState *shares;
	FsQueueState *queues;
	int		   *queue_order;	/* priority descending, then name */

	FsJobState *jobs;
	int			n_jobs;

	FsNominee  *nominees;
	int			n_nominees;
	int			max_nominees;

	bool	   *run_stopping;	/* [n_running]: stopping, or chosen as a victim now */

	/*
	 * Scratch of the victim search under way, [n_running] each, allocated
	 * at the first one: the candidates, the over-limit ratio of each
	 * candidate's share, the victims chosen; and [n_shares + 1], the
	 * candidates' runs of one share each (preemption.c).
	 */
	int		   *search_pool;
	double	   *search_ratio;
	int		   *search_chosen;
	struct FsPoolRun *search_runs;

	FsResult   *result;
	int			max_decisions;
	int			max_wait_reasons;

	/*
	 * Set when a share placed its whole loaded prefix and its next, unloaded
	 * job would be considered now: nothing after it in the pass may take
	 * capacity, so the pass ends here and asks for another (more_jobs_needed).
	 */
	bool		prefix_used_up;

	/*
	 * Jobs placed or preempted so far, and those reclaimed for
	 * (fs_decision_counted()), and whether that reached the input's
	 * decision_limit: then every step stops before its next job (a reclaim
	 * already begun is finished, its nomination included), and so does the
	 * pass.
	 */
	int			decided_jobs;
	bool		budget_spent;

	/*
	 * Times a RESERVE share's unused room shrank while the room kept for the
	 * round still counts it: room for others may grow in the next round.
	 */
	int64_t		reserve_shrunk;
} FsPass;

/* How an attempt to place a job is bound (capacity.c). */
typedef enum FsQuotaRight
{
	FS_RIGHT_NONE,				/* not a quota share */
	FS_RIGHT_GUARANTEE,			/* within the share's own limit */
	FS_RIGHT_MOST				/* the most the share may hold (borrowing included) */
} FsQuotaRight;

typedef struct FsRules
{
	FsQuotaRight right;
	bool		respect_reserve;	/* quota: keep RESERVE shares' unused room */
	bool		respect_compute_reservation;	/* fair share: restricted share */
	int			own_nominee;	/* whose hold and nomination do not count, or -1 */

	/*
	 * A victim search: the job will be a preemption nominee, placed before
	 * any starvation hold applies (step 1 of every pass), so starvation
	 * holds claim none of the room its victims free -- only room that is
	 * free already (capacity.c: raw_room).
	 */
	bool		before_starvation_holds;

	/*
	 * A placement (set by fs_pair_fits, except for a victim search): it may
	 * use room held for starvation nominees that they will not need --
	 * all of it when the job is certain to be gone by gone_by (0: not
	 * known) and their room is complete only later, else what jobs ending
	 * before their room is complete will give back (capacity.c: raw_room).
	 */
	bool		backfill;
	FsTime		gone_by;
} FsRules;

/*
 * share_order.c: the order of a share's jobs, and the loaded jobs of a queue
 * as one list in share order
 */
extern void fs_sort_share_jobs(FsPass *pass, FsJobState *jobs, int n,
							   FsPolicyKind policy);

/* Where a share's next job stands in a merge (share_order.c: merge_before). */
typedef struct FsMergeKey
{
	int64_t		job_id;
	FsTime		runnable_at;
	int			priority;		/* 0 in FIFO queues, which ignore it */
	bool		unloaded;		/* past its prefix: stands for its next job */
} FsMergeKey;

typedef struct FsMerge
{
	FsPass	   *pass;
	int			queue;
	FsPolicyKind policy;
	int		   *cursor;			/* per share of the queue: next job */
	FsMergeKey *key;			/* per share of the queue: its cursor's key */
	FsHeap		heap;
} FsMerge;

#define FS_MERGE_END		(-1)
#define FS_MERGE_UNLOADED	(-2)	/* a share's next job is beyond its prefix */

extern void fs_merge_init(FsMerge *m, FsPass *pass, int queue);
extern int	fs_merge_next(FsMerge *m, int *share);
extern int	fs_merge_next_loaded(FsMerge *m, int *share);
extern bool fs_prefix_used_up(FsPass *pass, int share);

/*
 * Whether the pass stops before its next job: a share's loaded head ran
 * out (prefix_used_up) or the pass's budget is spent (budget_spent).
 */
static inline bool
fs_pass_halted(const FsPass *pass)
{
	return pass->prefix_used_up || pass->budget_spent;
}

/* pass.c */
extern void fs_pass_begin(FsPass *pass, const FsInput *in, const FsAllocator *allocator);
extern void fs_pass_abandon(FsPass *pass);

/* result.c */
extern FsDecision *fs_add_decision(FsPass *pass, FsDecisionKind kind, int job);
extern void fs_note_wait(FsPass *pass, int job, const FsFit *fit);
extern void fs_note_nominated(FsPass *pass, int job);
extern void fs_note_misconfigured(FsPass *pass, int job, FsMisconfiguration why,
								  int64_t largest);

/* nomination.c */
extern int	fs_add_nominee(FsPass *pass, int job, FsNominationKind kind,
						   int environment, int instance_type, FsTime since);
extern void fs_take_nominations(FsPass *pass);
extern void fs_place_nominated_jobs(FsPass *pass);
extern void fs_serve_starver(FsPass *pass, int queue, const FsRules *rules);
extern bool fs_job_is_head(FsPass *pass, int job);
extern void fs_note_starving(FsPass *pass, int queue, int job, const FsFit *fit);
extern bool fs_place_or_wait(FsPass *pass, int queue, int job, const FsRules *rules);
extern void fs_nominate_starving_job(FsPass *pass, int queue);
extern void fs_starver_complete_by(FsPass *pass, int nominee);

/*
 * One environment unit's entry of a pass array ([e * n_units + unit index]:
 * env_max, env_occupied, env_held, env_held_starving).  Inline here, below
 * every file that reads those arrays, so that result.c need not call into
 * capacity.c.
 */
static inline int64_t *
fs_env_unit(FsPass *pass, int64_t *array, int env, int unit_index)
{
	return &array[(size_t) env * pass->n_units + unit_index];
}

/* capacity.c */
extern bool fs_pair_usable(FsPass *pass, int job, int env, int type, FsFit *fit);
extern bool fs_pair_static_fit(FsPass *pass, int share, int env, int type,
							   int count, FsMisconfiguration *why, int64_t *largest);
extern bool fs_job_could_fit(FsPass *pass, int job, int e, int t);
extern bool fs_pair_open(FsPass *pass, int job, int e, int t, int *env, int *type);
extern bool fs_job_misconfigured(FsPass *pass, int job);
extern bool fs_pair_fits(FsPass *pass, int job, int env, int type,
						 const FsRules *rules, FsFit *fit);
extern bool fs_try_place(FsPass *pass, int job, const FsRules *rules, FsFit *fit);
extern void fs_place(FsPass *pass, int job, int env, int type);
extern int64_t fs_env_room(FsPass *pass, int env, int unit_index, int share,
						   const FsRules *rules);
extern void fs_hold(FsPass *pass, int nominee);
extern void fs_hold_uncovered(FsPass *pass, int nominee);
extern void fs_unhold(FsPass *pass, int nominee);
extern void fs_quota_add(FsPass *pass, int share, int type, int64_t held,
						 int64_t stopping, int64_t nominated);
extern void fs_keep_reserve(FsPass *pass, int queue);
extern int64_t fs_quota_cap(FsPass *pass, int share, int unit_index, FsQuotaRight right);
extern int64_t fs_quota_room(FsPass *pass, int share, int type, FsQuotaRight right,
							 int own_nominee, int *unit);
extern bool fs_quota_guaranteed(FsPass *pass, int share, int type, int count);
extern bool fs_quota_over_limit(const FsPass *pass, int share);
extern const int *fs_quota_shares_over(FsPass *pass, int queue, int *n);
extern int64_t fs_quota_borrowed(FsPass *pass, int share);
extern void fs_init_rules(FsRules *rules);

/*
 * Instances each share holds in the input's running jobs (in an
 * environment, at least one instance), with or without those being
 * stopped; held is of n_shares.  For the helpers the wrapper calls before
 * a pass, which have no FsPass.
 */
extern void fs_input_held(const FsInput *input, bool count_stopping, int64_t *held);

/*
 * Which of two shares of a queue takes its turn first (a and b index the
 * queue's shares; each share's cursor is at the job it offers): the lower
 * key first when key is given, then the job runnable first, then the
 * lower job id, then the lower index.  The pass (fair_share.c,
 * quota_share.c) and the snapshot (order.c) both order by it, so that
 * queue_snapshot() lists jobs in the order a pass takes them.
 */
static inline bool
fs_share_turn_before(const FsPass *pass, int queue, const double *key, int a, int b)
{
	const FsQueueState *qs = &pass->queues[queue];
	const FsRunnableJob *ja;
	const FsRunnableJob *jb;

	if (key != NULL && key[a] != key[b])
		return key[a] < key[b];
	ja = pass->jobs[pass->shares[qs->shares[a]].cursor].job;
	jb = pass->jobs[pass->shares[qs->shares[b]].cursor].job;
	if (ja->runnable_at != jb->runnable_at)
		return ja->runnable_at < jb->runnable_at;
	if (ja->job_id != jb->job_id)
		return ja->job_id < jb->job_id;
	return a < b;
}

/* fifo.c, fair_share.c, quota_share.c: one queue's turn */
extern void fs_fifo_turn(FsPass *pass, int queue);
extern void fs_fair_share_turn(FsPass *pass, int queue);
extern void fs_quota_share_turn(FsPass *pass, int queue);

/* preemption.c */
extern bool fs_reclaim(FsPass *pass, int job);
extern bool fs_preempt_in_share(FsPass *pass, int job);
extern void fs_forget_failed_searches(FsPass *pass, int queue);

#endif							/* FAIRSHARE_SCHEDULER_INTERNAL_H */
