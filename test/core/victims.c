/*
 * victims.c — unit and exhaustive tests of the victim order among the
 * victims docs/scheduling.md 2.6 allows: the work a stop loses (fs_lost_work()), with
 * and without checkpoints, after the rules' own order (young jobs last,
 * the share most over its limit, the lowest priority).
 */
#include <stdio.h>
#include <stdlib.h>

#include "sim.h"
#include "test.h"
#include "tests.h"

#define MINUTES(m)	FS_SECONDS(60 * (m))

/*
 * 100 instances; Over (limit 60, LEND_AND_BORROW) runs a 60-instance job of
 * priority 90 and borrows 40 more in small jobs of priority 0; Owner (limit
 * 40, LEND) holds nothing, so a job of Owner reclaims from the small jobs.
 */
typedef struct VictimWorld
{
	Sim			sim;
	int			t,
				env,
				q,
				over,
				owner,
				base;
} VictimWorld;

static void
victim_world(VictimWorld *w, FsVictimOrder order)
{
	sim_init(&w->sim);
	w->sim.victim_order = order;
	w->t = sim_type(&w->sim, "ml.p4d.24xlarge");
	w->env = sim_env(&w->sim, "P4Env");
	sim_env_limit(&w->sim, w->env, w->t, 100);
	w->q = sim_queue(&w->sim, "quota", 1, FS_POLICY_QUOTA_SHARE);
	sim_queue_env(&w->sim, w->q, w->env);
	w->over = sim_share(&w->sim, w->q, "Over");
	sim_share_limit(&w->sim, w->over, w->t, 60);
	w->owner = sim_share(&w->sim, w->q, "Owner");
	sim_share_limit(&w->sim, w->owner, w->t, 40);
	w->sim.shares[w->owner].strategy = FS_STRATEGY_LEND;
	w->base = sim_run(&w->sim, w->over, w->env, w->t, 60, 90);
}

/* A running job of Over that started `age' ago; checkpoints every `every' from `training' after it started. */
static int
borrower(VictimWorld *w, int count, int priority, FsTime age, FsTime every, FsTime training)
{
	int			j = sim_run(&w->sim, w->over, w->env, w->t, count, priority);

	w->sim.jobs[j].started_at = w->sim.now - age;
	w->sim.jobs[j].checkpoint_interval = every;
	w->sim.jobs[j].checkpoint_from = every > 0 ? w->sim.now - age + training : 0;
	return j;
}

static bool
preempted_in(Sim *sim, int job)
{
	return sim_decision(sim, FS_DECISION_PREEMPT, sim->jobs[job].id) != NULL;
}

static bool
preempted(VictimWorld *w, int job)
{
	return preempted_in(&w->sim, job);
}

static void
test_lost_work_helper(void)
{
	FsInput		in = {0};
	FsRunningJob run = {0};

	in.now = MINUTES(1000);
	run.started_at = in.now - MINUTES(67);
	CHECK_EQ(fs_lost_work(&in, &run), MINUTES(67));	/* no checkpoints: all of it */
	run.checkpoint_interval = MINUTES(30);
	CHECK_EQ(fs_lost_work(&in, &run), MINUTES(67));	/* not training yet (from 0) */
	run.checkpoint_from = in.now - MINUTES(60);	/* 7 min of startup */
	CHECK_EQ(fs_lost_work(&in, &run), MINUTES(7));	/* two checkpoints kept 60 */
	run.checkpoint_from = in.now - MINUTES(59);
	CHECK_EQ(fs_lost_work(&in, &run), MINUTES(37));	/* one kept 30 */
	run.checkpoint_from = in.now + MINUTES(1);	/* said to train later: nothing kept */
	CHECK_EQ(fs_lost_work(&in, &run), MINUTES(67));
	run.checkpoint_from = in.now - MINUTES(90);	/* before it started: never below 0 */
	CHECK_EQ(fs_lost_work(&in, &run), 0);
	run.started_at = in.now;
	CHECK_EQ(fs_lost_work(&in, &run), 0);

	/* fairshare.checkpoint_on_stop: a last checkpoint at the stop keeps all it trained */
	in.checkpoint_on_stop = true;
	run.started_at = in.now - MINUTES(67);
	run.checkpoint_from = in.now - MINUTES(59);
	CHECK_EQ(fs_lost_work(&in, &run), MINUTES(8));	/* its startup only */
	run.checkpoint_from = 0;	/* not training yet: all it ran */
	CHECK_EQ(fs_lost_work(&in, &run), MINUTES(67));
	run.checkpoint_interval = 0;	/* no CheckpointConfig: all it ran */
	run.checkpoint_from = in.now - MINUTES(59);
	CHECK_EQ(fs_lost_work(&in, &run), MINUTES(67));
}

/* With checkpoint_on_stop the reason says the victim loses only its startup. */
static void
test_victim_reason_checkpoint_on_stop(void)
{
	VictimWorld w;
	int			checkpointed,
				recent;
	const FsDecision *d;
	char		text[400];

	victim_world(&w, FS_VICTIMS_LEAST_LOST);
	w.sim.checkpoint_on_stop = true;
	checkpointed = borrower(&w, 10, 0, MINUTES(50), MINUTES(30), MINUTES(6));	/* loses 6 */
	recent = borrower(&w, 10, 0, MINUTES(10), 0, 0);	/* loses 10 */
	borrower(&w, 20, 0, MINUTES(100), 0, 0);
	sim_submit(&w.sim, w.owner, 10, 0, w.t);
	sim_pass(&w.sim);
	CHECK(preempted(&w, checkpointed));
	CHECK(!preempted(&w, recent));
	d = sim_decision(&w.sim, FS_DECISION_PREEMPT, w.sim.jobs[checkpointed].id);
	CHECK(d != NULL);
	if (d)
	{
		CHECK_EQ(d->victim_lost, MINUTES(6));
		fs_format_decision(&w.sim.input, d, text, sizeof(text));
		CHECK_CONTAINS(text, "it loses the least work: 6 minutes, its startup (CheckpointConfig: it writes "
					   "a last checkpoint when stopped)");
	}
	sim_free(&w.sim);
}

/*
 * fairshare.reclaim_wait: a reclaim that victims could make room for first
 * waits, holding the room that frees by itself, then preempts only what is
 * still short.
 */
static void
test_reclaim_wait(void)
{
	VictimWorld w;
	int			b[4],
				job,
				i,
				n;
	const FsDecision *d;
	char		text[400];

	victim_world(&w, FS_VICTIMS_LEAST_LOST);
	w.sim.reclaim_wait = MINUTES(4);
	for (i = 0; i < 4; i++)
		b[i] = borrower(&w, 10, 0, MINUTES(20 + 10 * i), 0, 0);
	job = sim_submit(&w.sim, w.owner, 20, 0, w.t);
	sim_pass(&w.sim);
	for (i = 0; i < 4; i++)
		CHECK(!preempted(&w, b[i]));
	d = sim_decision(&w.sim, FS_DECISION_NOMINATE, w.sim.jobs[job].id);
	CHECK(d != NULL);
	if (d)
	{
		CHECK(d->reclaim_waits);
		fs_format_decision(&w.sim.input, d, text, sizeof(text));
		CHECK_CONTAINS(text, "is held for this job as it frees up; what is still short after "
					   "fairshare.reclaim_wait is reclaimed");
	}

	/* one borrower ends by itself: its room is held, nothing else takes it */
	sim_advance(&w.sim, MINUTES(1));
	sim_finish(&w.sim, b[3]);
	sim_submit(&w.sim, w.over, 5, 0, w.t);
	sim_pass(&w.sim);
	CHECK_EQ(sim_held(&w.sim, w.over), 90);
	CHECK(sim_decision(&w.sim, FS_DECISION_KEEP_NOMINATION, w.sim.jobs[job].id) != NULL);
	for (i = 0; i < 3; i++)
		CHECK(!preempted(&w, b[i]));

	/* it has waited: only the 10 still short are preempted, the least lost */
	sim_advance(&w.sim, MINUTES(3));
	sim_pass(&w.sim);
	for (i = 0, n = 0; i < 3; i++)
		n += preempted(&w, b[i]);
	CHECK_EQ(n, 1);
	CHECK(preempted(&w, b[0]));
	d = sim_decision(&w.sim, FS_DECISION_NOMINATE, w.sim.jobs[job].id);
	CHECK(d != NULL && !d->reclaim_waits);
	sim_advance(&w.sim, MINUTES(2));
	sim_finish_stops(&w.sim);
	sim_pass(&w.sim);
	CHECK(sim_decision(&w.sim, FS_DECISION_PLACE, w.sim.jobs[job].id) != NULL);
	sim_free(&w.sim);

	/* without the setting it preempts at once */
	victim_world(&w, FS_VICTIMS_LEAST_LOST);
	for (i = 0; i < 4; i++)
		b[i] = borrower(&w, 10, 0, MINUTES(20 + 10 * i), 0, 0);
	job = sim_submit(&w.sim, w.owner, 20, 0, w.t);
	sim_pass(&w.sim);
	CHECK(preempted(&w, b[0]) && preempted(&w, b[1]));
	d = sim_decision(&w.sim, FS_DECISION_NOMINATE, w.sim.jobs[job].id);
	CHECK(d != NULL && !d->reclaim_waits);
	sim_free(&w.sim);
}

/* A job just past a checkpoint loses less than the most recently started one. */
static void
test_victims_least_lost_first(void)
{
	VictimWorld w;
	int			recent,
				checkpointed,
				older,
				rest;
	const FsDecision *d;
	char		text[400];

	victim_world(&w, FS_VICTIMS_LEAST_LOST);
	older = borrower(&w, 10, 0, MINUTES(60), 0, 0);	/* loses 60 min */
	checkpointed = borrower(&w, 10, 0, MINUTES(67), MINUTES(30), MINUTES(7));	/* loses 7 */
	recent = borrower(&w, 10, 0, MINUTES(10), 0, 0);	/* loses 10 */
	rest = borrower(&w, 10, 0, MINUTES(200), 0, 0);
	sim_submit(&w.sim, w.owner, 20, 0, w.t);
	sim_pass(&w.sim);
	CHECK(preempted(&w, checkpointed));
	CHECK(preempted(&w, recent));
	CHECK(!preempted(&w, older));
	CHECK(!preempted(&w, rest));
	CHECK(!preempted(&w, w.base));
	d = sim_decision(&w.sim, FS_DECISION_PREEMPT, w.sim.jobs[checkpointed].id);
	CHECK(d != NULL);
	if (d)
	{
		CHECK_EQ(d->victim_lost, MINUTES(7));
		CHECK_EQ(d->victim_checkpoint_interval, MINUTES(30));
		fs_format_decision(&w.sim.input, d, text, sizeof(text));
		CHECK_CONTAINS(text, "Over holds 100 instances, its limit is 60; of Over's jobs of priority 0 it loses "
					   "the least work: 7 minutes since its last checkpoint (CheckpointConfig, one every 30 minutes)");
	}
	d = sim_decision(&w.sim, FS_DECISION_PREEMPT, w.sim.jobs[recent].id);
	CHECK(d != NULL);
	if (d)
	{
		fs_format_decision(&w.sim.input, d, text, sizeof(text));
		CHECK_CONTAINS(text, "it loses the least work: 10 minutes, all it ran (no CheckpointConfig)");
	}
	sim_free(&w.sim);

	/* the order before checkpoints counted: the most recently started */
	victim_world(&w, FS_VICTIMS_LATEST_STARTED);
	older = borrower(&w, 10, 0, MINUTES(60), 0, 0);
	checkpointed = borrower(&w, 10, 0, MINUTES(67), MINUTES(30), MINUTES(7));
	recent = borrower(&w, 10, 0, MINUTES(10), 0, 0);
	rest = borrower(&w, 10, 0, MINUTES(200), 0, 0);
	sim_submit(&w.sim, w.owner, 20, 0, w.t);
	sim_pass(&w.sim);
	CHECK(preempted(&w, recent));
	CHECK(preempted(&w, older));
	CHECK(!preempted(&w, checkpointed));
	sim_free(&w.sim);
}

/* Lost work per instance of the need: one big job for a big need, a small one for a small need. */
static void
test_victims_lost_per_needed_instance(void)
{
	VictimWorld w;
	int			big,
				small,
				k;

	for (k = 0; k < 2; k++)
	{
		int			need = k == 0 ? 1 : 16;

		victim_world(&w, FS_VICTIMS_LEAST_LOST);
		big = borrower(&w, 16, 0, MINUTES(10), 0, 0);	/* 160 instance-minutes */
		borrower(&w, 1, 0, MINUTES(20), 0, 0);	/* 20 each */
		borrower(&w, 1, 0, MINUTES(20), 0, 0);
		small = borrower(&w, 1, 0, MINUTES(20), 0, 0);	/* the highest job_id of the three */
		borrower(&w, 21, 90, MINUTES(20), 0, 0);	/* higher priority: not a candidate first */
		sim_submit(&w.sim, w.owner, need, 0, w.t);
		sim_pass(&w.sim);
		if (need == 1)
		{
			CHECK(preempted(&w, small));
			CHECK(!preempted(&w, big));
		}
		else
		{
			CHECK(preempted(&w, big));
			CHECK(!preempted(&w, small));
		}
		CHECK_EQ(sim_count(&w.sim, FS_DECISION_PREEMPT), 1);
		sim_free(&w.sim);
	}
}

/* The rules come first: young jobs last, the share most over its limit, the lowest priority. */
static void
test_victims_rules_before_lost_work(void)
{
	VictimWorld w;
	int			young,
				high,
				low,
				third_share,
				j;

	/* lower priority first, however much more it loses */
	victim_world(&w, FS_VICTIMS_LEAST_LOST);
	high = borrower(&w, 10, 5, MINUTES(6), 0, 0);
	low = borrower(&w, 10, 0, MINUTES(300), 0, 0);
	borrower(&w, 20, 5, MINUTES(300), 0, 0);
	sim_submit(&w.sim, w.owner, 10, 0, w.t);
	sim_pass(&w.sim);
	CHECK(preempted(&w, low));
	CHECK(!preempted(&w, high));
	sim_free(&w.sim);

	/* a young job last, though it loses least */
	victim_world(&w, FS_VICTIMS_LEAST_LOST);
	young = borrower(&w, 10, 0, MINUTES(1), 0, 0);
	low = borrower(&w, 10, 0, MINUTES(300), 0, 0);
	borrower(&w, 20, 0, MINUTES(400), 0, 0);
	sim_submit(&w.sim, w.owner, 10, 0, w.t);
	sim_pass(&w.sim);
	CHECK(preempted(&w, low));
	CHECK(!preempted(&w, young));
	sim_free(&w.sim);

	/* the share most over its limit first, though another's job loses less */
	victim_world(&w, FS_VICTIMS_LEAST_LOST);
	w.sim.jobs[w.base].count = 50;	/* Over holds 50 + 10 + 10 = 70 of 60 */
	j = sim_share(&w.sim, w.q, "Third");
	sim_share_limit(&w.sim, j, w.t, 0);
	borrower(&w, 10, 0, MINUTES(300), 0, 0);
	low = borrower(&w, 10, 0, MINUTES(8), 0, 0);
	third_share = sim_run(&w.sim, j, w.env, w.t, 20, 0);	/* limit 0: infinitely over */
	w.sim.jobs[third_share].started_at = w.sim.now - MINUTES(500);
	sim_submit(&w.sim, w.owner, 20, 0, w.t);	/* 10 free, 10 to reclaim */
	sim_pass(&w.sim);
	CHECK(preempted(&w, third_share));
	CHECK(!preempted(&w, low));
	sim_free(&w.sim);
}

/*
 * Exhaustive: four borrowed jobs of 10 instances, each one of six kinds
 * (started 20, 45 or 70 minutes ago; no checkpoints, or one every 30
 * minutes after 5 minutes of startup), and a need of 10, 20 or 30: the
 * victims are exactly the jobs that lose least (ties: the more recently
 * started, then the higher job_id), whatever order the running jobs come
 * in, and the same every time.
 */
static void
test_victims_exhaustive(void)
{
	static const int ages[3] = {20, 45, 70};
	int			combo,
				need,
				checked = 0,
				wrong = 0;

	for (combo = 0; combo < 6 * 6 * 6 * 6; combo++)
	{
		for (need = 10; need <= 30; need += 10)
		{
			VictimWorld w;
			int			jobs[4];
			FsTime		lost[4];
			int			rank[4];
			int			i,
						k,
						c = combo;
			int64_t		first[4];
			int			n_first = 0;

			victim_world(&w, FS_VICTIMS_LEAST_LOST);
			for (i = 0; i < 4; i++, c /= 6)
			{
				int			kind = c % 6;

				jobs[i] = borrower(&w, 10, 0, MINUTES(ages[kind % 3]), kind >= 3 ? MINUTES(30) : 0, MINUTES(5));
			}
			sim_submit(&w.sim, w.owner, need, 0, w.t);
			sim_pass(&w.sim);
			for (i = 0; i < 4; i++)
			{
				const FsRunningJob *run = NULL;

				for (k = 0; k < w.sim.input.n_running; k++)
					if (w.sim.input.running[k].job_id == w.sim.jobs[jobs[i]].id)
						run = &w.sim.input.running[k];
				lost[i] = run ? fs_lost_work(&w.sim.input, run) : -1;
			}
			/* rank: how many go before it */
			for (i = 0; i < 4; i++)
			{
				rank[i] = 0;
				for (k = 0; k < 4; k++)
				{
					const SimJob *a = &w.sim.jobs[jobs[k]];
					const SimJob *b = &w.sim.jobs[jobs[i]];

					if (k != i && (lost[k] < lost[i] ||
								   (lost[k] == lost[i] && (a->started_at > b->started_at ||
														   (a->started_at == b->started_at && a->id > b->id)))))
						rank[i]++;
				}
			}
			for (i = 0; i < 4; i++)
				if (preempted(&w, jobs[i]) != (rank[i] < need / 10))
					wrong++;
			for (i = 0; i < w.sim.result->n_decisions; i++)
				if (w.sim.result->decisions[i].kind == FS_DECISION_PREEMPT)
					first[n_first++] = w.sim.result->decisions[i].job_id;

			/* the running jobs in reverse order, twice: the same victims, in the same order */
			for (k = 0; k < 2; k++)
			{
				FsInput		in = w.sim.input;
				FsRunningJob *reversed = malloc(sizeof(FsRunningJob) * (size_t) in.n_running);
				FsResult   *r;
				int			n = 0;

				for (i = 0; i < in.n_running; i++)
					reversed[i] = w.sim.input.running[in.n_running - 1 - i];
				in.running = reversed;
				r = fs_schedule(&in, &w.sim.allocator);
				for (i = 0; i < r->n_decisions; i++)
					if (r->decisions[i].kind == FS_DECISION_PREEMPT)
					{
						if (n >= n_first || r->decisions[i].job_id != first[n])
							wrong++;
						n++;
					}
				if (n != n_first)
					wrong++;
				fs_result_free(r, &w.sim.allocator);
				free(reversed);
			}
			checked++;
			sim_free(&w.sim);
		}
	}
	CHECK_EQ(checked, 6 * 6 * 6 * 6 * 3);
	CHECK_EQ(wrong, 0);
}

/* In-share preemption orders its victims the same way. */
static void
test_in_share_victims_least_lost(void)
{
	VictimWorld w;
	int			recent,
				checkpointed;
	const FsDecision *d;
	char		text[400];

	/* Owner at its limit 40 with its own jobs; a higher-priority job of Owner arrives */
	victim_world(&w, FS_VICTIMS_LEAST_LOST);
	w.sim.jobs[w.base].count = 60;
	w.sim.shares[w.owner].in_share_preemption = true;
	w.sim.shares[w.owner].strategy = FS_STRATEGY_LEND_AND_BORROW;
	w.sim.shares[w.owner].borrow_limit = 0;
	recent = sim_run(&w.sim, w.owner, w.env, w.t, 20, 0);
	w.sim.jobs[recent].started_at = w.sim.now - MINUTES(12);
	checkpointed = sim_run(&w.sim, w.owner, w.env, w.t, 20, 0);
	w.sim.jobs[checkpointed].started_at = w.sim.now - MINUTES(95);
	w.sim.jobs[checkpointed].checkpoint_interval = MINUTES(30);
	w.sim.jobs[checkpointed].checkpoint_from = w.sim.now - MINUTES(90);	/* kept 90: loses 5 */
	sim_submit(&w.sim, w.owner, 20, 50, w.t);
	sim_pass(&w.sim);
	CHECK(preempted(&w, checkpointed));
	CHECK(!preempted(&w, recent));
	d = sim_decision(&w.sim, FS_DECISION_PREEMPT, w.sim.jobs[checkpointed].id);
	if (d)
	{
		CHECK_EQ(d->preempt_reason, FS_PREEMPT_IN_SHARE);
		fs_format_decision(&w.sim.input, d, text, sizeof(text));
		CHECK_CONTAINS(text, "of the same quota share Owner, which has the higher scheduling_priority 50; of Owner's "
					   "jobs of priority 0 it loses the least work: 5 minutes since its last checkpoint");
	}
	sim_free(&w.sim);
}

/* A young victim says why it was taken after all. */
static void
test_young_victim_reason(void)
{
	VictimWorld w;
	int			young;
	const FsDecision *d;
	char		text[400];

	victim_world(&w, FS_VICTIMS_LEAST_LOST);
	w.sim.jobs[w.base].started_at = w.sim.now - MINUTES(2);	/* every job of Over is young */
	young = borrower(&w, 40, 0, MINUTES(1), 0, 0);
	sim_submit(&w.sim, w.owner, 10, 0, w.t);
	sim_pass(&w.sim);
	d = sim_decision(&w.sim, FS_DECISION_PREEMPT, w.sim.jobs[young].id);
	CHECK(d != NULL);
	if (d)
	{
		CHECK(d->victim_young);
		fs_format_decision(&w.sim.input, d, text, sizeof(text));
		CHECK_CONTAINS(text, "; it has run less than fairshare.preemption_min_runtime, but no older job frees the room");
	}
	sim_free(&w.sim);
}

/*
 * A reclaim from several shares above their limit: the search reads first
 * the candidates of the share most over its limit, and the others only
 * while they could hold a job before the best so far (preemption.c,
 * next_victim).  Two cases where the victim is not in that first share:
 * another share as far over its limit whose job has a lower priority, and
 * a first share whose jobs are all young.
 */
static void
test_victims_across_shares(void)
{
	for (int young_first = 0; young_first < 2; young_first++)
	{
		Sim			sim;
		int			t,
					env,
					q,
					owner,
					b,
					c,
					d;
		int			b_jobs[3],
					c_jobs[2],
					n_b;

		sim_init(&sim);
		t = sim_type(&sim, "ml.p4d.24xlarge");
		env = sim_env(&sim, "P4Env");
		sim_env_limit(&sim, env, t, 100);
		q = sim_queue(&sim, "quota", 1, FS_POLICY_QUOTA_SHARE);
		sim_queue_env(&sim, q, env);
		b = sim_share(&sim, q, "B");	/* before C: its run is read first */
		c = sim_share(&sim, q, "C");
		d = sim_share(&sim, q, "D");
		owner = sim_share(&sim, q, "Owner");
		sim_share_limit(&sim, b, t, 10);
		sim_share_limit(&sim, c, t, 10);
		sim_share_limit(&sim, d, t, 40);
		sim_share_limit(&sim, owner, t, 40);
		sim.shares[owner].strategy = FS_STRATEGY_LEND;
		/* B: 20 of 10 (as far over as C), priority 5; or 30 of 10, all young */
		n_b = young_first ? 3 : 2;
		for (int i = 0; i < n_b; i++)
		{
			b_jobs[i] = sim_run(&sim, b, env, t, 10, young_first ? 0 : 5);
			sim.jobs[b_jobs[i]].started_at = sim.now - MINUTES(young_first ? 1 : 100 + i);
		}
		for (int i = 0; i < 2; i++)
		{
			/* C: 20 of 10, priority 1 */
			c_jobs[i] = sim_run(&sim, c, env, t, 10, 1);
			sim.jobs[c_jobs[i]].started_at = sim.now - MINUTES(200 + i);
		}
		/* D fills the rest, less over its limit */
		sim.jobs[sim_run(&sim, d, env, t, young_first ? 50 : 60, 0)].started_at = sim.now - MINUTES(300);
		sim_submit(&sim, owner, 10, 0, t);
		sim_pass(&sim);
		CHECK(preempted_in(&sim, c_jobs[0]) != preempted_in(&sim, c_jobs[1]));
		for (int i = 0; i < n_b; i++)
			CHECK(!preempted_in(&sim, b_jobs[i]));
		sim_free(&sim);
	}
}

const TestCase victim_tests[] = {
	{"lost_work_helper", test_lost_work_helper},
	{"victims_least_lost_first", test_victims_least_lost_first},
	{"victims_lost_per_needed_instance", test_victims_lost_per_needed_instance},
	{"victims_rules_before_lost_work", test_victims_rules_before_lost_work},
	{"victims_across_shares", test_victims_across_shares},
	{"victims_exhaustive", test_victims_exhaustive},
	{"in_share_victims_least_lost", test_in_share_victims_least_lost},
	{"young_victim_reason", test_young_victim_reason},
	{"victim_reason_checkpoint_on_stop", test_victim_reason_checkpoint_on_stop},
	{"reclaim_wait", test_reclaim_wait},
};
const int	n_victim_tests = sizeof(victim_tests) / sizeof(victim_tests[0]);
