/*
 * day.c — one simulated day under one policy (see day.h for the model).
 *
 * The loop, in simulated time:
 *
 *   submit every job whose time has come;
 *   run a pass as the SQL wrapper does and apply its decisions (through
 *   test/core/sim.c, which also holds the world);
 *   check the invariants;
 *   step to the next event -- the next submission, the next job to finish,
 *   the next stop to complete -- or one poll interval, whichever is first;
 *   count what was held in the interval just passed, then let jobs finish
 *   and stops complete at its end.
 *
 * Nothing changes between two steps, so counting per interval is exact.
 *
 * Invariants checked (any break exits with status 3 and says which):
 *   after every pass   the environment's capacity is not exceeded (running
 *                      and stopping jobs counted); every state change of a
 *                      job was a decision of the pass (PLACE, PREEMPT); no
 *                      victim was placed at this moment; unless the queue is
 *                      strict FIFO, no loaded RUNNABLE job without a
 *                      nomination fits in the room neither in use nor held
 *                      for a nominee (work conservation);
 *   after every step   only running jobs finish, exactly their startup plus
 *                      the training time their checkpoints left after
 *                      placement; only stopping jobs
 *                      come back, keeping their runnable_at;
 *   at the end         every job of every day finished before the horizon;
 *                      per job, finish - submission = time waiting + time
 *                      placed; instance-time counted per interval equals
 *                      the sum over attempts; held and idle add up to the
 *                      capacity; nothing exceeds capacity x time; the core
 *                      freed everything it allocated.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "day.h"

/* What the SQL wrapper does around a pass (src/sql_api/schedule.[ch]). */
#define WRAPPER_PREFIX	64		/* PASS_PREFIX: RUNNABLE jobs loaded per share */
#define WRAPPER_ROUNDS	8		/* MAX_PASS_ROUNDS: passes while the core asks for more heads */

/* What the simulator knows about one job beyond what the Sim world holds. */
typedef struct JobTrack
{
	SimJobState state;			/* as of the last look: a change must be explained */
	int			attempts;		/* placements so far */
	FsTime		runnable_since; /* when it last became RUNNABLE */
	FsTime		runnable_at;	/* the place in line it must keep */
	FsTime		waited;			/* total time RUNNABLE */
	FsTime		held;			/* total time placed, over all attempts */
	FsTime		placed_at;		/* this attempt */
	FsTime		startup;		/* this attempt's startup delay */
	FsTime		finished_at;	/* -1 until it finished */
	bool		preempted_in_window;	/* this attempt was stopped in the measured day */
	FsTime		saved;			/* training its checkpoints kept, earlier attempts */
	FsTime		kept;			/* of this attempt's training, what its last
								 * checkpoint before the stop request kept */

	/*
	 * While nominated as starving: the first time the core gave by which
	 * its held room is complete (0: none yet).  Back-fill must never make
	 * it start later than that (on_placed).
	 */
	FsTime		room_promised_by;
} JobTrack;

typedef struct Day
{
	const Workload *workload;
	const Policy *policy;
	const DayConfig *config;
	DayResult  *result;
	Sim			sim;
	int			env;
	int			type;
	int			class_share[N_CLASSES];
	JobTrack   *track;			/* [workload->n_jobs], by job index */
	bool		preempted;		/* a job was preempted, in any day */
	int64_t    *stopping_for;	/* scratch [n_jobs]: instances stopping for each job */
	int			n_submitted;
	int			n_finished;
	FsTime		start;			/* simulated clock at 00:00 of the first day */
	FsTime		measure_from;	/* 00:00 of the measured day */
	FsTime		measure_to;		/* 24:00 of the measured day */
	int64_t		trace_job;		/* DayConfig.trace_job */
	InstanceTime held_all[N_CLASSES];	/* over the whole run, for the cross-check */
} Day;

static void
format_clock(const Day *d, FsTime t, char *buf, size_t size)
{
	long long	s = (long long) ((t - d->start) / FS_USECS_PER_SEC);

	snprintf(buf, size, "day %lld %02lld:%02lld:%02lld", s / 86400 + 1, s % 86400 / 3600,
			 s % 3600 / 60, s % 60);
}

static void
broken(const Day *d, const char *format,...)
{
	char		clock[32];
	va_list		args;

	format_clock(d, d->sim.now, clock, sizeof(clock));
	fprintf(stderr, "simulate: INVARIANT BROKEN (policy %s, seed %llu, %s): ", d->policy->key,
			(unsigned long long) d->workload->seed, clock);
	va_start(args, format);
	vfprintf(stderr, format, args);
	va_end(args);
	fputc('\n', stderr);
	exit(3);
}

/* One invariant: counts it, or stops the run saying what broke. */
static void
expect(Day *d, bool ok, const char *what)
{
	if (!ok)
		broken(d, "%s", what);
	d->result->checks++;
}

static JobClass
class_of(const Day *d, int job)
{
	return d->workload->jobs[job].job_class;
}

/* Is now within the measured day? */
static bool
in_window(const Day *d)
{
	return d->sim.now >= d->measure_from && d->sim.now < d->measure_to;
}

static bool
measured(const Day *d, int job)
{
	return d->workload->jobs[job].day == d->workload->measured_day;
}

static void
submit_due_jobs(Day *d)
{
	const Workload *w = d->workload;

	while (d->n_submitted < w->n_jobs &&
		   d->start + w->jobs[d->n_submitted].submit_at <= d->sim.now)
	{
		const WorkloadJob *wj = &w->jobs[d->n_submitted];
		int			job = sim_submit(&d->sim, d->class_share[wj->job_class], wj->instances,
									 wj->priority, d->type);
		JobTrack   *t = &d->track[job];

		expect(d, job == d->n_submitted, "the Sim numbers jobs in submission order");
		if (d->config->runtime_allowance > 0)
			d->sim.jobs[job].max_occupancy = wj->time_limit + d->config->runtime_allowance;
		memset(t, 0, sizeof(*t));
		t->state = SIM_RUNNABLE;
		t->runnable_since = d->sim.now;
		t->runnable_at = d->sim.jobs[job].runnable_at;
		t->finished_at = -1;
		d->n_submitted++;
	}
}

static void
on_placed(Day *d, int job)
{
	JobTrack   *t = &d->track[job];

	expect(d, t->state == SIM_RUNNABLE, "a PLACE decision for a job that was not RUNNABLE");
	t->waited += d->sim.now - t->runnable_since;
	t->attempts++;
	t->placed_at = d->sim.now;
	t->startup = workload_startup_delay(d->workload->seed, job, t->attempts);
	/* an attempt after a checkpointed stop resumes from the checkpoint */
	d->sim.jobs[job].duration = t->startup + d->workload->jobs[job].run_time - t->saved;
	d->sim.jobs[job].checkpoint_interval = d->workload->jobs[job].checkpoint_interval;
	d->sim.jobs[job].checkpoint_from = d->sim.now + t->startup;
	t->kept = 0;
	t->state = SIM_RUNNING;

	/*
	 * With one queue and no preemption, nothing but back-fill changes when
	 * a starving job's room is complete, and back-fill must keep the time
	 * its hold first promised.  (Preemption victims, or another queue's
	 * starving job, may take room the promise counted on.)
	 */
	if (t->room_promised_by > 0 && d->sim.n_queues == 1 && !d->preempted)
		expect(d, d->sim.now <= t->room_promised_by,
			   "a starving job started later than its held room was promised complete");
	t->room_promised_by = 0;
}

/* A starving job's hold: remember the first time its room is promised by. */
static void
on_nomination(Day *d, int job, const FsDecision *decision)
{
	JobTrack   *t = &d->track[job];

	if (decision->kind == FS_DECISION_DROP_NOMINATION)
		t->room_promised_by = 0;
	else if (decision->nomination_kind == FS_NOMINATION_STARVATION &&
			 decision->room_complete_by > 0 && t->room_promised_by == 0)
		t->room_promised_by = decision->room_complete_by;
}

static void
on_preempted(Day *d, int job, const FsDecision *decision)
{
	JobTrack   *t = &d->track[job];

	expect(d, t->state == SIM_RUNNING, "a PREEMPT decision for a job that was not running");
	t->preempted_in_window = in_window(d);
	expect(d, d->sim.jobs[job].started_at < d->sim.now,
			   "a job placed at this moment was chosen as a victim");
	t->state = SIM_STOPPING;
	d->preempted = true;

	/*
	 * What its checkpoints keep of this attempt: whole intervals of the
	 * training done by the stop request -- or, with checkpoint_on_stop
	 * (SageMaker's grace period used to write one more), all of it.
	 */
	if (d->workload->jobs[job].checkpoint_interval > 0 && d->sim.now > t->placed_at + t->startup)
	{
		FsTime		interval = d->workload->jobs[job].checkpoint_interval;

		t->kept = d->sim.now - t->placed_at - t->startup;
		if (!d->config->checkpoint_on_stop)
			t->kept = t->kept / interval * interval;
	}
	expect(d, t->saved + t->kept < d->workload->jobs[job].run_time,
		   "a stopped job kept more training than it needed");
	if (!t->preempted_in_window)
		return;
	d->result->classes[class_of(d, job)].preemptions++;
	{
		const SimJob *for_job = sim_job(&d->sim, decision->for_job_id);

		if (for_job != NULL)
			d->result->classes[class_of(d, (int) (for_job - d->sim.jobs))].stopped_for +=
				decision->instance_count;
	}
	if (decision->preempt_reason == FS_PREEMPT_IN_SHARE)
		d->result->in_share_preemptions++;
	else
		d->result->reclaims++;
}

/*
 * Room held for nominated jobs: per nominee its instance count less the
 * instances of its victims still stopping (which will come to it), as the
 * core holds it.  *starving gets the part held for starvation nominations.
 */
static int64_t
room_held_for_nominees(Day *d, int64_t *starving)
{
	int64_t		held = 0;
	int			i;

	*starving = 0;
	for (i = 0; i < d->n_submitted; i++)
		d->stopping_for[i] = 0;
	for (i = 0; i < d->n_submitted; i++)
	{
		const SimJob *j = &d->sim.jobs[i];

		if (j->state == SIM_STOPPING && j->stopping_for > 0)
			d->stopping_for[j->stopping_for - 1] += j->count;
	}
	for (i = 0; i < d->n_submitted; i++)
	{
		const SimJob *j = &d->sim.jobs[i];

		if (j->state == SIM_RUNNABLE && j->nomination.kind != FS_NOMINATION_NONE &&
			j->count > d->stopping_for[i])
		{
			held += j->count - d->stopping_for[i];
			if (j->nomination.kind == FS_NOMINATION_STARVATION)
				*starving += j->count - d->stopping_for[i];
		}
	}
	return held;
}

/* The pass's checks: capacity, explained state changes, work conservation. */
static void
check_pass(Day *d, bool complete)
{
	Sim		   *sim = &d->sim;
	int64_t		held = 0;
	int64_t		for_nominees,
				for_starving,
				unheld;
	int			i;

	for (i = 0; i < d->n_submitted; i++)
	{
		const SimJob *j = &sim->jobs[i];

		if (j->state != d->track[i].state)
			broken(d, "job %lld changed state with no decision", (long long) j->id);
		if (j->state == SIM_RUNNING || j->state == SIM_STOPPING)
		{
			if (j->env != d->env || j->type != d->type)
				broken(d, "job %lld placed off the environment", (long long) j->id);
			held += j->count;
		}
	}
	if (held > d->config->capacity)
		broken(d, "%lld instances held, capacity %d", (long long) held, d->config->capacity);
	expect(d, held == sim_env_used(sim, d->env, d->type), "held instances differ from the Sim's count");

	/*
	 * Work conservation (docs/scheduling.md, 'Quota-share queues', and
	 * back-fill in 'FIFO queues' and 'Fair-share queues'): no loaded
	 * job without a nomination waits that fits in the room neither in use
	 * nor held for a nominee.  Every share here may use any free room (no
	 * RESERVE, no borrow limit, no compute reservation), so the rules let
	 * any such job run.  Not for strict FIFO, nor when the wrapper's loop
	 * stopped with heads still to load.
	 */
	if (d->policy->strict_fifo || !complete)
		return;
	for_nominees = room_held_for_nominees(d, &for_starving);
	unheld = d->config->capacity - held - for_nominees;
	for (i = 0; i < d->n_submitted; i++)
	{
		const SimJob *j = &sim->jobs[i];

		if (j->state == SIM_RUNNABLE && j->loaded && j->nomination.kind == FS_NOMINATION_NONE &&
			j->count <= unheld)
			broken(d, "job %lld (%d instances) waits while %lld instances are neither in use nor held",
				   (long long) j->id, j->count, (long long) unheld);
	}
	d->result->checks++;
	d->result->conservation_checks++;
}

/* --trace: one line per decision about the traced job, with its sentence. */
static void
trace_decision(const Day *d, const FsDecision *decision)
{
	static const char *const kinds[] = {"PLACE", "PREEMPT", "NOMINATE", "KEEP_NOMINATION",
	"DROP_NOMINATION", "MISCONFIGURED"};
	char		clock[32];
	char		sentence[512];

	format_clock(d, d->sim.now, clock, sizeof(clock));
	fs_format_decision(&d->sim.input, decision, sentence, sizeof(sentence));
	fprintf(stderr, "trace %s %s: %s job %lld (%s, %d instances)%s%s\n", d->policy->key, clock,
			kinds[decision->kind], (long long) decision->job_id,
			class_names[class_of(d, (int) decision->job_id - 1)], decision->instance_count,
			sentence[0] ? ": " : "", sentence);
}

/*
 * --trace: the input of a pass that preempted for the traced job -- what
 * ran, what stopped, what was nominated -- to judge the victims chosen.
 */
static void
trace_pass_input(const Day *d)
{
	const FsInput *in = &d->sim.input;
	int			i,
				s;

	for (i = 0; i < in->n_running; i++)
	{
		const FsRunningJob *r = &in->running[i];

		fprintf(stderr, "  running job %lld %s %d instances priority %d placed %.1f min ago%s\n",
				(long long) r->job_id, r->share >= 0 ? in->shares[r->share].name : "-", r->instance_count,
				r->priority, (double) (in->now - r->started_at) / FS_SECONDS(60),
				r->stopping ? " (stopping)" : "");
	}
	for (s = 0; s < in->n_shares; s++)
		for (i = 0; i < in->shares[s].n_runnable; i++)
		{
			const FsRunnableJob *j = &in->shares[s].runnable[i];

			if (j->nomination.kind != FS_NOMINATION_NONE || j->job_id == d->trace_job)
				fprintf(stderr, "  runnable job %lld %s %d instances priority %d%s\n", (long long) j->job_id,
						in->shares[s].name, j->instance_count, j->priority,
						j->nomination.kind != FS_NOMINATION_NONE ? " (nominated)" : "");
		}
}

/* One pass as the SQL wrapper runs it: again while the core asks for more heads. */
static void
run_pass(Day *d)
{
	bool		complete = false;
	int			round;

	for (round = 0; round < WRAPPER_ROUNDS && !complete; round++)
	{
		FsResult   *r = sim_pass(&d->sim);
		int			i;

		d->result->passes++;
		for (i = 0; d->trace_job > 0 && i < r->n_decisions; i++)
			if (r->decisions[i].kind == FS_DECISION_PREEMPT && r->decisions[i].for_job_id == d->trace_job)
			{
				trace_pass_input(d);
				break;
			}
		for (i = 0; i < r->n_decisions; i++)
		{
			const FsDecision *decision = &r->decisions[i];
			int			job = (int) decision->job_id - 1;

			if (d->trace_job > 0 &&
				(decision->job_id == d->trace_job || decision->for_job_id == d->trace_job))
				trace_decision(d, decision);
			if (decision->kind == FS_DECISION_PLACE)
				on_placed(d, job);
			else if (decision->kind == FS_DECISION_PREEMPT)
				on_preempted(d, job, decision);
			else if (decision->kind == FS_DECISION_MISCONFIGURED)
				broken(d, "job %lld reported misconfigured", (long long) decision->job_id);
			else if (decision->kind == FS_DECISION_NOMINATE ||
					 decision->kind == FS_DECISION_KEEP_NOMINATION ||
					 decision->kind == FS_DECISION_DROP_NOMINATION)
				on_nomination(d, job, decision);
		}
		complete = !(r->more_jobs_needed && r->stats.placed > 0);
	}
	check_pass(d, complete);
}

/* The time of the next event, or one poll interval from now. */
static FsTime
next_step(const Day *d)
{
	const Sim  *sim = &d->sim;
	FsTime		next = sim->now + d->config->poll_interval;
	int			i;

	if (d->n_submitted < d->workload->n_jobs)
	{
		FsTime		submit = d->start + d->workload->jobs[d->n_submitted].submit_at;

		if (submit < next)
			next = submit;
	}
	for (i = 0; i < d->n_submitted; i++)
	{
		const SimJob *j = &sim->jobs[i];

		if (j->state == SIM_RUNNING && j->started_at + j->duration < next)
			next = j->started_at + j->duration;
		else if (j->state == SIM_STOPPING && j->stop_at < next)
			next = j->stop_at;
	}
	return next;
}

/*
 * Counts the instance-time of [t0, t1), in which nothing changes: all of it
 * for the cross-check, the part within the measured day for the table.
 */
static void
count_interval(Day *d, FsTime t0, FsTime t1)
{
	DayResult  *r = d->result;
	InstanceTime held[N_CLASSES] = {0};
	InstanceTime training = 0;
	bool		waiting = false;
	FsTime		from = t0 > d->measure_from ? t0 : d->measure_from;
	FsTime		to = t1 < d->measure_to ? t1 : d->measure_to;
	FsTime		dt = to > from ? to - from : 0; /* the part in the measured day */
	int			i,
				c;

	int64_t		free_room = d->config->capacity;
	int64_t		held_for_starving;
	int64_t		held_for_nominees = room_held_for_nominees(d, &held_for_starving);
	int			smallest_waiting = d->config->capacity + 1;
	int			smallest_production = d->config->capacity + 1;

	for (i = 0; i < d->n_submitted; i++)
	{
		const SimJob *j = &d->sim.jobs[i];

		if (j->state == SIM_RUNNABLE && j->nomination.kind == FS_NOMINATION_NONE &&
			j->count < smallest_waiting)
			smallest_waiting = j->count;
		if (j->state == SIM_RUNNABLE && class_of(d, i) == CLASS_PRODUCTION && j->count < smallest_production)
			smallest_production = j->count;
		if (j->state == SIM_RUNNING || j->state == SIM_STOPPING)
			free_room -= j->count;
		if (j->state == SIM_RUNNABLE && j->count <= d->config->capacity)
			waiting = true;
		if (j->state == SIM_RUNNING || j->state == SIM_STOPPING)
			held[class_of(d, i)] += j->count;
		if (j->state == SIM_RUNNING && dt > 0)
		{
			FsTime		trains_from = d->track[i].placed_at + d->track[i].startup;

			if (trains_from < from)
				trains_from = from;
			if (trains_from < to)
				training += (InstanceTime) j->count * (to - trains_from);
		}
	}
	for (c = 0; c < N_CLASSES; c++)
	{
		d->held_all[c] += held[c] * (t1 - t0);
		r->classes[c].held_day += held[c] * dt;
		r->held_day += held[c] * dt;
		if (waiting)
		{
			r->classes[c].held_waiting += held[c] * dt;
			r->held_waiting += held[c] * dt;
		}
	}
	if (held[CLASS_PRODUCTION] + smallest_production <=
		quota_guarantee(d->config->capacity, CLASS_PRODUCTION))
		r->production_short += dt;
	if (waiting)
	{
		int64_t		nominated = held_for_nominees < free_room ? held_for_nominees : free_room;
		int64_t		rest = free_room - nominated;

		r->waiting_time += dt;
		r->training_waiting += training;
		r->idle_nominated += nominated * dt;
		/* room short of what nominees hold is owed to starving ones first: they wait longest */
		r->idle_starvation += (held_for_starving < nominated ? held_for_starving : nominated) * dt;
		if (smallest_waiting > free_room)
			r->idle_nominated_unwanted += nominated * dt;
		if (smallest_waiting > rest)
			r->idle_too_small += rest * dt;
		else
			r->idle_other += rest * dt;
	}
}

/* Moves time to t1 and accounts for the jobs that finished or stopped there. */
static void
advance_to(Day *d, FsTime t1)
{
	Sim		   *sim = &d->sim;
	int			i;

	count_interval(d, sim->now, t1);
	sim_advance(sim, t1 - sim->now);
	for (i = 0; i < d->n_submitted; i++)
	{
		SimJob	   *j = &sim->jobs[i];
		JobTrack   *t = &d->track[i];
		ClassResult *cr = &d->result->classes[class_of(d, i)];

		if (j->state == t->state)
			continue;
		if (t->state == SIM_RUNNING && j->state == SIM_DONE)
		{
			expect(d, t->placed_at + t->startup + d->workload->jobs[i].run_time - t->saved == sim->now,
				   "a job finished other than after its startup and the run time its checkpoints left");
			expect(d, j->max_occupancy <= 0 || sim->now <= t->placed_at + j->max_occupancy,
				   "a job held its instances longer than its time limit and allowance");
			t->held += sim->now - t->placed_at;
			t->finished_at = sim->now;
			d->n_finished++;
			if (measured(d, i))
			{
				cr->finished++;
				if (sim->now <= d->measure_to)
					cr->finished_in_day++;
			}
		}
		else if (t->state == SIM_STOPPING && j->state == SIM_RUNNABLE)
		{
			t->held += sim->now - t->placed_at;
			if (t->preempted_in_window)
				cr->lost += (InstanceTime) j->count * (sim->now - t->placed_at - t->kept);
			t->saved += t->kept;
			t->kept = 0;
			t->preempted_in_window = false;
			t->runnable_since = sim->now;
			expect(d, j->runnable_at == t->runnable_at, "a requeued job lost its place in line");
		}
		else
			broken(d, "job %lld went from state %d to %d between passes", (long long) j->id,
				   (int) t->state, (int) j->state);
		t->state = j->state;
	}
}

static int
ascending(const void *a, const void *b)
{
	double		x = *(const double *) a;
	double		y = *(const double *) b;

	return (x > y) - (x < y);
}

/* The end-of-run checks, and the per-class wait times. */
static void
finish_accounting(Day *d)
{
	DayResult  *r = d->result;
	InstanceTime attempts_total = 0;
	InstanceTime counted_total = 0;
	InstanceTime lost_total = 0;
	int			i,
				c;

	expect(d, d->n_finished == d->workload->n_jobs, "not every job finished");
	for (c = 0; c < N_CLASSES; c++)
	{
		r->classes[c].wait_minutes = malloc(sizeof(double) * (size_t) (r->classes[c].submitted + 1));
		counted_total += d->held_all[c];
		lost_total += r->classes[c].lost;
		if (r->classes[c].finished != r->classes[c].submitted)
			broken(d, "%s: %d of %d measured jobs finished", class_names[c], r->classes[c].finished,
				   r->classes[c].submitted);
	}
	for (i = 0; i < d->workload->n_jobs; i++)
	{
		const JobTrack *t = &d->track[i];
		const WorkloadJob *wj = &d->workload->jobs[i];
		ClassResult *cr = &r->classes[wj->job_class];

		if (t->finished_at - (d->start + wj->submit_at) != t->waited + t->held)
			broken(d, "job %d: finish - submission differs from waiting + placed", i + 1);
		attempts_total += (InstanceTime) wj->instances * t->held;
		r->checks++;
		if (!measured(d, i))
			continue;
		if (t->finished_at - d->measure_from > r->last_finish)
			r->last_finish = t->finished_at - d->measure_from;
		cr->wait_minutes[cr->n_waits++] = (double) t->waited / (double) FS_SECONDS(60);
	}
	expect(d, counted_total == attempts_total,
			   "instance-time counted per interval differs from the sum over attempts");
	expect(d, lost_total <= attempts_total, "more instance-time lost than held");
	expect(d, r->held_waiting <= (InstanceTime) d->config->capacity * r->waiting_time,
			   "more held while jobs waited than the capacity");
	expect(d, r->training_waiting <= r->held_waiting, "more training than held");
	expect(d, r->held_waiting + r->idle_nominated + r->idle_too_small + r->idle_other ==
			   (InstanceTime) d->config->capacity * r->waiting_time,
			   "held and idle while jobs waited do not add up to the capacity");
	expect(d, r->idle_starvation <= r->idle_nominated && r->idle_nominated_unwanted <= r->idle_nominated,
			   "a part of the room held for nominees is larger than the whole");
	expect(d, r->held_day <= (InstanceTime) d->config->capacity * d->config->day_length,
			   "more held during the day than the capacity");
	for (c = 0; c < N_CLASSES; c++)
		qsort(r->classes[c].wait_minutes, (size_t) r->classes[c].n_waits, sizeof(double), ascending);
}

static void
write_jobs(const Day *d, FILE *out)
{
	int			i;

	for (i = 0; i < d->workload->n_jobs; i++)
	{
		const WorkloadJob *wj = &d->workload->jobs[i];
		const JobTrack *t = &d->track[i];

		fprintf(out, "%s,%d,%d,%s,%d,%.1f,%.1f,%.1f,%d,%.1f\n", d->policy->key, i + 1, wj->day + 1,
				class_names[wj->job_class], wj->instances,
				(double) (d->start + wj->submit_at - d->measure_from) / FS_SECONDS(60),
				(double) t->waited / FS_SECONDS(60), (double) t->held / FS_SECONDS(60), t->attempts,
				(double) (t->finished_at - d->measure_from) / FS_SECONDS(60));
	}
}

void
simulate_day(const Workload *workload, const Policy *policy, const DayConfig *config,
			 DayResult *result, FILE *jobs)
{
	Day			d;
	int			i;

	memset(result, 0, sizeof(*result));
	result->policy = policy;
	result->seed = workload->seed;
	result->capacity = config->capacity;
	result->day_length = config->day_length;

	memset(&d, 0, sizeof(d));
	d.workload = workload;
	d.policy = policy;
	d.config = config;
	d.result = result;
	d.track = calloc((size_t) workload->n_jobs + 1, sizeof(JobTrack));
	d.stopping_for = calloc((size_t) workload->n_jobs + 1, sizeof(int64_t));

	sim_init(&d.sim);
	d.sim.prefix = WRAPPER_PREFIX;
	d.sim.wait_reasons = false;
	d.sim.requeue_keeps_place = true;
	d.sim.stop_delay = config->stop_delay;
	d.sim.checkpoint_on_stop = config->checkpoint_on_stop;
	/*
	 * The old order is the old preemption: it reclaims at once, and spares
	 * jobs younger than the old default of preemption_min_runtime.
	 */
	if (policy->victim_order == FS_VICTIMS_LATEST_STARTED)
	{
		d.sim.min_runtime = config->old_order_min_runtime;
		d.sim.reclaim_wait = 0;
	}
	else
	{
		d.sim.min_runtime = config->min_runtime;
		d.sim.reclaim_wait = config->reclaim_wait;
	}
	d.sim.starvation = config->starvation;
	d.sim.victim_order = policy->victim_order;
	policy->build(&d.sim, config->capacity, d.class_share);
	d.env = 0;
	d.type = sim_type(&d.sim, "ml.p4d.24xlarge");
	d.start = d.sim.now;
	d.measure_from = d.start + (FsTime) workload->measured_day * config->day_length;
	d.measure_to = d.measure_from + config->day_length;
	d.trace_job = config->trace_job;

	for (i = 0; i < workload->n_jobs; i++)
	{
		ClassResult *cr = &result->classes[workload->jobs[i].job_class];

		if (!measured(&d, i))
			continue;
		cr->submitted++;
		cr->demand += (InstanceTime) workload->jobs[i].instances * workload->jobs[i].run_time;
	}

	for (;;)
	{
		submit_due_jobs(&d);
		run_pass(&d);
		if (d.n_submitted == workload->n_jobs && d.n_finished == workload->n_jobs)
			break;
		if (d.sim.now - d.measure_to > config->horizon)
			broken(&d, "%d of %d jobs still unfinished at the horizon", workload->n_jobs - d.n_finished,
				   workload->n_jobs);
		advance_to(&d, next_step(&d));
	}
	finish_accounting(&d);
	if (jobs != NULL)
		write_jobs(&d, jobs);

	sim_free(&d.sim);
	if (d.sim.allocs != d.sim.frees)
		broken(&d, "the core allocated %ld blocks and freed %ld", d.sim.allocs, d.sim.frees);
	free(d.track);
	free(d.stopping_for);
}

void
day_result_free(DayResult *result)
{
	int			c;

	for (c = 0; c < N_CLASSES; c++)
	{
		free(result->classes[c].wait_minutes);
		result->classes[c].wait_minutes = NULL;
	}
}

double
percentile(const double *sorted, int n, double p)
{
	int			rank;

	if (n == 0)
		return 0;
	rank = (int) ceil(p / 100.0 * n);
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return sorted[rank - 1];
}
