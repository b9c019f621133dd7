/*
 * workload.h — one seeded day of the reference workload for bench/simulate.
 *
 * The reference user (docs/concepts.md, 'What fairshare is') runs hundreds of GPU
 * instances for three kinds of work: production training that must get its
 * guaranteed capacity promptly, exploration that soaks up what is idle,
 * and hyperparameter sweeps that run last.  workload_generate() draws one
 * day of their submissions from a seed (after warm-up days, drawn the same
 * way, that fill the cluster as a real previous day would); the same seed
 * always gives the
 * same jobs, so every policy is driven through exactly the same day.  The
 * model (rates, sizes, durations) is documented in docs/benchmarks.md,
 * "Simulated day", and at the top of workload.c.
 */
#ifndef FS_BENCH_WORKLOAD_H
#define FS_BENCH_WORKLOAD_H

#include <stdint.h>

#include "scheduler/scheduler.h"

typedef enum JobClass
{
	CLASS_PRODUCTION,
	CLASS_EXPLORATION,
	CLASS_SWEEPS,
	N_CLASSES
} JobClass;

extern const char *const class_names[N_CLASSES];

/* One submission. */
typedef struct WorkloadJob
{
	JobClass	job_class;
	FsTime		submit_at;		/* since 00:00 of the first day */
	int			day;			/* 0-based; the last one is the measured day */
	int			instances;		/* ml.p4d.24xlarge instances, 1..32 */
	FsTime		run_time;		/* training time once started (after startup) */
	FsTime		time_limit;		/* StoppingCondition.MaxRuntimeInSeconds */
	int			priority;		/* scheduling_priority */
	int			sweep;			/* which sweep it belongs to, -1 for none */
	FsTime		checkpoint_interval;	/* CheckpointConfig: saves its training
										 * this often; 0 = none */
} WorkloadJob;

typedef struct Workload
{
	uint64_t	seed;
	int			measured_day;	/* = the number of warm-up days before it */
	int			n_jobs;
	WorkloadJob *jobs;			/* in submission order */
	int			n_sweeps;
} Workload;

/*
 * Draws `warmup_days' days and then the measured day for `seed' (malloc'd;
 * free with workload_free).  Warm-up days are drawn the same way; they are
 * there so that the measured day starts, like a real one, with what the
 * previous evening left queued and running.
 */
extern void workload_generate(Workload *workload, uint64_t seed, int warmup_days);

/*
 * Gives `percent' of the exploration and sweep jobs (chosen per job by a
 * hash of the seed and the job, not from the day's draws, so the jobs stay
 * the same) a CheckpointConfig that saves every `interval'.  Production
 * keeps none: the model's point is the borrowers that reclaim stops.
 */
extern void workload_checkpoints(Workload *workload, int percent, FsTime interval);
extern void workload_free(Workload *workload);

/*
 * SageMaker's startup time for one attempt of a job (provisioning the
 * instances, pulling the image), 3 to 8 minutes.  A pure function of the
 * seed, the job and the attempt number, so that every policy meets the same
 * delays for the same attempt however its passes interleave.
 */
extern FsTime workload_startup_delay(uint64_t seed, int job, int attempt);

#endif
