/*
 * simulate.c — bench/simulate's program: a simulated day of the reference
 * workload through the pure scheduling core, per policy, as one table.
 *
 * Every policy is driven through the same seeded day (workload.c) by
 * day.c, which checks invariants as it goes and exits with status 3 if one
 * breaks, so a printed table comes from a run that kept them all.
 *
 * Definitions of what is printed (docs/benchmarks.md, "Simulated day", says the
 * same):
 *   waiting            at least one RUNNABLE job that could fit the
 *                      environment (instance count <= its capacity).
 *   utilisation while jobs wait
 *                      instance-time held (placed, starting, training or
 *                      stopping) / capacity x time, over the time jobs wait.
 *                      "training only" counts just the instances past their
 *                      startup and not stopping (work later lost included).
 *   utilisation over the day
 *                      the same over 00:00-24:00, waiting or not.
 *   share of capacity  a class's instance-time held while jobs wait / the
 *                      capacity-time then; in parentheses the class's
 *                      entitlement (fair share: from the weights when all
 *                      classes are saturated; quota shares: the guarantee).
 *   wait               per job, all the time it spent RUNNABLE: submission
 *                      to its first placement, plus every wait in the queue
 *                      again after a preemption.  Nearest-rank percentiles.
 *   instance-hours lost
 *                      instances x time held by attempts that were
 *                      preempted (placement to stopped), less the training
 *                      their checkpoints kept (whole checkpoint intervals
 *                      trained by the stop request, or with
 *                      --checkpoint-on-stop all of it; the next attempt
 *                      resumes there): the rest produced nothing.  x8 for
 *                      A100 GPU-hours.
 *
 * Usage: simulate [options]
 *   --seed N            the day to draw (default 20240601)
 *   --policies K,K,...  columns, from fifo strict-fifo priority fair-share
 *                       quota-shares quota-latest quota-fair (policies.c);
 *                       default fifo,priority,fair-share,quota-shares,
 *                       quota-latest (quota shares with the old victim
 *                       order, for the lost work it costs)
 *   --warmup DAYS       days run before the measured one (default 1)
 *   --capacity N        instances in the environment (default 128)
 *   --poll SECONDS      fairshare.poll_interval (default 5)
 *   --starvation S      fairshare.starvation_seconds (default 3600; 0 = off)
 *   --allowance S       added to a job's time limit for the most it holds its
 *                       instances (default 900; 0 = jobs pass no time limit,
 *                       so nothing back-fills room held for starving jobs)
 *   --checkpoints P     percent of exploration and sweep jobs that set
 *                       CheckpointConfig (default 50; 0 = none)
 *   --checkpoint-minutes M   how often they save (default 30)
 *   --checkpoint-on-stop a stopped job with CheckpointConfig writes a last
 *                       checkpoint and keeps all it trained (SageMaker's
 *                       stop gives it time to); the core counts it so
 *                       (fairshare.checkpoint_on_stop).  Default: off, only
 *                       whole intervals are kept.  Both victim orders.
 *   --reclaim-wait S    fairshare.reclaim_wait: a reclaim first waits S
 *                       seconds holding the room that frees by itself
 *                       (default 0).  Not for quota-latest, which is the
 *                       preemption before it.
 *   --min-runtime S     fairshare.preemption_min_runtime (default 0, as the
 *                       setting's).  Not for quota-latest, which keeps the
 *                       5 minutes of the preemption before this default.
 *   --old-order-min-runtime S   quota-latest's instead (default 300)
 *   --summary           also one "summary POLICY KEY VALUE" line per number,
 *                       for scripts (test/simulate/simulate.test, seeds.sh)
 *   --jobs FILE         one CSV line per job and policy, for looking closer
 *   --trace JOB         every decision about job JOB, to stderr, with the
 *                       pass input whenever the core preempts for it
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "day.h"

#define DEFAULT_SEED	20240601
#define MAX_COLUMNS		8
#define LABEL_WIDTH		38
#define COLUMN_WIDTH	17
#define HOUR_USECS		((double) FS_SECONDS(3600))

typedef struct Options
{
	uint64_t	seed;
	int			capacity;
	int			poll_seconds;
	bool		summary;
	const char *jobs_file;		/* --jobs: per-job CSV */
	int			starvation_seconds;
	int			allowance_seconds;
	int			reclaim_wait_seconds;
	int			min_runtime_seconds;
	int			old_order_min_runtime_seconds;
	bool		checkpoint_on_stop;
	int			warmup_days;
	int			checkpoint_percent;
	int			checkpoint_minutes;
	long long	trace_job;		/* --trace: decisions about this job, to stderr */
	int			n_policies;
	const Policy *policies[MAX_COLUMNS];
} Options;

static void
usage(void)
{
	fprintf(stderr, "usage: simulate [--seed N] [--policies KEY,...] [--warmup DAYS] [--capacity N]\n"
			"                [--poll SECONDS] [--starvation SECONDS] [--allowance SECONDS] [--summary]\n"
			"                [--checkpoints PERCENT] [--checkpoint-minutes M] [--checkpoint-on-stop]\n"
			"                [--reclaim-wait SECONDS] [--min-runtime SECONDS]\n"
			"                [--old-order-min-runtime SECONDS] [--jobs FILE.csv] [--trace JOB]\n"
			"  policies: fifo strict-fifo priority fair-share quota-shares quota-latest quota-fair\n");
	exit(2);
}

static void
parse_policies(Options *o, const char *list)
{
	char		copy[256];
	char	   *key;

	snprintf(copy, sizeof(copy), "%s", list);
	o->n_policies = 0;
	for (key = strtok(copy, ","); key != NULL; key = strtok(NULL, ","))
	{
		const Policy *p = policy_by_key(key);

		if (p == NULL || o->n_policies == MAX_COLUMNS)
		{
			fprintf(stderr, "simulate: unknown policy \"%s\" (or too many)\n", key);
			usage();
		}
		o->policies[o->n_policies++] = p;
	}
}

static void
parse_options(Options *o, int argc, char **argv)
{
	int			i;

	memset(o, 0, sizeof(*o));
	o->seed = DEFAULT_SEED;
	o->capacity = 128;
	o->poll_seconds = 5;
	o->starvation_seconds = 3600;
	o->allowance_seconds = 900;
	o->reclaim_wait_seconds = 0;
	o->min_runtime_seconds = 0;
	o->old_order_min_runtime_seconds = OLD_ORDER_MIN_RUNTIME_SECONDS;
	o->warmup_days = 1;
	o->checkpoint_percent = 50;
	o->checkpoint_minutes = 30;
	for (i = 0; default_policy_keys[i] != NULL; i++)
		o->policies[o->n_policies++] = policy_by_key(default_policy_keys[i]);
	for (i = 1; i < argc; i++)
	{
		if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
			o->seed = strtoull(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--policies") == 0 && i + 1 < argc)
			parse_policies(o, argv[++i]);
		else if (strcmp(argv[i], "--capacity") == 0 && i + 1 < argc)
			o->capacity = atoi(argv[++i]);
		else if (strcmp(argv[i], "--poll") == 0 && i + 1 < argc)
			o->poll_seconds = atoi(argv[++i]);
		else if (strcmp(argv[i], "--jobs") == 0 && i + 1 < argc)
			o->jobs_file = argv[++i];
		else if (strcmp(argv[i], "--starvation") == 0 && i + 1 < argc)
			o->starvation_seconds = atoi(argv[++i]);
		else if (strcmp(argv[i], "--checkpoint-on-stop") == 0)
			o->checkpoint_on_stop = true;
		else if (strcmp(argv[i], "--reclaim-wait") == 0 && i + 1 < argc)
			o->reclaim_wait_seconds = atoi(argv[++i]);
		else if (strcmp(argv[i], "--min-runtime") == 0 && i + 1 < argc)
			o->min_runtime_seconds = atoi(argv[++i]);
		else if (strcmp(argv[i], "--old-order-min-runtime") == 0 && i + 1 < argc)
			o->old_order_min_runtime_seconds = atoi(argv[++i]);
		else if (strcmp(argv[i], "--allowance") == 0 && i + 1 < argc)
			o->allowance_seconds = atoi(argv[++i]);
		else if (strcmp(argv[i], "--warmup") == 0 && i + 1 < argc)
			o->warmup_days = atoi(argv[++i]);
		else if (strcmp(argv[i], "--checkpoints") == 0 && i + 1 < argc)
			o->checkpoint_percent = atoi(argv[++i]);
		else if (strcmp(argv[i], "--checkpoint-minutes") == 0 && i + 1 < argc)
			o->checkpoint_minutes = atoi(argv[++i]);
		else if (strcmp(argv[i], "--trace") == 0 && i + 1 < argc)
			o->trace_job = atoll(argv[++i]);
		else if (strcmp(argv[i], "--summary") == 0)
			o->summary = true;
		else
			usage();
	}
	if (o->capacity < 32 || o->poll_seconds < 1 || o->warmup_days < 0 || o->warmup_days > 30 ||
		o->min_runtime_seconds < 0 || o->old_order_min_runtime_seconds < 0 ||
		o->checkpoint_percent < 0 || o->checkpoint_percent > 100 || o->checkpoint_minutes < 1)
	{
		fprintf(stderr, "simulate: --capacity must be at least 32 (the largest job), --poll at least 1, --warmup 0-30,\n"
				"  --checkpoints 0-100, --checkpoint-minutes at least 1,\n"
				"  --min-runtime and --old-order-min-runtime at least 0\n");
		exit(2);
	}
}

static double
percent(double part, double whole)
{
	return whole > 0 ? 100.0 * part / whole : 0;
}

/* ---------- the table ---------- */

static void
row_label(const char *label)
{
	printf("%-*s", LABEL_WIDTH, label);
}

static void
cell(const char *text)
{
	printf("%*s", COLUMN_WIDTH, text);
}

static void
print_header(const Options *o, const Workload *w)
{
	InstanceTime demand[N_CLASSES] = {0};
	int			jobs[N_CLASSES] = {0};
	int			smallest[N_CLASSES],
				largest[N_CLASSES];
	double		total = 0;
	double		capacity_hours = o->capacity * 24.0;
	int			i,
				c;

	for (c = 0; c < N_CLASSES; c++)
	{
		smallest[c] = 1 << 30;
		largest[c] = 0;
	}
	for (i = 0; i < w->n_jobs; i++)
	{
		const WorkloadJob *j = &w->jobs[i];

		if (j->day != w->measured_day)
			continue;
		c = j->job_class;
		jobs[c]++;
		demand[c] += (InstanceTime) j->instances * j->run_time;
		if (j->instances < smallest[c])
			smallest[c] = j->instances;
		if (j->instances > largest[c])
			largest[c] = j->instances;
	}
	for (c = 0; c < N_CLASSES; c++)
		total += (double) demand[c] / HOUR_USECS;

	printf("fairshare simulated day, seed %llu (measured after %d warm-up day%s drawn the same way)\n",
		   (unsigned long long) o->seed, o->warmup_days, o->warmup_days == 1 ? "" : "s");
	printf("  environment  %d x ml.p4d.24xlarge\n", o->capacity);
	printf("  SageMaker    startup 3-8 min per attempt, stop 2 min; a pass on every event and every %d s\n",
		   o->poll_seconds);
	printf("  settings     preemption_min_runtime %d s (the old order: %d s), starvation_seconds %d s, reclaim_wait %d s\n",
		   o->min_runtime_seconds, o->old_order_min_runtime_seconds, o->starvation_seconds, o->reclaim_wait_seconds);
	if (o->allowance_seconds > 0)
		printf("  time limits  MaxRuntimeInSeconds 1.5 x training, rounded up to 10 min; + %d s for startup and stop\n",
			   o->allowance_seconds);
	else
		printf("  time limits  none passed to the core\n");
	if (o->checkpoint_percent > 0)
		printf("  checkpoints  %d%% of exploration and sweep jobs save every %d min (CheckpointConfig)%s\n",
			   o->checkpoint_percent, o->checkpoint_minutes,
			   o->checkpoint_on_stop ? ", and once more when stopped" : "");
	else
		printf("  checkpoints  none\n");
	printf("  workload     %d jobs, %.0f instance-hours of training (%.0f%% of the day's %.0f)\n",
		   jobs[0] + jobs[1] + jobs[2], total, percent(total, capacity_hours), capacity_hours);
	for (c = 0; c < N_CLASSES; c++)
		printf("    %-12s %4d jobs %5.0f instance-hours (%2.0f%%), %d-%d instances%s\n", class_names[c], jobs[c],
			   (double) demand[c] / HOUR_USECS, percent((double) demand[c] / HOUR_USECS, total),
			   smallest[c], largest[c], c == CLASS_SWEEPS ? " (in sweeps of one size)" : "");
	printf("\n");
}

/* A row of idle room while jobs waited, one DayResult field, in % of the capacity then. */
static void
idle_row(const Options *o, const DayResult *results, const char *label, size_t field)
{
	char		text[32];
	int			p;

	row_label(label);
	for (p = 0; p < o->n_policies; p++)
	{
		InstanceTime idle = *(const InstanceTime *) ((const char *) &results[p] + field);

		snprintf(text, sizeof(text), "%.2f%%", percent((double) idle,
													   (double) results[p].capacity * (double) results[p].waiting_time));
		cell(text);
	}
	printf("\n");
}

static void
print_table(const Options *o, const DayResult *results)
{
	char		text[64];
	int			p,
				c;

	row_label("");
	for (p = 0; p < o->n_policies; p++)
		cell(results[p].policy->title);
	printf("\n");

	row_label("utilisation while jobs wait");
	for (p = 0; p < o->n_policies; p++)
	{
		snprintf(text, sizeof(text), "%.2f%%", percent((double) results[p].held_waiting,
													   (double) results[p].capacity * (double) results[p].waiting_time));
		cell(text);
	}
	printf("\n");
	row_label("  training only (no startup, stops)");
	for (p = 0; p < o->n_policies; p++)
	{
		snprintf(text, sizeof(text), "%.2f%%", percent((double) results[p].training_waiting,
													   (double) results[p].capacity * (double) results[p].waiting_time));
		cell(text);
	}
	printf("\n");
	row_label("  hours with a job waiting");
	for (p = 0; p < o->n_policies; p++)
	{
		snprintf(text, sizeof(text), "%.1f", (double) results[p].waiting_time / HOUR_USECS);
		cell(text);
	}
	printf("\n");
	idle_row(o, results, "  idle: held for nominated jobs", offsetof(DayResult, idle_nominated));
	idle_row(o, results, "    of which for starving jobs", offsetof(DayResult, idle_starvation));
	idle_row(o, results, "    of which no other waiting job fits", offsetof(DayResult, idle_nominated_unwanted));
	idle_row(o, results, "  idle: no waiting job fits the room", offsetof(DayResult, idle_too_small));
	idle_row(o, results, "  idle: other (beyond loaded heads)", offsetof(DayResult, idle_other));
	row_label("utilisation over the day (00-24 h)");
	for (p = 0; p < o->n_policies; p++)
	{
		snprintf(text, sizeof(text), "%.1f%%", percent((double) results[p].held_day,
													   (double) results[p].capacity * (double) results[p].day_length));
		cell(text);
	}
	printf("\n");

	row_label("production below its guarantee (h)");
	for (p = 0; p < o->n_policies; p++)
	{
		snprintf(text, sizeof(text), "%.2f", (double) results[p].production_short / HOUR_USECS);
		cell(text);
	}
	printf("\n");
	printf("share of capacity while jobs wait\n");
	for (c = 0; c < N_CLASSES; c++)
	{
		snprintf(text, sizeof(text), "  %s (entitled)", class_names[c]);
		row_label(text);
		for (p = 0; p < o->n_policies; p++)
		{
			const DayResult *r = &results[p];
			double		share = percent((double) r->classes[c].held_waiting,
										(double) r->capacity * (double) r->waiting_time);

			if (r->policy->entitlement[c] >= 0)
				snprintf(text, sizeof(text), "%.1f%% (%.0f%%)", share, 100 * r->policy->entitlement[c]);
			else
				snprintf(text, sizeof(text), "%.1f%% (-)", share);
			cell(text);
		}
		printf("\n");
	}

	printf("wait p50 / p90 / p99 (minutes)\n");
	for (c = 0; c < N_CLASSES; c++)
	{
		snprintf(text, sizeof(text), "  %s", class_names[c]);
		row_label(text);
		for (p = 0; p < o->n_policies; p++)
		{
			const ClassResult *cr = &results[p].classes[c];

			snprintf(text, sizeof(text), "%.0f / %.0f / %.0f", percentile(cr->wait_minutes, cr->n_waits, 50),
					 percentile(cr->wait_minutes, cr->n_waits, 90), percentile(cr->wait_minutes, cr->n_waits, 99));
			cell(text);
		}
		printf("\n");
	}

	printf("preemptions (instance-hours lost)\n");
	for (c = 0; c < N_CLASSES; c++)
	{
		snprintf(text, sizeof(text), "  %s", class_names[c]);
		row_label(text);
		for (p = 0; p < o->n_policies; p++)
		{
			const ClassResult *cr = &results[p].classes[c];

			snprintf(text, sizeof(text), "%d (%.1f)", cr->preemptions, (double) cr->lost / HOUR_USECS);
			cell(text);
		}
		printf("\n");
	}

	row_label("  all classes (instance-hours lost)");
	for (p = 0; p < o->n_policies; p++)
	{
		int			n = 0;
		InstanceTime lost = 0;

		for (c = 0; c < N_CLASSES; c++)
		{
			n += results[p].classes[c].preemptions;
			lost += results[p].classes[c].lost;
		}
		snprintf(text, sizeof(text), "%d (%.1f)", n, (double) lost / HOUR_USECS);
		cell(text);
	}
	printf("\n");
	row_label("  of which reclaims / in-share");
	for (p = 0; p < o->n_policies; p++)
	{
		snprintf(text, sizeof(text), "%d / %d", results[p].reclaims, results[p].in_share_preemptions);
		cell(text);
	}
	printf("\n");
	printf("jobs finished by 24:00 / submitted\n");
	for (c = 0; c < N_CLASSES; c++)
	{
		snprintf(text, sizeof(text), "  %s", class_names[c]);
		row_label(text);
		for (p = 0; p < o->n_policies; p++)
		{
			snprintf(text, sizeof(text), "%d / %d", results[p].classes[c].finished_in_day,
					 results[p].classes[c].submitted);
			cell(text);
		}
		printf("\n");
	}
	row_label("the day's last job finished at");
	for (p = 0; p < o->n_policies; p++)
	{
		long long	s = (long long) (results[p].last_finish / FS_USECS_PER_SEC);

		snprintf(text, sizeof(text), "%s%02lld:%02lld", s >= 86400 ? "next day " : "", s % 86400 / 3600,
				 s % 3600 / 60);
		cell(text);
	}
	printf("\n");
	row_label("core passes");
	for (p = 0; p < o->n_policies; p++)
	{
		snprintf(text, sizeof(text), "%ld", results[p].passes);
		cell(text);
	}
	printf("\n");
	row_label("invariant checks (all held)");
	for (p = 0; p < o->n_policies; p++)
	{
		snprintf(text, sizeof(text), "%ld", results[p].checks);
		cell(text);
	}
	printf("\n");
}

/* One line per number, for scripts. */
static void
print_summary(const Options *o, const DayResult *results)
{
	int			p,
				c;

	for (p = 0; p < o->n_policies; p++)
	{
		const DayResult *r = &results[p];
		const char *key = r->policy->key;
		double		capacity_time = (double) r->capacity * (double) r->waiting_time;

		printf("summary %s utilisation_waiting %.4f\n", key, percent((double) r->held_waiting, capacity_time));
		printf("summary %s utilisation_day %.4f\n", key,
			   percent((double) r->held_day, (double) r->capacity * (double) r->day_length));
		printf("summary %s waiting_hours %.4f\n", key, (double) r->waiting_time / HOUR_USECS);
		printf("summary %s idle_held_starving %.4f\n", key, percent((double) r->idle_starvation, capacity_time));
		printf("summary %s idle_held_unwanted %.4f\n", key, percent((double) r->idle_nominated_unwanted, capacity_time));
		printf("summary %s idle_no_fit %.4f\n", key, percent((double) r->idle_too_small, capacity_time));
		printf("summary %s conservation_checks %ld\n", key, r->conservation_checks);
		printf("summary %s production_short_hours %.4f\n", key, (double) r->production_short / HOUR_USECS);
		printf("summary %s checks %ld\n", key, r->checks);
		{
			InstanceTime lost = 0;

			for (c = 0; c < N_CLASSES; c++)
				lost += r->classes[c].lost;
			printf("summary %s lost_hours %.4f\n", key, (double) lost / HOUR_USECS);
		}
		for (c = 0; c < N_CLASSES; c++)
		{
			const ClassResult *cr = &r->classes[c];
			const char *name = class_names[c];

			printf("summary %s %s_share_waiting %.4f\n", key, name,
				   percent((double) cr->held_waiting, capacity_time));
			printf("summary %s %s_wait_p50 %.2f\n", key, name, percentile(cr->wait_minutes, cr->n_waits, 50));
			printf("summary %s %s_wait_p90 %.2f\n", key, name, percentile(cr->wait_minutes, cr->n_waits, 90));
			printf("summary %s %s_wait_p99 %.2f\n", key, name, percentile(cr->wait_minutes, cr->n_waits, 99));
			printf("summary %s %s_preemptions %d\n", key, name, cr->preemptions);
			printf("summary %s %s_lost_hours %.4f\n", key, name, (double) cr->lost / HOUR_USECS);
			printf("summary %s %s_stopped_for_instances %d\n", key, name, cr->stopped_for);
			printf("summary %s %s_finished %d\n", key, name, cr->finished);
			printf("summary %s %s_submitted %d\n", key, name, cr->submitted);
		}
	}
}

int
main(int argc, char **argv)
{
	Options		o;
	Workload	w;
	DayConfig	config;
	DayResult	results[MAX_COLUMNS];
	FILE	   *jobs = NULL;
	int			p;

	parse_options(&o, argc, argv);
	workload_generate(&w, o.seed, o.warmup_days);
	workload_checkpoints(&w, o.checkpoint_percent, FS_SECONDS(60 * o.checkpoint_minutes));

	memset(&config, 0, sizeof(config));
	config.capacity = o.capacity;
	config.poll_interval = FS_SECONDS(o.poll_seconds);
	config.stop_delay = FS_SECONDS(120);
	config.min_runtime = FS_SECONDS(o.min_runtime_seconds);
	config.old_order_min_runtime = FS_SECONDS(o.old_order_min_runtime_seconds);
	config.starvation = FS_SECONDS(o.starvation_seconds);
	config.day_length = FS_SECONDS(86400);
	config.horizon = FS_SECONDS(14 * 86400);
	config.trace_job = o.trace_job;
	config.runtime_allowance = FS_SECONDS(o.allowance_seconds);
	config.reclaim_wait = FS_SECONDS(o.reclaim_wait_seconds);
	config.checkpoint_on_stop = o.checkpoint_on_stop;

	if (o.jobs_file != NULL && (jobs = fopen(o.jobs_file, "w")) == NULL)
	{
		perror(o.jobs_file);
		return 2;
	}
	if (jobs != NULL)
		fprintf(jobs, "policy,job,day,class,instances,submitted_min,waited_min,placed_min,attempts,finished_min\n");
	print_header(&o, &w);
	fflush(stdout);
	for (p = 0; p < o.n_policies; p++)
		simulate_day(&w, o.policies[p], &config, &results[p], jobs);
	if (jobs != NULL)
		fclose(jobs);
	print_table(&o, results);
	if (o.summary)
		print_summary(&o, results);

	for (p = 0; p < o.n_policies; p++)
		day_result_free(&results[p]);
	workload_free(&w);
	return 0;
}
