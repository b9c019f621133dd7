/*
 * workload.c — draws seeded days of the reference workload.
 *
 * The model, per class and day (times of day in hours, 0 = midnight):
 *
 *   production   16 jobs, one at a time, arriving with the working-day
 *                profile below; 8 (35%), 16 (40%) or 32 (25%) instances;
 *                training time log-normal with median 90 min (sigma 0.6);
 *                scheduling_priority 90, a quarter of them urgent (95).
 *                Sized so that production mostly fits its quota-share
 *                guarantee of 64 instances, as a team would size it.
 *   exploration  60 sessions with the working-day profile, each a burst of
 *                1-5 jobs a researcher submits within a few minutes;
 *                1 (25%), 2 (20%), 4 (25%), 8 (20%) or 16 (10%) instances;
 *                log-normal median 1 h (sigma 0.9); priority 50.
 *   sweeps       10 sweeps launched between 11:00 and 21:00 (after the
 *                day's exploration results), each 20-60 trials submitted
 *                within a minute; one size per sweep, 1 (50%), 2 (30%) or
 *                4 (20%); per sweep a median drawn log-normal around 40 min
 *                (sigma 0.4), per trial log-normal around it (sigma 0.3);
 *                priority 10.
 *
 * Checkpoints (workload_checkpoints(), bench/simulate's --checkpoints): by
 * default half of the exploration and sweep jobs set CheckpointConfig and
 * save their training every 30 minutes; production sets none.
 *
 * Every training time is clipped to 5 min .. 24 h.  The working-day
 * profile is the relative submission rate: 0.1 at night, rising from
 * 07:00 to 1.0 at 09:00, flat until 18:00, falling to 0.1 at 22:00.
 * About 2,500 instance-hours a day are submitted, 80% of what 128
 * instances give in 24 h, most of it between 09:00 and 18:00: a backlog
 * builds during the day and drains at night.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "workload.h"

const char *const class_names[N_CLASSES] = {"production", "exploration", "sweeps"};

#define N_PRODUCTION			16
#define N_EXPLORATION_SESSIONS	60
#define N_SWEEPS				10
#define HOUR					FS_SECONDS(3600)
#define MINUTE					FS_SECONDS(60)
#define PI						3.14159265358979323846

/* A seeded generator (xorshift64*), one per draw of a workload. */
typedef struct Rng
{
	uint64_t	state;
} Rng;

/* splitmix64: spreads a seed so that neighbouring seeds give unrelated streams. */
static uint64_t
mix(uint64_t x)
{
	x += UINT64_C(0x9E3779B97F4A7C15);
	x = (x ^ (x >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	x = (x ^ (x >> 27)) * UINT64_C(0x94D049BB133111EB);
	return x ^ (x >> 31);
}

static uint64_t
next(Rng *rng)
{
	rng->state ^= rng->state >> 12;
	rng->state ^= rng->state << 25;
	rng->state ^= rng->state >> 27;
	return rng->state * UINT64_C(2685821657736338717);
}

/* Uniform in [0, 1). */
static double
uniform(Rng *rng)
{
	return (double) (next(rng) >> 11) / 9007199254740992.0;
}

static int
uniform_int(Rng *rng, int lo, int hi)
{
	return lo + (int) (uniform(rng) * (hi - lo + 1));
}

/* Log-normal with the given median and sigma (Box-Muller). */
static double
log_normal(Rng *rng, double median, double sigma)
{
	double		u1 = 1.0 - uniform(rng);	/* (0, 1]: log() stays finite */
	double		u2 = uniform(rng);
	double		normal = sqrt(-2.0 * log(u1)) * cos(2.0 * PI * u2);

	return median * exp(sigma * normal);
}

/* Picks an index by percentages that add up to 100. */
static int
pick(Rng *rng, const int *percent, int n)
{
	int			roll = uniform_int(rng, 0, 99);
	int			i;

	for (i = 0; i < n - 1; i++)
	{
		if (roll < percent[i])
			return i;
		roll -= percent[i];
	}
	return n - 1;
}

/* Relative submission rate at an hour of the day (see the top of the file). */
static double
working_day_rate(double hour)
{
	if (hour < 7)
		return 0.1;
	if (hour < 9)
		return 0.1 + 0.9 * (hour - 7) / 2;
	if (hour < 18)
		return 1.0;
	if (hour < 22)
		return 1.0 - 0.9 * (hour - 18) / 4;
	return 0.1;
}

/* A time of day drawn from the working-day profile (rejection sampling). */
static FsTime
working_day_time(Rng *rng)
{
	for (;;)
	{
		double		hour = 24.0 * uniform(rng);

		if (uniform(rng) < working_day_rate(hour))
			return (FsTime) (hour * (double) HOUR);
	}
}

static FsTime
clip_run_time(double minutes)
{
	if (minutes < 5)
		minutes = 5;
	if (minutes > 24 * 60)
		minutes = 24 * 60;
	return (FsTime) (minutes * (double) MINUTE);
}

/*
 * The time limit a submitter would set (MaxRuntimeInSeconds): half as long
 * again as the training takes, rounded up to 10 minutes -- a user who knows
 * roughly how long the job runs and leaves room for a slow day.  Computed,
 * not drawn, so a seed's day is the same with or without time limits.
 */
static FsTime
time_limit_for(FsTime run_time)
{
	FsTime		ten = 10 * MINUTE;
	FsTime		limit = run_time + run_time / 2;

	return (limit + ten - 1) / ten * ten;
}

static WorkloadJob *
add_job(Workload *w, int *capacity, int day)
{
	if (w->n_jobs == *capacity)
	{
		*capacity = *capacity * 2 + 64;
		w->jobs = realloc(w->jobs, sizeof(WorkloadJob) * (size_t) *capacity);
		if (w->jobs == NULL)
			abort();
	}
	memset(&w->jobs[w->n_jobs], 0, sizeof(WorkloadJob));
	w->jobs[w->n_jobs].sweep = -1;
	w->jobs[w->n_jobs].day = day;
	return &w->jobs[w->n_jobs++];
}

/*
 * Sorts by submission time, keeping the drawing order for equal times
 * (insertion sort: stable, and a day has only a few hundred jobs).
 */
static void
sort_by_submit_time(Workload *w)
{
	int			i,
				k;

	for (i = 1; i < w->n_jobs; i++)
	{
		WorkloadJob job = w->jobs[i];

		for (k = i; k > 0 && w->jobs[k - 1].submit_at > job.submit_at; k--)
			w->jobs[k] = w->jobs[k - 1];
		w->jobs[k] = job;
	}
}

/* Draws one day's submissions, `day' days after the start, from `rng'. */
static void
generate_day(Workload *w, int *capacity, Rng *rng, int day)
{
	static const int production_sizes[] = {8, 16, 32};
	static const int production_mix[] = {35, 40, 25};
	static const int exploration_sizes[] = {1, 2, 4, 8, 16};
	static const int exploration_mix[] = {25, 20, 25, 20, 10};
	static const int sweep_sizes[] = {1, 2, 4};
	static const int sweep_mix[] = {50, 30, 20};
	FsTime		midnight = (FsTime) day * 24 * HOUR;
	int			i,
				k;

	for (i = 0; i < N_PRODUCTION; i++)
	{
		WorkloadJob *j = add_job(w, capacity, day);

		j->job_class = CLASS_PRODUCTION;
		j->submit_at = midnight + working_day_time(rng);
		j->instances = production_sizes[pick(rng, production_mix, 3)];
		j->run_time = clip_run_time(log_normal(rng, 90, 0.6));
		j->time_limit = time_limit_for(j->run_time);
		j->priority = uniform_int(rng, 0, 3) == 0 ? 95 : 90;
	}
	for (i = 0; i < N_EXPLORATION_SESSIONS; i++)
	{
		FsTime		at = midnight + working_day_time(rng);
		int			n = uniform_int(rng, 1, 5);

		for (k = 0; k < n; k++)
		{
			WorkloadJob *j = add_job(w, capacity, day);

			j->job_class = CLASS_EXPLORATION;
			j->submit_at = at;
			j->instances = exploration_sizes[pick(rng, exploration_mix, 5)];
			j->run_time = clip_run_time(log_normal(rng, 60, 0.9));
			j->time_limit = time_limit_for(j->run_time);
			j->priority = 50;
			at += FS_SECONDS(uniform_int(rng, 10, 180));
		}
	}
	for (i = 0; i < N_SWEEPS; i++)
	{
		FsTime		at = midnight + (FsTime) ((11.0 + 10.0 * uniform(rng)) * (double) HOUR);
		int			trials = uniform_int(rng, 20, 60);
		int			size = sweep_sizes[pick(rng, sweep_mix, 3)];
		double		median = log_normal(rng, 40, 0.4);

		for (k = 0; k < trials; k++)
		{
			WorkloadJob *j = add_job(w, capacity, day);

			j->job_class = CLASS_SWEEPS;
			j->submit_at = at;
			j->instances = size;
			j->run_time = clip_run_time(log_normal(rng, median, 0.3));
			j->time_limit = time_limit_for(j->run_time);
			j->priority = 10;
			j->sweep = w->n_sweeps;
			at += FS_SECONDS(uniform_int(rng, 1, 2));
		}
		w->n_sweeps++;
	}
}

void
workload_generate(Workload *w, uint64_t seed, int warmup_days)
{
	int			capacity = 0;
	int			day;

	memset(w, 0, sizeof(*w));
	w->seed = seed;
	w->measured_day = warmup_days;

	/*
	 * The measured day is drawn from the seed alone, warm-up days from
	 * streams derived from it, so a seed names the same measured jobs
	 * whatever the warm-up.
	 */
	for (day = 0; day <= warmup_days; day++)
	{
		Rng			rng = {mix(day == warmup_days ? seed : seed ^ mix((uint64_t) (warmup_days - day))) | 1};

		generate_day(w, &capacity, &rng, day);
	}
	sort_by_submit_time(w);
}

void
workload_checkpoints(Workload *w, int percent, FsTime interval)
{
	int			i;

	for (i = 0; i < w->n_jobs; i++)
	{
		uint64_t	h = mix(mix(w->seed ^ UINT64_C(0xC4EC4F01)) + (uint64_t) i * 7919u);

		w->jobs[i].checkpoint_interval = 0;
		if (w->jobs[i].job_class != CLASS_PRODUCTION && (int) (h % 100) < percent && interval > 0)
			w->jobs[i].checkpoint_interval = interval;
	}
}

void
workload_free(Workload *w)
{
	free(w->jobs);
	w->jobs = NULL;
	w->n_jobs = 0;
}

FsTime
workload_startup_delay(uint64_t seed, int job, int attempt)
{
	uint64_t	h = mix(mix(seed ^ UINT64_C(0x5DEECE66D)) + (uint64_t) job * 1000003u + (uint64_t) attempt);

	return FS_SECONDS(180 + (int64_t) (h % 301));
}
