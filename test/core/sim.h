/*
 * sim.h — a tiny world for driving the scheduling core in tests.
 *
 * The world holds environments, queues, shares and jobs the way the
 * catalog would; sim_pass() builds an FsInput from it, runs fs_schedule()
 * and applies the decisions the way the SQL wrapper and the dispatcher
 * would (PLACE -> running, PREEMPT -> stopping, nominations stored with the
 * job, usage stored with the share).  sim_advance() moves time: running
 * jobs finish after their duration, stops finish after stop_delay and the
 * job goes back to RUNNABLE.  Test code only: uses malloc freely.  Also
 * used by bench/simulate, which drives it through a simulated day.
 */
#ifndef FS_TEST_SIM_H
#define FS_TEST_SIM_H

#include "scheduler/scheduler.h"

#define SIM_MAX_TYPES	8
#define SIM_MAX_ENVS	8
#define SIM_MAX_QUEUES	8
#define SIM_MAX_SHARES	64
#define SIM_MAX_LIMITS	(SIM_MAX_TYPES + 1)
#define SIM_FOREVER		((FsTime) -1)

typedef struct SimEnv
{
	char		name[32];
	bool		enabled;
	FsLimit		limits[SIM_MAX_LIMITS];
	int			n_limits;
} SimEnv;

typedef struct SimQueue
{
	char		name[32];
	int			priority;
	FsPolicyKind policy;
	bool		strict_fifo;
	int			envs[SIM_MAX_ENVS];
	int			n_envs;
	FsTime		share_decay;
	int			compute_reservation;
	FsIdleAssignment idle_assignment;
} SimQueue;

typedef struct SimShare
{
	char		name[32];
	int			queue;
	double		weight;
	double		usage;
	FsTime		usage_at;
	FsLimit		limits[SIM_MAX_LIMITS];
	int			n_limits;
	FsStrategy	strategy;
	int			borrow_limit;
	bool		in_share_preemption;
} SimShare;

typedef enum SimJobState
{
	SIM_RUNNABLE,
	SIM_RUNNING,
	SIM_STOPPING,
	SIM_DONE
} SimJobState;

typedef struct SimJob
{
	int64_t		id;
	int			share;
	int			priority;
	FsTime		runnable_at;
	int			count;
	int			types[4];
	int			n_types;
	FsBackoff	backoffs[4];
	int			n_backoffs;
	FsNomination nomination;
	SimJobState state;
	int			env;
	int			type;
	FsTime		started_at;
	FsTime		duration;		/* SIM_FOREVER: runs until stopped */
	FsTime		max_occupancy;	/* the most it may hold once placed; 0 = unknown */
	FsTime		checkpoint_interval;	/* 0: keeps no checkpoints */
	FsTime		checkpoint_from;	/* when this attempt began training; 0: not yet */
	FsTime		stop_at;
	int64_t		stopping_for;
	int			preemptions;
	int			placements;
	bool		misconfigured;	/* last pass said so */
	bool		loaded;			/* was in the last pass's input */
	bool		placed_last_pass;
	bool		stopped_last_pass;	/* chosen as a victim by the last pass */
	bool		was_nominated;	/* had a nomination at the start of the last pass */
} SimJob;

typedef struct Sim
{
	FsTime		now;
	FsTime		min_runtime;
	FsTime		reclaim_wait;	/* FsInput.reclaim_wait (0 unless set) */
	bool		checkpoint_on_stop; /* FsInput.checkpoint_on_stop */
	FsTime		starvation;
	FsTime		stop_delay;
	int			prefix;			/* jobs loaded per share; 0 = all */
	bool		first_only_odd; /* with a prefix, odd shares get their first job only */

	/*
	 * A stopped job goes back to RUNNABLE keeping its runnable_at, as the
	 * lifecycle trigger does (it sets runnable_at the first time only).
	 * Off by default: the core's tests were written with a requeued job
	 * starting again at the back of its share.
	 */
	bool		requeue_keeps_place;
	bool		wait_reasons;
	FsVictimOrder victim_order; /* FsInput.victim_order */

	int			n_types;
	char		type_names[SIM_MAX_TYPES][32];
	const char *type_ptrs[SIM_MAX_TYPES];
	SimEnv		envs[SIM_MAX_ENVS];
	int			n_envs;
	SimQueue	queues[SIM_MAX_QUEUES];
	int			n_queues;
	SimShare	shares[SIM_MAX_SHARES];
	int			n_shares;
	SimJob	   *jobs;
	int			n_jobs;
	int			max_jobs;

	/* the last pass */
	FsInput		input;
	FsResult   *result;
	void	   *storage[8];		/* arrays behind input, kept between passes */
	size_t		storage_size[8];	/* their sizes in bytes */

	/* allocator accounting */
	FsAllocator allocator;
	long		allocs;
	long		frees;

	/*
	 * When above 0, every pass is run a second time with this
	 * decision_limit and compared with the unbounded pass
	 * (sim_compare_bounded): bounded_mismatches counts the passes where
	 * the bounded one decided otherwise or stopped too early.
	 */
	int			bounded_check;
	int			bounded_passes;
	int			bounded_mismatches;
} Sim;

extern void sim_init(Sim *sim);
extern void sim_compare_bounded(Sim *sim, const FsResult *full);
extern void sim_free(Sim *sim);
extern int	sim_type(Sim *sim, const char *name);
extern int	sim_env(Sim *sim, const char *name);
extern void sim_env_limit(Sim *sim, int env, int unit, int64_t max);
extern int	sim_queue(Sim *sim, const char *name, int priority, FsPolicyKind policy);
extern void sim_queue_env(Sim *sim, int queue, int env);
extern int	sim_share(Sim *sim, int queue, const char *name);
extern void sim_share_limit(Sim *sim, int share, int unit, int64_t max);
extern int	sim_submit(Sim *sim, int share, int count, int priority, int type);
extern void sim_job_type(Sim *sim, int job, int type);
extern int	sim_run(Sim *sim, int share, int env, int type, int count, int priority);
extern SimJob *sim_job(Sim *sim, int64_t job_id);

extern FsResult *sim_pass(Sim *sim);
extern void sim_advance(Sim *sim, FsTime dt);
extern void sim_finish_stops(Sim *sim);
extern void sim_finish(Sim *sim, int job);
extern int	sim_passes_until_quiet(Sim *sim, int max_passes);

extern int64_t sim_held(Sim *sim, int share);	/* running + stopping instances */
extern int64_t sim_env_used(Sim *sim, int env, int unit);
extern int	sim_count(Sim *sim, FsDecisionKind kind);
extern const FsDecision *sim_decision(Sim *sim, FsDecisionKind kind, int64_t job_id);
extern const FsWaitReason *sim_wait(Sim *sim, int64_t job_id);
extern const char *sim_wait_text(Sim *sim, int64_t job_id);

#endif
