/*
 * day.h — drives the pure scheduling core through one simulated day of a
 * workload under one policy, with simulated time, and measures it.
 *
 * SageMaker as the simulator models it: a placed job holds its instances
 * from the pass that placed it; it trains after a startup delay (3-8 min,
 * workload_startup_delay()) for its run time and then frees them.  A
 * preempted job holds its instances for stop_delay more (the core counts
 * stopping jobs), loses the work of that attempt -- all of it, or for a job
 * with checkpoints (WorkloadJob.checkpoint_interval) all but the whole
 * intervals it trained by the stop request, which its next attempt need not
 * train again -- and goes back to RUNNABLE keeping its place in line, as the lifecycle
 * trigger does.  A pass (the SQL wrapper's loop of up to 8 core passes
 * while the core asks for more heads, 64 jobs loaded per share) runs at
 * every event -- a submission, a job finishing, a stop completing -- and
 * otherwise every poll_interval.
 *
 * Warm-up days run first (Workload.measured_day); the numbers are those of
 * the measured day: its jobs (waits, finishing) and its 24 hours
 * (utilisation, shares, preemptions).  The run goes on until every job of
 * every day has finished.
 *
 * Invariants are checked as it runs (see day.c); a broken one prints what
 * broke and exits with status 3, so no table is printed from a bad run.
 */
#ifndef FS_BENCH_DAY_H
#define FS_BENCH_DAY_H

#include <stdio.h>

#include "policies.h"
#include "workload.h"

/*
 * fairshare.preemption_min_runtime of the preemption before the least-lost
 * victim order (its default then): quota-latest keeps it, so that column
 * stays the old preemption whatever --min-runtime says
 * (--old-order-min-runtime changes it, to measure that order alone).
 */
#define OLD_ORDER_MIN_RUNTIME_SECONDS 300

typedef struct DayConfig
{
	int			capacity;		/* ml.p4d.24xlarge instances */
	FsTime		poll_interval;	/* fairshare.poll_interval */
	FsTime		stop_delay;		/* StopTrainingJob until Stopped */
	FsTime		min_runtime;	/* fairshare.preemption_min_runtime (not for
								 * quota-latest) */
	FsTime		old_order_min_runtime;	/* quota-latest's */
	FsTime		reclaim_wait;	/* fairshare.reclaim_wait (not for quota-latest) */
	bool		checkpoint_on_stop; /* a stopped job with checkpoints writes one
									 * more (fairshare.checkpoint_on_stop) */
	FsTime		starvation;		/* fairshare.starvation_seconds */
	FsTime		day_length;		/* 24 h: each day's submissions fall within one */
	FsTime		horizon;		/* every job must have finished this long after
								 * the measured day */
	int64_t		trace_job;		/* > 0: print every decision about this job */

	/*
	 * What the wrapper adds to a job's time limit for the longest it may hold
	 * its instances once placed (startup and stop); 0: jobs carry no time
	 * limit to the core, and nothing back-fills room held for starving jobs.
	 */
	FsTime		runtime_allowance;
} DayConfig;

/* Instance-time is counted in instance-microseconds, exactly. */
typedef int64_t InstanceTime;

typedef struct ClassResult
{
	/* about the jobs submitted on the measured day */
	int			submitted;
	int			finished;		/* by the end of the run (all, or it fails) */
	int			finished_in_day;	/* by 24:00 of the measured day */
	InstanceTime demand;		/* instances x run time submitted */
	int			n_waits;
	double	   *wait_minutes;	/* per job, sorted ascending */

	/* about the measured day's 24 hours, whichever day's jobs */
	InstanceTime held_day;		/* held */
	InstanceTime held_waiting;	/* held while a job waited */
	int			preemptions;	/* times one of its jobs was chosen as a victim */
	InstanceTime lost;			/* instance-time held by those attempts, less
								 * the training their checkpoints kept */
	int			stopped_for;	/* instances of any class stopped to make room
								 * for its jobs (the floor of lost work:
								 * docs/preemption.md) */
} ClassResult;

typedef struct DayResult
{
	const Policy *policy;
	uint64_t	seed;
	int			capacity;
	FsTime		day_length;
	ClassResult classes[N_CLASSES];

	/* within the measured day */
	FsTime		waiting_time;	/* time with at least one job waiting */
	InstanceTime held_waiting;	/* all classes, while a job waited */
	InstanceTime training_waiting;	/* of which training (not starting or stopping) */
	InstanceTime held_day;		/* all classes */

	/*
	 * Why capacity was idle while jobs waited, instance-time: room held for
	 * nominated jobs (preemption or starvation nominations: what their
	 * victims are not already freeing), room too small for every waiting
	 * job that is not nominated, and anything else (which would be a job
	 * beyond the loaded heads; the work-conservation check fails on the
	 * rest).  Together they are capacity x waiting_time - held_waiting.
	 */
	InstanceTime idle_nominated;
	InstanceTime idle_starvation;	/* of which for starvation nominations */
	InstanceTime idle_nominated_unwanted;	/* of which no waiting job that is
											 * not nominated would fit in the
											 * free room: idle without the hold too */
	InstanceTime idle_too_small;
	InstanceTime idle_other;
	FsTime		production_short;	/* a production job waited that would fit in
									 * what production holds and its quota-share
									 * guarantee (the yardstick for every policy) */
	int			reclaims;		/* preemptions of another share's job */
	int			in_share_preemptions;	/* of the same share's lower-priority job */
	FsTime		last_finish;	/* of the measured day's jobs, since its 00:00 */
	long		passes;			/* core passes run (fs_schedule calls) */
	long		checks;			/* invariant checks that held */
	long		conservation_checks;	/* passes the work-conservation check ran on */
} DayResult;

/*
 * Runs the day.  With `jobs' set, also writes one CSV line per job to it
 * (policy, job, class, instances, submitted, waited and placed minutes,
 * attempts, finished), for looking into a number.
 */
extern void simulate_day(const Workload *workload, const Policy *policy,
						 const DayConfig *config, DayResult *result, FILE *jobs);
extern void day_result_free(DayResult *result);

/* Nearest-rank percentile (0 < p <= 100) of a sorted array; 0 when empty. */
extern double percentile(const double *sorted, int n, double p);

#endif
