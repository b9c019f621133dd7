/*
 * rules.c — one unit test per scheduling rule of docs/scheduling.md, plus the
 * pure helpers (weights, decay, sentences, queue order, input check).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "sim.h"
#include "test.h"
#include "tests.h"

#define ID(i)	(sim.jobs[(i)].id)

/* One environment, one queue of the given policy, one share. */
static void
simple_world(Sim *sim, FsPolicyKind policy, int64_t num_limit, int *type, int *env,
			 int *queue, int *share)
{
	sim_init(sim);
	*type = sim_type(sim, "ml.p4d.24xlarge");
	*env = sim_env(sim, "P4Env");
	if (num_limit >= 0)
		sim_env_limit(sim, *env, FS_UNIT_NUM_INSTANCES, num_limit);
	*queue = sim_queue(sim, "queue", 1, policy);
	sim_queue_env(sim, *queue, *env);
	*share = sim_share(sim, *queue, "share");
}

/* ---------- 2.1 capacity accounting ---------- */

static void
test_limits_num_and_type(void)
{
	Sim			sim;
	int			t,
				env,
				q,
				s,
				p5,
				a,
				b,
				c;
	const FsWaitReason *w;

	simple_world(&sim, FS_POLICY_FIFO, 10, &t, &env, &q, &s);
	p5 = sim_type(&sim, "ml.p5.48xlarge");
	sim_env_limit(&sim, env, t, 6);
	a = sim_submit(&sim, s, 5, 0, t);
	b = sim_submit(&sim, s, 2, 0, t);	/* 7 > 6 of its type */
	c = sim_submit(&sim, s, 3, 0, p5);	/* p5: only NUM_INSTANCES applies */
	sim_pass(&sim);
	CHECK(sim_decision(&sim, FS_DECISION_PLACE, ID(a)) != NULL);
	CHECK(sim_decision(&sim, FS_DECISION_PLACE, ID(b)) == NULL);
	CHECK(sim_decision(&sim, FS_DECISION_PLACE, ID(c)) != NULL);
	w = sim_wait(&sim, ID(b));
	CHECK(w != NULL);
	if (w)
	{
		CHECK_EQ(w->kind, FS_WAIT_CAPACITY);
		CHECK_EQ(w->unit, t);
		CHECK_EQ(w->limit, 6);
		CHECK_EQ(w->free, 1);
	}
	CHECK_CONTAINS(sim_wait_text(&sim, ID(b)),
				   "insufficient unused capacity in P4Env for ml.p4d.24xlarge: needs 2, 1 free (ml.p4d.24xlarge limit 6, 5 in use)");
	sim_free(&sim);
}

static void
test_type_without_limit_cannot_be_placed(void)
{
	Sim			sim;
	int			t,
				env,
				q,
				s,
				p5,
				j;
	const FsDecision *d;
	char		text[256];

	simple_world(&sim, FS_POLICY_FIFO, -1, &t, &env, &q, &s);
	sim_env_limit(&sim, env, t, 10);
	p5 = sim_type(&sim, "ml.p5.48xlarge");
	j = sim_submit(&sim, s, 1, 0, p5);
	sim_pass(&sim);
	d = sim_decision(&sim, FS_DECISION_MISCONFIGURED, ID(j));
	CHECK(d != NULL);
	if (d)
	{
		fs_format_decision(&sim.input, d, text, sizeof(text));
		CHECK_CONTAINS(text, "MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE");
	}
	sim_free(&sim);
}

static void
test_stopping_jobs_occupy_capacity(void)
{
	Sim			sim;
	int			t,
				env,
				q,
				s,
				r,
				j;

	simple_world(&sim, FS_POLICY_FIFO, 10, &t, &env, &q, &s);
	r = sim_run(&sim, s, env, t, 6, 0);
	sim.jobs[r].state = SIM_STOPPING;	/* e.g. terminated, stop in progress */
	sim.jobs[r].stop_at = sim.now + FS_SECONDS(60);
	sim_run(&sim, s, env, t, 4, 0);
	j = sim_submit(&sim, s, 1, 0, t);
	sim_pass(&sim);
	CHECK(sim_decision(&sim, FS_DECISION_PLACE, ID(j)) == NULL);
	sim_advance(&sim, FS_SECONDS(60));
	sim_finish(&sim, r);
	sim_pass(&sim);
	CHECK(sim_decision(&sim, FS_DECISION_PLACE, ID(j)) != NULL);
	sim_free(&sim);
}

static void
test_misconfigured_does_not_block(void)
{
	Sim			sim;
	int			t,
				env,
				q,
				s,
				big,
				small;
	char		text[256];

	simple_world(&sim, FS_POLICY_FIFO, 10, &t, &env, &q, &s);
	sim.queues[q].strict_fifo = true;
	big = sim_submit(&sim, s, 200, 0, t);
	small = sim_submit(&sim, s, 5, 0, t);
	sim_pass(&sim);
	CHECK(sim_decision(&sim, FS_DECISION_MISCONFIGURED, ID(big)) != NULL);
	CHECK(sim_decision(&sim, FS_DECISION_PLACE, ID(small)) != NULL);
	fs_format_wait_reason(&sim.input, sim_wait(&sim, ID(big)), text, sizeof(text));
	CHECK_CONTAINS(text, "MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE - the job needs 200 instances");
	CHECK_CONTAINS(text, "at most 10");
	sim_free(&sim);
}

static void
test_disabled_environment(void)
{
	Sim			sim;
	int			t,
				env,
				env2,
				q,
				s,
				j,
				k;
	const FsDecision *d;

	simple_world(&sim, FS_POLICY_FIFO, 10, &t, &env, &q, &s);
	env2 = sim_env(&sim, "Spare");
	sim_env_limit(&sim, env2, t, 10);
	sim_queue_env(&sim, q, env2);
	sim.envs[env].enabled = false;
	sim_run(&sim, s, env, t, 2, 0);	/* still counts there */
	j = sim_submit(&sim, s, 4, 0, t);
	sim_pass(&sim);
	d = sim_decision(&sim, FS_DECISION_PLACE, ID(j));
	CHECK_EQ(d ? d->environment : -1, env2);

	sim.envs[env2].enabled = false;
	k = sim_submit(&sim, s, 4, 0, t);
	sim_pass(&sim);
	CHECK_EQ(sim_count(&sim, FS_DECISION_PLACE), 0);
	CHECK_EQ(sim_wait(&sim, ID(k)) ? (int) sim_wait(&sim, ID(k))->kind : -1, FS_WAIT_ENVIRONMENT_DISABLED);
	CHECK_CONTAINS(sim_wait_text(&sim, ID(k)), "service environment P4Env is DISABLED");
	sim_free(&sim);
}

/* ---------- 2.3 order between queues ---------- */

static void
test_queue_ties_by_name(void)
{
	Sim			sim;
	int			t,
				env,
				qb,
				qa,
				sa,
				sb,
				ja,
				jb;

	sim_init(&sim);
	t = sim_type(&sim, "ml.p4d.24xlarge");
	env = sim_env(&sim, "P4Env");
	sim_env_limit(&sim, env, t, 5);
	qb = sim_queue(&sim, "bravo", 5, FS_POLICY_FIFO);
	qa = sim_queue(&sim, "alpha", 5, FS_POLICY_FIFO);
	sim_queue_env(&sim, qa, env);
	sim_queue_env(&sim, qb, env);
	sb = sim_share(&sim, qb, "bravo");
	sa = sim_share(&sim, qa, "alpha");
	jb = sim_submit(&sim, sb, 5, 0, t);
	ja = sim_submit(&sim, sa, 5, 0, t);
	sim_pass(&sim);
	CHECK(sim_decision(&sim, FS_DECISION_PLACE, ID(ja)) != NULL);
	CHECK(sim_decision(&sim, FS_DECISION_PLACE, ID(jb)) == NULL);
	sim_free(&sim);
}

/* ---------- 2.4 FIFO ---------- */

static void
test_fifo_backfill_and_order(void)
{
	Sim			sim;
	int			t,
				env,
				q,
				s,
				head,
				small,
				mid,
				late;

	simple_world(&sim, FS_POLICY_FIFO, 10, &t, &env, &q, &s);
	sim_run(&sim, s, env, t, 6, 0);
	head = sim_submit(&sim, s, 8, 0, t);
	sim_advance(&sim, FS_SECONDS(1));
	small = sim_submit(&sim, s, 2, 0, t);
	sim_advance(&sim, FS_SECONDS(1));
	mid = sim_submit(&sim, s, 3, 0, t);
	sim_advance(&sim, FS_SECONDS(1));
	late = sim_submit(&sim, s, 1, 99, t);	/* priority is not FIFO order */
	sim_pass(&sim);
	CHECK(sim_decision(&sim, FS_DECISION_PLACE, ID(head)) == NULL);
	CHECK(sim_decision(&sim, FS_DECISION_PLACE, ID(small)) != NULL);
	CHECK(sim_decision(&sim, FS_DECISION_PLACE, ID(mid)) == NULL);
	CHECK(sim_decision(&sim, FS_DECISION_PLACE, ID(late)) != NULL);
	CHECK_EQ(sim.result->decisions[0].job_id, ID(small));
	sim_free(&sim);
}

static void
test_strict_fifo(void)
{
	Sim			sim;
	int			t,
				env,
				q,
				s,
				head,
				small;
	const FsWaitReason *w;

	simple_world(&sim, FS_POLICY_FIFO, 10, &t, &env, &q, &s);
	sim.queues[q].strict_fifo = true;
	sim_run(&sim, s, env, t, 6, 0);
	head = sim_submit(&sim, s, 8, 0, t);
	sim_advance(&sim, FS_SECONDS(1));
	small = sim_submit(&sim, s, 2, 0, t);
	sim_pass(&sim);
	CHECK_EQ(sim_count(&sim, FS_DECISION_PLACE), 0);
	w = sim_wait(&sim, ID(small));
	CHECK_EQ(w ? (int) w->kind : -1, FS_WAIT_STRICT_FIFO);
	CHECK_EQ(w ? w->blocked_by_job_id : -1, ID(head));
	CHECK_CONTAINS(sim_wait_text(&sim, ID(small)), "waiting behind job 2 (strict FIFO queue)");
	sim_free(&sim);
}

static void
test_fallback_order_environments_then_types(void)
{
	Sim			sim;
	int			t,
				env,
				q,
				s,
				p5,
				env2,
				j;
	const FsDecision *d;

	simple_world(&sim, FS_POLICY_FIFO, -1, &t, &env, &q, &s);
	p5 = sim_type(&sim, "ml.p5.48xlarge");
	env2 = sim_env(&sim, "Second");
	sim_queue_env(&sim, q, env2);
	sim_env_limit(&sim, env, t, 4);
	sim_env_limit(&sim, env2, p5, 4);
	sim_env_limit(&sim, env2, t, 4);
	/* prefers p5, but the first environment has only p4d: env order wins */
	j = sim_submit(&sim, s, 4, 0, p5);
	sim_job_type(&sim, j, t);
	sim_pass(&sim);
	d = sim_decision(&sim, FS_DECISION_PLACE, ID(j));
	CHECK_EQ(d ? d->environment : -1, env);
	CHECK_EQ(d ? d->instance_type : -1, t);
	j = sim_submit(&sim, s, 4, 0, p5);
	sim_job_type(&sim, j, t);
	sim_pass(&sim);
	d = sim_decision(&sim, FS_DECISION_PLACE, ID(j));
	CHECK_EQ(d ? d->environment : -1, env2);
	CHECK_EQ(d ? d->instance_type : -1, p5);
	sim_free(&sim);
}

static void
test_backoff_reason(void)
{
	Sim			sim;
	int			t,
				env,
				q,
				s,
				j;

	simple_world(&sim, FS_POLICY_FIFO, 10, &t, &env, &q, &s);
	j = sim_submit(&sim, s, 2, 0, t);
	sim.jobs[j].backoffs[0].environment = env;
	sim.jobs[j].backoffs[0].instance_type = t;
	sim.jobs[j].backoffs[0].until = sim.now + FS_SECONDS(90);
	sim.jobs[j].n_backoffs = 1;
	sim_pass(&sim);
	CHECK_EQ(sim_count(&sim, FS_DECISION_PLACE), 0);
	CHECK_CONTAINS(sim_wait_text(&sim, ID(j)),
				   "P4Env/ml.p4d.24xlarge is skipped after a capacity failure for another 90 s");
	sim_advance(&sim, FS_SECONDS(90));
	sim_pass(&sim);
	CHECK_EQ(sim_count(&sim, FS_DECISION_PLACE), 1);
	sim_free(&sim);
}

/* ---------- 2.2a starvation ---------- */

static void
test_starvation_holds_capacity(void)
{
	Sim			sim;
	int			t,
				env,
				q,
				s,
				big,
				i,
				pass;
	bool		placed = false;
	int			nominated_pass = -1;

	simple_world(&sim, FS_POLICY_FIFO, 10, &t, &env, &q, &s);
	sim.starvation = FS_SECONDS(3600);
	for (i = 0; i < 10; i++)
	{
		int			r = sim_run(&sim, s, env, t, 1, 0);

		sim.jobs[r].started_at = sim.now - FS_SECONDS(60 * i);
		sim.jobs[r].duration = FS_SECONDS(600);
	}
	big = sim_submit(&sim, s, 8, 0, t);
	/* a stream of small jobs that would back-fill every freed instance */
	for (pass = 0; pass < 200 && !placed; pass++)
	{
		int			j = sim_submit(&sim, s, 1, 0, t);

		sim.jobs[j].duration = FS_SECONDS(600);
		sim_pass(&sim);
		if (sim_decision(&sim, FS_DECISION_NOMINATE, ID(big)))
		{
			nominated_pass = pass;
			CHECK(sim.now - sim.jobs[big].runnable_at > FS_SECONDS(3600));
			CHECK_CONTAINS(sim_wait_text(&sim, ID(big)),
						   "waited longer than fairshare.starvation_seconds");
		}
		if (sim_decision(&sim, FS_DECISION_PLACE, ID(big)))
			placed = true;
		if (nominated_pass >= 0 && nominated_pass < pass && !placed)
			CHECK(sim_count(&sim, FS_DECISION_PLACE) == 0);	/* room held */
		sim_advance(&sim, FS_SECONDS(60));
	}
	CHECK(nominated_pass >= 0);
	CHECK(placed);
	sim_free(&sim);
}

/*
 * 2.2a with time limits: room held for a starving job may be back-filled by
 * a job certain to be gone before that room could be complete, and by any
 * job as far as the jobs gone by then free more than the starving job
 * needs.  Ten instances: A (a_count, gone within an hour at the latest)
 * and B (b_count, within two hours) run, the rest is free, and a job of
 * starver_count starves: its room is complete in two hours at the latest.
 */
static void
starvation_backfill_world(Sim *sim, int a_count, int b_count, int starver_count,
						  int *s, int *a, int *b, int *starver)
{
	int			t,
				env,
				q;

	simple_world(sim, FS_POLICY_FIFO, 10, &t, &env, &q, s);
	*a = sim_run(sim, *s, env, t, a_count, 0);
	sim->jobs[*a].started_at = sim->now - FS_SECONDS(600);
	sim->jobs[*a].max_occupancy = FS_SECONDS(600 + 3600);
	*b = sim_run(sim, *s, env, t, b_count, 0);
	sim->jobs[*b].started_at = sim->now - FS_SECONDS(600);
	sim->jobs[*b].max_occupancy = FS_SECONDS(600 + 7200);
	*starver = sim_submit(sim, *s, starver_count, 0, t);
	sim->jobs[*starver].runnable_at = sim->now - FS_SECONDS(2 * 3600);
	sim->jobs[*starver].nomination.kind = FS_NOMINATION_STARVATION;
	sim->jobs[*starver].nomination.environment = env;
	sim->jobs[*starver].nomination.instance_type = t;
	sim->jobs[*starver].nomination.since = sim->now - FS_SECONDS(60);
}

/* A job of `count' instances and time limit `limit' (0: none), in share s. */
static int
submit_limited(Sim *sim, int s, int count, FsTime limit)
{
	int			j = sim_submit(sim, s, count, 0, sim->jobs[0].types[0]);

	sim->jobs[j].max_occupancy = limit;
	return j;
}

/*
 * A (5) and B (4) free nine by two hours from now, one is free, and the
 * starving job needs all ten: nothing is to spare then, so only a job gone
 * by then back-fills.
 */
static void
test_starvation_backfill_by_time_limit(void)
{
	Sim			sim;
	int			s,
				a,
				b,
				starver,
				unknown,
				too_long,
				short_job;
	const FsDecision *d;

	starvation_backfill_world(&sim, 5, 4, 10, &s, &a, &b, &starver);
	unknown = submit_limited(&sim, s, 1, 0);
	too_long = submit_limited(&sim, s, 1, FS_SECONDS(3 * 3600));
	short_job = submit_limited(&sim, s, 1, FS_SECONDS(1800));
	sim_pass(&sim);
	d = sim_decision(&sim, FS_DECISION_KEEP_NOMINATION, ID(starver));
	CHECK(d != NULL && d->room_complete_by == sim.now + FS_SECONDS(7200));
	CHECK(sim_decision(&sim, FS_DECISION_PLACE, ID(unknown)) == NULL);
	CHECK(sim_decision(&sim, FS_DECISION_PLACE, ID(too_long)) == NULL);
	CHECK(sim_decision(&sim, FS_DECISION_PLACE, ID(short_job)) != NULL);
	CHECK_CONTAINS(sim_wait_text(&sim, ID(too_long)), "held");
	/* the placement says whose room it back-fills, and until when */
	d = sim_decision(&sim, FS_DECISION_PLACE, ID(short_job));
	if (d != NULL)
	{
		CHECK(d->backfill_for_job_id == ID(starver));
		CHECK(d->backfill_gone_by == sim.now + FS_SECONDS(1800));
		CHECK(d->backfill_complete_by == sim.now + FS_SECONDS(7200));
	}
	sim_free(&sim);

	/* a job placed in room no one holds back-fills nothing */
	{
		int			t,
					env,
					q,
					free_job;

		simple_world(&sim, FS_POLICY_FIFO, 10, &t, &env, &q, &s);
		a = sim_run(&sim, s, env, t, 5, 0);
		free_job = sim_submit(&sim, s, 5, 0, t);
		sim.jobs[free_job].max_occupancy = FS_SECONDS(600);
		sim_pass(&sim);
		CHECK(sim_decision(&sim, FS_DECISION_PLACE, ID(free_job)) != NULL &&
			  sim_decision(&sim, FS_DECISION_PLACE, ID(free_job))->backfill_for_job_id == 0);
		sim_free(&sim);
	}

	/* when B's end is not known, neither is when the room is complete: no back-fill */
	starvation_backfill_world(&sim, 5, 4, 8, &s, &a, &b, &starver);
	sim.jobs[b].max_occupancy = 0;
	short_job = submit_limited(&sim, s, 1, FS_SECONDS(60));
	unknown = submit_limited(&sim, s, 1, 0);
	sim_pass(&sim);
	d = sim_decision(&sim, FS_DECISION_KEEP_NOMINATION, ID(starver));
	CHECK(d != NULL && d->room_complete_by == 0);
	CHECK(sim_decision(&sim, FS_DECISION_PLACE, ID(short_job)) == NULL);
	CHECK(sim_decision(&sim, FS_DECISION_PLACE, ID(unknown)) == NULL);
	sim_free(&sim);
}

/*
 * Room the starving job will not need: A (4) and B (3) free seven by two
 * hours from now, three are free, and it needs eight -- so two of the free
 * three may go to jobs of any length, and the third only to a job gone by
 * then.
 */
static void
test_starvation_backfill_spare_room(void)
{
	Sim			sim;
	int			s,
				a,
				b,
				starver,
				long1,
				long2,
				long3,
				short_job;
	const FsDecision *d;

	starvation_backfill_world(&sim, 4, 3, 8, &s, &a, &b, &starver);
	long1 = submit_limited(&sim, s, 1, 0);
	long2 = submit_limited(&sim, s, 1, FS_SECONDS(5 * 3600));
	long3 = submit_limited(&sim, s, 1, 0);
	short_job = submit_limited(&sim, s, 1, FS_SECONDS(1800));
	sim_pass(&sim);
	CHECK(sim_decision(&sim, FS_DECISION_KEEP_NOMINATION, ID(starver)) != NULL);
	CHECK(sim_decision(&sim, FS_DECISION_PLACE, ID(long1)) != NULL);
	CHECK(sim_decision(&sim, FS_DECISION_PLACE, ID(long2)) != NULL);
	CHECK(sim_decision(&sim, FS_DECISION_PLACE, ID(long3)) == NULL);
	CHECK(sim_decision(&sim, FS_DECISION_PLACE, ID(short_job)) != NULL);
	CHECK_CONTAINS(sim_wait_text(&sim, ID(long3)), "held");
	/* a job of any length says whose room it uses, and by when that is complete */
	d = sim_decision(&sim, FS_DECISION_PLACE, ID(long1));
	if (d != NULL)
	{
		CHECK(d->backfill_for_job_id == ID(starver));
		CHECK(d->backfill_gone_by == 0);
		CHECK(d->backfill_complete_by == sim.now + FS_SECONDS(7200));
	}
	d = sim_decision(&sim, FS_DECISION_PLACE, ID(short_job));
	CHECK(d != NULL && d->backfill_gone_by == sim.now + FS_SECONDS(1800));

	/* two hours on, A, B and the short job are gone: the starving job starts */
	sim.jobs[a].duration = sim.jobs[b].duration = FS_SECONDS(600 + 3600);
	sim.jobs[short_job].duration = FS_SECONDS(1800);
	sim.jobs[long1].duration = sim.jobs[long2].duration = SIM_FOREVER;
	sim_advance(&sim, FS_SECONDS(7200));
	sim_pass(&sim);
	CHECK(sim_decision(&sim, FS_DECISION_PLACE, ID(starver)) != NULL);
	sim_free(&sim);
}

/*
 * Two starving jobs of two queues hold room on one environment: each would
 * count the same releases as its own to spare, so no job of unknown length
 * takes their room -- one gone in time still does.  Twenty instances: A
 * (8) is gone within the hour, B (8) may run for ever, four are free, and
 * both need six: A's eight and the four free are all they need between
 * them, though each alone would find two to spare.
 */
static void
test_starvation_backfill_two_starving_jobs(void)
{
	Sim			sim;
	int			t,
				env,
				q1,
				q2,
				s1,
				s2,
				a,
				b,
				starver1,
				starver2,
				unknown,
				short_job;

	sim_init(&sim);
	t = sim_type(&sim, "ml.p4d.24xlarge");
	env = sim_env(&sim, "env");
	sim_env_limit(&sim, env, -1, 20);
	q1 = sim_queue(&sim, "high", 2, FS_POLICY_FIFO);
	q2 = sim_queue(&sim, "low", 1, FS_POLICY_FIFO);
	sim_queue_env(&sim, q1, env);
	sim_queue_env(&sim, q2, env);
	s1 = sim_share(&sim, q1, "high");
	s2 = sim_share(&sim, q2, "low");
	a = sim_run(&sim, s1, env, t, 8, 0);
	b = sim_run(&sim, s1, env, t, 8, 0);
	sim.jobs[a].max_occupancy = FS_SECONDS(3600 + 3600);	/* started an hour ago */
	sim.jobs[b].max_occupancy = 0;
	starver1 = sim_submit(&sim, s1, 6, 0, t);
	starver2 = sim_submit(&sim, s2, 6, 0, t);
	for (int i = 0; i < 2; i++)
	{
		SimJob	   *j = &sim.jobs[i == 0 ? starver1 : starver2];

		j->runnable_at = sim.now - FS_SECONDS(2 * 3600);
		j->nomination.kind = FS_NOMINATION_STARVATION;
		j->nomination.environment = env;
		j->nomination.instance_type = t;
		j->nomination.since = sim.now - FS_SECONDS(60);
	}
	unknown = submit_limited(&sim, s2, 1, 0);
	short_job = submit_limited(&sim, s2, 1, FS_SECONDS(600));
	sim_pass(&sim);
	CHECK(sim_decision(&sim, FS_DECISION_KEEP_NOMINATION, ID(starver1)) != NULL);
	CHECK(sim_decision(&sim, FS_DECISION_KEEP_NOMINATION, ID(starver2)) != NULL);
	CHECK(sim_decision(&sim, FS_DECISION_PLACE, ID(unknown)) == NULL);
	CHECK(sim_decision(&sim, FS_DECISION_PLACE, ID(short_job)) != NULL);
	sim_free(&sim);
}

/*
 * The back-fill never makes the starving job start later than its hold
 * promised: A and B end early (after 10 and 20 more minutes), a stream of
 * 30-minute jobs back-fills, and the starving job still starts before the
 * two hours its hold alone guaranteed -- though later than the 20 minutes
 * it would have taken without back-fill.
 */
static void
test_starvation_backfill_keeps_the_promise(void)
{
	Sim			sim;
	int			s,
				a,
				b,
				starver,
				minute;
	FsTime		start;
	int			backfilled = 0;

	starvation_backfill_world(&sim, 5, 4, 8, &s, &a, &b, &starver);
	start = sim.now;
	sim.jobs[a].duration = FS_SECONDS(600 + 600);
	sim.jobs[b].duration = FS_SECONDS(600 + 1200);
	for (minute = 0; minute < 180 && sim.jobs[starver].state == SIM_RUNNABLE; minute++)
	{
		int			j = sim_submit(&sim, s, 1, 0, sim.jobs[a].types[0]);
		int			i;

		sim.jobs[j].duration = FS_SECONDS(1800);
		sim.jobs[j].max_occupancy = FS_SECONDS(1800);
		sim_pass(&sim);
		for (i = 0; i < sim.result->n_decisions; i++)
			if (sim.result->decisions[i].kind == FS_DECISION_PLACE &&
				sim.result->decisions[i].job_id != ID(starver))
				backfilled++;
		if (sim.jobs[starver].state == SIM_RUNNABLE)
			CHECK(sim.jobs[starver].nomination.kind == FS_NOMINATION_STARVATION);
		sim_advance(&sim, FS_SECONDS(60));
	}
	CHECK(sim.jobs[starver].state == SIM_RUNNING);
	CHECK(sim.jobs[starver].started_at <= start + FS_SECONDS(7200));
	CHECK(sim.jobs[starver].started_at > start + FS_SECONDS(1200));
	CHECK(backfilled > 0);
	sim_free(&sim);
}

static void
test_starvation_off(void)
{
	Sim			sim;
	int			t,
				env,
				q,
				s,
				big,
				pass;

	simple_world(&sim, FS_POLICY_FIFO, 4, &t, &env, &q, &s);
	sim.starvation = 0;
	sim_run(&sim, s, env, t, 1, 0);
	big = sim_submit(&sim, s, 4, 0, t);
	for (pass = 0; pass < 100; pass++)
	{
		int			j = sim_submit(&sim, s, 1, 0, t);

		sim.jobs[j].duration = FS_SECONDS(120);
		sim_pass(&sim);
		CHECK(sim_decision(&sim, FS_DECISION_NOMINATE, ID(big)) == NULL);
		sim_advance(&sim, FS_SECONDS(100));
	}
	sim_free(&sim);
}

/* ---------- 2.5 fair share ---------- */

static void
test_fair_placements_count_into_usage(void)
{
	Sim			sim;
	int			t,
				env,
				q,
				a,
				b,
				i;

	simple_world(&sim, FS_POLICY_FAIR_SHARE, 8, &t, &env, &q, &a);
	b = sim_share(&sim, q, "other");
	for (i = 0; i < 10; i++)
	{
		sim_submit(&sim, a, 1, 0, t);
		sim_submit(&sim, b, 1, 0, t);
	}
	sim_pass(&sim);
	CHECK_EQ(sim_held(&sim, a), 4);
	CHECK_EQ(sim_held(&sim, b), 4);
	CHECK(fabs(sim.result->share_usage[a] - 4.0) < 1e-9);
	sim_free(&sim);
}

static void
test_fair_backfill_and_priority(void)
{
	Sim			sim;
	int			t,
				env,
				q,
				a,
				b,
				big,
				lowprio,
				highprio,
				small;

	simple_world(&sim, FS_POLICY_FAIR_SHARE, 4, &t, &env, &q, &a);
	b = sim_share(&sim, q, "other");
	sim.shares[b].weight = 5;	/* b goes last */
	big = sim_submit(&sim, a, 6, 50, t);	/* a's best job never fits */
	lowprio = sim_submit(&sim, a, 1, 0, t);
	highprio = sim_submit(&sim, a, 1, 10, t);
	small = sim_submit(&sim, b, 2, 0, t);
	sim_pass(&sim);
	CHECK(sim_decision(&sim, FS_DECISION_MISCONFIGURED, ID(big)) != NULL);
	CHECK(sim_decision(&sim, FS_DECISION_PLACE, ID(lowprio)) != NULL);
	CHECK(sim_decision(&sim, FS_DECISION_PLACE, ID(highprio)) != NULL);
	CHECK(sim_decision(&sim, FS_DECISION_PLACE, ID(small)) != NULL);
	CHECK_EQ(sim.result->decisions[1].job_id, ID(highprio));
	sim_free(&sim);
}

static void
test_fair_compute_reservation(void)
{
	Sim			sim;
	int			t,
				env,
				q,
				a,
				b,
				i,
				jb;

	simple_world(&sim, FS_POLICY_FAIR_SHARE, 100, &t, &env, &q, &a);
	sim.queues[q].compute_reservation = 50;
	b = sim_share(&sim, q, "newcomer");
	sim_run(&sim, a, env, t, 10, 0);
	for (i = 0; i < 100; i++)
		sim_submit(&sim, a, 1, 0, t);
	/* one active share: floor(100 x 0.5^1) = 50 are kept */
	sim_pass(&sim);
	CHECK_EQ(sim_held(&sim, a), 50);
	CHECK_CONTAINS(sim_wait_text(&sim, sim.jobs[sim.n_jobs - 1].id), "compute reservation: 50 of 100");
	/* a newcomer: two active shares, 25 kept, and the newcomer may use them */
	jb = sim_submit(&sim, b, 40, 0, t);
	sim_pass(&sim);
	CHECK(sim_decision(&sim, FS_DECISION_PLACE, ID(jb)) != NULL);
	CHECK_EQ(sim_held(&sim, a), 50);
	sim_free(&sim);
}

/*
 * The reservation is floor(total x (r/100)^active) exactly: 100 x 0.29 is
 * 28.999... in doubles, and 70% of 100 with two active shares is 48.99...
 */
static void
test_fair_compute_reservation_exact(void)
{
	static const struct
	{
		int			percent;
		int			active;		/* shares with jobs */
		int64_t		kept;
	}			cases[] = {{29, 1, 29}, {70, 2, 49}, {57, 1, 57}, {10, 3, 0}, {99, 1, 99}};

	for (int c = 0; c < (int) (sizeof(cases) / sizeof(cases[0])); c++)
	{
		Sim			sim;
		int			t,
					env,
					q,
					a,
					i;

		simple_world(&sim, FS_POLICY_FAIR_SHARE, 100, &t, &env, &q, &a);
		sim.queues[q].compute_reservation = cases[c].percent;
		sim_run(&sim, a, env, t, 1, 0);
		for (i = 1; i < cases[c].active; i++)
		{
			char		name[16];
			int			other;

			snprintf(name, sizeof(name), "other%d", i);
			other = sim_share(&sim, q, name);
			sim_run(&sim, other, env, t, 1, 0);
		}
		for (i = 0; i < 100; i++)
			sim_submit(&sim, a, 1, 0, t);
		sim_pass(&sim);
		CHECK_EQ(sim_held(&sim, a) + cases[c].active - 1, 100 - cases[c].kept);
		sim_free(&sim);
	}
}

static void
test_share_weight_helper(void)
{
	FsWeightEntry entries[] = {
		{"team-a", 3.0}, {"ml-*", 0.5}, {"ml-research-*", 2.0}, {"prod", 0.25}
	};
	FsWeightEntry bad[] = {{"team*", 1.0}, {"team-a", 2.0}};
	FsWeightEntry bad2[] = {{"x", 1.0}, {"te*", 1.0}, {"team*", 2.0}};
	FsWeightEntry good[] = {{"a*", 1.0}, {"b*", 1.0}, {"c", 1.0}};
	int			x,
				y;

	CHECK(fs_share_weight(entries, 4, "team-a") == 3.0);
	CHECK(fs_share_weight(entries, 4, "team-b") == 1.0);
	CHECK(fs_share_weight(entries, 4, "ml-vision") == 0.5);
	CHECK(fs_share_weight(entries, 4, "ml-research-nlp") == 2.0);
	CHECK(fs_share_weight(entries, 4, "prod") == 0.25);
	CHECK(fs_share_weight(entries, 4, "production") == 1.0);
	CHECK(fs_share_weight(NULL, 0, "x") == 1.0);
	CHECK(fs_share_entries_overlap(bad, 2, &x, &y));
	CHECK(x == 0 && y == 1);
	CHECK(fs_share_entries_overlap(bad2, 3, &x, &y));
	CHECK(x == 1 && y == 2);
	CHECK(!fs_share_entries_overlap(good, 3, &x, &y));
}

static void
test_decayed_usage_helper(void)
{
	FsTime		h = FS_SECONDS(100);
	FsTime		now = FS_SECONDS(10000);

	CHECK(fs_decayed_usage(10, now - h, now, 0, 3) == 3.0);	/* no memory */
	CHECK(fs_decayed_usage(10, 0, now, h, 3) == 3.0);	/* never stored */
	CHECK(fabs(fs_decayed_usage(10, now - h, now, h, 0) - 5.0) < 1e-9);
	CHECK(fabs(fs_decayed_usage(10, now - 2 * h, now, h, 10) - 10.0) < 1e-9);
	CHECK(fabs(fs_decayed_usage(0, now - h, now, h, 8) - 4.0) < 1e-9);
	CHECK(fs_decayed_usage(7, now, now, h, 0) == 7.0);
}

/*
 * The key each fair share's first job enters its queue's turn with, as the
 * wrapper ranks shares to load deeper heads for (fs_fair_first_keys): the
 * turn serves them in that order.
 */
static void
test_fair_first_keys(void)
{
	Sim			sim;
	FsTime		h = FS_SECONDS(3600);
	int			t,
				env,
				q,
				a,
				b,
				c,
				fifo,
				ja,
				jb,
				jc;
	int			first[8];
	int64_t		held[8];
	double		key[8];

	simple_world(&sim, FS_POLICY_FAIR_SHARE, 20, &t, &env, &q, &a);
	sim.queues[q].share_decay = h;
	b = sim_share(&sim, q, "b");
	c = sim_share(&sim, q, "c");
	fifo = sim_queue(&sim, "fifo", 0, FS_POLICY_FIFO);
	sim_queue_env(&sim, fifo, env);
	fifo = sim_share(&sim, fifo, "fifo");
	(void) sim_run(&sim, a, env, t, 3, 0);	/* a holds 3, never stored: U = 3 */
	sim.shares[b].usage = 10;	/* b held 10 an hour ago, nothing now: U = 5 */
	sim.shares[b].usage_at = sim.now - h;
	sim.shares[c].weight = 0.5;
	ja = sim_submit(&sim, a, 1, 0, t);
	jb = sim_submit(&sim, b, 2, 0, t);
	jc = sim_submit(&sim, c, 4, 0, t);
	(void) sim_submit(&sim, fifo, 1, 0, t);
	sim_pass(&sim);
	CHECK_EQ(sim.input.n_shares, 4);
	for (int s = 0; s < sim.input.n_shares; s++)
		first[s] = sim.input.shares[s].n_runnable > 0 ? sim.input.shares[s].runnable[0].instance_count : 0;
	fs_fair_first_keys(&sim.input, first, held, key);
	CHECK(fabs(key[a] - 4.0) < 1e-9);	/* (3 + 1) x 1 */
	CHECK(fabs(key[b] - 7.0) < 1e-9);	/* (5 + 2) x 1 */
	CHECK(fabs(key[c] - 2.0) < 1e-9);	/* (0 + 4) x 0.5 */
	CHECK(key[fifo] == -1);
	CHECK_EQ(held[a], 3);
	/* and the turn placed them in that order */
	CHECK_EQ(sim.result->decisions[0].job_id, ID(jc));
	CHECK_EQ(sim.result->decisions[1].job_id, ID(ja));
	CHECK_EQ(sim.result->decisions[2].job_id, ID(jb));
	sim_free(&sim);
}

/* ---------- 2.6 quota shares ---------- */

typedef struct QuotaWorld
{
	Sim			sim;
	int			t,
				env,
				q,
				s1,
				s2,
				s3;
} QuotaWorld;

static void
quota_world(QuotaWorld *w, int64_t capacity, int64_t l1, FsStrategy st1,
			int64_t l2, FsStrategy st2)
{
	sim_init(&w->sim);
	w->t = sim_type(&w->sim, "ml.p4d.24xlarge");
	w->env = sim_env(&w->sim, "P4Env");
	sim_env_limit(&w->sim, w->env, w->t, capacity);
	w->q = sim_queue(&w->sim, "quota", 1, FS_POLICY_QUOTA_SHARE);
	sim_queue_env(&w->sim, w->q, w->env);
	w->s1 = sim_share(&w->sim, w->q, "ProdExp1");
	sim_share_limit(&w->sim, w->s1, w->t, l1);
	w->sim.shares[w->s1].strategy = st1;
	w->s2 = sim_share(&w->sim, w->q, "ProdExp2");
	sim_share_limit(&w->sim, w->s2, w->t, l2);
	w->sim.shares[w->s2].strategy = st2;
	w->s3 = -1;
}

static void
test_reserve_is_not_borrowed(void)
{
	QuotaWorld	w;
	int			i,
				last = 0;

	quota_world(&w, 100, 60, FS_STRATEGY_LEND_AND_BORROW, 40, FS_STRATEGY_RESERVE);
	sim_run(&w.sim, w.s2, w.env, w.t, 10, 0);
	for (i = 0; i < 20; i++)
		last = sim_submit(&w.sim, w.s1, 5, 0, w.t);
	sim_pass(&w.sim);
	CHECK_EQ(sim_held(&w.sim, w.s1), 60);	/* 30 kept for ProdExp2 */
	CHECK_CONTAINS(sim_wait_text(&w.sim, w.sim.jobs[last].id),
				   "unused quota of RESERVE shares is kept in P4Env");
	CHECK_CONTAINS(sim_wait_text(&w.sim, w.sim.jobs[last].id), "30 kept for RESERVE shares");
	sim_free(&w.sim);
}

static void
test_lend_does_not_borrow(void)
{
	QuotaWorld	w;
	int			j;
	const FsWaitReason *r;

	quota_world(&w, 100, 60, FS_STRATEGY_LEND, 40, FS_STRATEGY_LEND);
	sim_run(&w.sim, w.s1, w.env, w.t, 55, 0);
	j = sim_submit(&w.sim, w.s1, 10, 0, w.t);
	sim_pass(&w.sim);
	CHECK_EQ(sim_count(&w.sim, FS_DECISION_PLACE), 0);
	r = sim_wait(&w.sim, w.sim.jobs[j].id);
	CHECK_EQ(r ? (int) r->kind : -1, FS_WAIT_SHARE_LIMIT);
	CHECK_CONTAINS(sim_wait_text(&w.sim, w.sim.jobs[j].id),
				   "insufficient unused quota in ProdExp1 for ml.p4d.24xlarge: needs 10, 5 free of its limit 60");
	CHECK_CONTAINS(sim_wait_text(&w.sim, w.sim.jobs[j].id), "LEND shares do not borrow");
	sim_free(&w.sim);
}

static void
test_borrow_limit(void)
{
	QuotaWorld	w;
	int			i;

	quota_world(&w, 200, 60, FS_STRATEGY_LEND_AND_BORROW, 40, FS_STRATEGY_LEND);
	w.sim.shares[w.s1].borrow_limit = 50;	/* at most 90 */
	for (i = 0; i < 30; i++)
		sim_submit(&w.sim, w.s1, 5, 0, w.t);
	sim_pass(&w.sim);
	CHECK_EQ(sim_held(&w.sim, w.s1), 90);
	CHECK_CONTAINS(sim_wait_text(&w.sim, w.sim.jobs[29].id), "the most it may hold, 90");
	w.sim.shares[w.s1].borrow_limit = 0;	/* lends, borrows nothing */
	sim_advance(&w.sim, FS_SECONDS(1));
	sim_pass(&w.sim);
	CHECK_EQ(sim_count(&w.sim, FS_DECISION_PLACE), 0);
	sim_free(&w.sim);
}

static void
test_victims_most_over_limit_first(void)
{
	QuotaWorld	w;
	int			a,
				b,
				j;
	const FsDecision *v;

	/* env 110: ProdExp1 (limit 50) holds 30 and wants 20 more;
	 * ProdExp2 (limit 20) holds 50 (2.5x), ProdExp3 (limit 10) holds 30 (3x) */
	quota_world(&w, 110, 50, FS_STRATEGY_LEND_AND_BORROW, 20, FS_STRATEGY_LEND_AND_BORROW);
	w.s3 = sim_share(&w.sim, w.q, "ProdExp3");
	sim_share_limit(&w.sim, w.s3, w.t, 10);
	sim_run(&w.sim, w.s1, w.env, w.t, 30, 0);
	for (a = 0; a < 5; a++)
		sim_run(&w.sim, w.s2, w.env, w.t, 10, 0);
	for (b = 0; b < 3; b++)
		sim_run(&w.sim, w.s3, w.env, w.t, 10, 0);
	j = sim_submit(&w.sim, w.s1, 20, 0, w.t);
	sim_pass(&w.sim);
	/* 3x first: one of ProdExp3's (2x after it), then ProdExp2 (2.5x) */
	CHECK_EQ(sim_count(&w.sim, FS_DECISION_PREEMPT), 2);
	v = &w.sim.result->decisions[0];
	CHECK_EQ(v->kind, FS_DECISION_PREEMPT);
	CHECK_EQ(v->share, w.s3);
	v = &w.sim.result->decisions[1];
	CHECK_EQ(v->share, w.s2);
	CHECK(sim_decision(&w.sim, FS_DECISION_NOMINATE, w.sim.jobs[j].id) != NULL);
	sim_free(&w.sim);
}

static void
test_victims_only_above_limit(void)
{
	QuotaWorld	w;
	int			j;

	/* nobody above the limit: the guaranteed job waits, nothing preempted */
	quota_world(&w, 100, 60, FS_STRATEGY_LEND_AND_BORROW, 60, FS_STRATEGY_LEND_AND_BORROW);
	sim_run(&w.sim, w.s1, w.env, w.t, 50, 0);
	sim_run(&w.sim, w.s2, w.env, w.t, 50, 0);
	j = sim_submit(&w.sim, w.s1, 10, 0, w.t);
	sim_pass(&w.sim);
	CHECK_EQ(sim_count(&w.sim, FS_DECISION_PREEMPT), 0);
	CHECK(sim_wait(&w.sim, w.sim.jobs[j].id) != NULL);
	sim_free(&w.sim);
}

static void
test_no_preemption_that_does_not_fit(void)
{
	QuotaWorld	w;
	int			other_queue,
				other,
				j,
				i;

	/*
	 * 100 instances: ProdExp1 (limit 70) holds 40, ProdExp2 (limit 30) holds
	 * 40 in jobs of 10, another queue holds 20.  ProdExp1 wants 30 within its
	 * guarantee, but ProdExp2 is only 10 over its limit: preempting it would
	 * not make the job fit, so nothing is preempted.
	 */
	quota_world(&w, 100, 70, FS_STRATEGY_LEND_AND_BORROW, 30, FS_STRATEGY_LEND_AND_BORROW);
	other_queue = sim_queue(&w.sim, "other", 0, FS_POLICY_FIFO);
	sim_queue_env(&w.sim, other_queue, w.env);
	other = sim_share(&w.sim, other_queue, "other");
	sim_run(&w.sim, other, w.env, w.t, 20, 0);
	sim_run(&w.sim, w.s1, w.env, w.t, 40, 0);
	for (i = 0; i < 4; i++)
		sim_run(&w.sim, w.s2, w.env, w.t, 10, 0);
	j = sim_submit(&w.sim, w.s1, 30, 0, w.t);
	sim_pass(&w.sim);
	CHECK_EQ(sim_count(&w.sim, FS_DECISION_PREEMPT), 0);
	CHECK(sim_decision(&w.sim, FS_DECISION_NOMINATE, w.sim.jobs[j].id) == NULL);

	/* a job of 10 is another matter: one victim brings ProdExp2 to its limit */
	j = sim_submit(&w.sim, w.s1, 10, 1, w.t);
	sim_pass(&w.sim);
	CHECK_EQ(sim_count(&w.sim, FS_DECISION_PREEMPT), 1);
	CHECK(sim_decision(&w.sim, FS_DECISION_NOMINATE, w.sim.jobs[j].id) != NULL);
	sim_free(&w.sim);
}

static void
test_min_runtime_preference(void)
{
	QuotaWorld	w;
	int			young,
				old,
				j;

	quota_world(&w, 100, 60, FS_STRATEGY_LEND_AND_BORROW, 40, FS_STRATEGY_LEND);
	sim_run(&w.sim, w.s1, w.env, w.t, 60, 90);
	young = sim_run(&w.sim, w.s1, w.env, w.t, 10, 0);
	w.sim.jobs[young].started_at = w.sim.now - FS_SECONDS(10);	/* younger than 300 s */
	old = sim_run(&w.sim, w.s1, w.env, w.t, 10, 50);	/* higher priority, but old */
	sim_run(&w.sim, w.s2, w.env, w.t, 20, 0);
	j = sim_submit(&w.sim, w.s2, 10, 0, w.t);
	sim_pass(&w.sim);
	CHECK(sim_decision(&w.sim, FS_DECISION_PREEMPT, w.sim.jobs[old].id) != NULL);
	CHECK(sim_decision(&w.sim, FS_DECISION_PREEMPT, w.sim.jobs[young].id) == NULL);
	(void) j;
	sim_free(&w.sim);

	/* when only the young job frees the room, it is the victim */
	quota_world(&w, 90, 60, FS_STRATEGY_LEND_AND_BORROW, 40, FS_STRATEGY_LEND);
	w.s3 = sim_share(&w.sim, w.q, "NoQuota");
	sim_share_limit(&w.sim, w.s3, w.t, 0);
	sim_run(&w.sim, w.s1, w.env, w.t, 60, 0);	/* at its limit: not a victim */
	young = sim_run(&w.sim, w.s3, w.env, w.t, 10, 0);
	w.sim.jobs[young].started_at = w.sim.now - FS_SECONDS(10);
	sim_run(&w.sim, w.s2, w.env, w.t, 20, 0);
	sim_submit(&w.sim, w.s2, 10, 0, w.t);
	sim_pass(&w.sim);
	CHECK(sim_decision(&w.sim, FS_DECISION_PREEMPT, w.sim.jobs[young].id) != NULL);
	sim_free(&w.sim);
}

static void
test_reverse_walk_drops_unneeded(void)
{
	QuotaWorld	w;
	int			small,
				big,
				j;

	/* victim order takes the small low-priority job first, then the big one;
	 * the big one alone is enough, so the small one is dropped again */
	quota_world(&w, 100, 60, FS_STRATEGY_LEND_AND_BORROW, 40, FS_STRATEGY_LEND);
	sim_run(&w.sim, w.s1, w.env, w.t, 57, 10);
	small = sim_run(&w.sim, w.s1, w.env, w.t, 3, 0);
	big = sim_run(&w.sim, w.s1, w.env, w.t, 20, 5);
	sim_run(&w.sim, w.s2, w.env, w.t, 20, 0);
	j = sim_submit(&w.sim, w.s2, 10, 0, w.t);
	sim_pass(&w.sim);
	CHECK(sim_decision(&w.sim, FS_DECISION_PREEMPT, w.sim.jobs[big].id) != NULL);
	CHECK(sim_decision(&w.sim, FS_DECISION_PREEMPT, w.sim.jobs[small].id) == NULL);
	CHECK_EQ(sim_count(&w.sim, FS_DECISION_PREEMPT), 1);
	(void) j;
	sim_free(&w.sim);
}

static void
test_nominated_room_is_held(void)
{
	QuotaWorld	w;
	int			j,
				other,
				k;

	/* 100: ProdExp1 holds 75 (limit 60), ProdExp2 20 (limit 40), 5 free */
	quota_world(&w, 100, 60, FS_STRATEGY_LEND_AND_BORROW, 40, FS_STRATEGY_LEND);
	sim_run(&w.sim, w.s1, w.env, w.t, 45, 0);
	sim_run(&w.sim, w.s1, w.env, w.t, 15, 0);
	sim_run(&w.sim, w.s1, w.env, w.t, 15, 0);
	sim_run(&w.sim, w.s2, w.env, w.t, 20, 0);
	j = sim_submit(&w.sim, w.s2, 20, 0, w.t);	/* 5 free + 15 from a victim */
	sim_pass(&w.sim);
	CHECK_EQ(sim_count(&w.sim, FS_DECISION_PREEMPT), 1);
	/* a borrower arriving now can take neither the 5 free nor the 15 */
	other = sim_submit(&w.sim, w.s1, 5, 0, w.t);
	sim_advance(&w.sim, FS_SECONDS(1));
	sim_pass(&w.sim);
	CHECK(sim_decision(&w.sim, FS_DECISION_PLACE, w.sim.jobs[other].id) == NULL);
	CHECK_CONTAINS(sim_wait_text(&w.sim, w.sim.jobs[other].id), "is held for job 5");
	CHECK_CONTAINS(sim_wait_text(&w.sim, w.sim.jobs[j].id),
				   "is held for this job; waiting for 15 instances of preempted jobs to stop");
	sim_finish_stops(&w.sim);
	sim_pass(&w.sim);
	CHECK(sim_decision(&w.sim, FS_DECISION_PLACE, w.sim.jobs[j].id) != NULL);
	CHECK(sim_decision(&w.sim, FS_DECISION_PLACE, w.sim.jobs[other].id) == NULL);
	CHECK_EQ(sim_held(&w.sim, w.s2), 40);

	/* victims that free more than needed: the surplus is nobody's */
	k = sim_submit(&w.sim, w.s1, 1, 0, w.t);
	(void) k;
	sim_free(&w.sim);
}

static void
test_lowered_limit_makes_excess_preemptible(void)
{
	QuotaWorld	w;
	int			j;

	quota_world(&w, 100, 60, FS_STRATEGY_LEND_AND_BORROW, 40, FS_STRATEGY_LEND_AND_BORROW);
	sim_run(&w.sim, w.s1, w.env, w.t, 30, 0);
	sim_run(&w.sim, w.s1, w.env, w.t, 30, 0);
	sim_run(&w.sim, w.s2, w.env, w.t, 40, 0);
	sim_pass(&w.sim);
	CHECK_EQ(sim_count(&w.sim, FS_DECISION_PREEMPT), 0);
	/* ProdExp1 loses 30 of its limit, ProdExp2 gains them */
	sim_share_limit(&w.sim, w.s1, w.t, 30);
	sim_share_limit(&w.sim, w.s2, w.t, 70);
	j = sim_submit(&w.sim, w.s2, 30, 0, w.t);
	sim_pass(&w.sim);
	CHECK_EQ(sim_count(&w.sim, FS_DECISION_PREEMPT), 1);
	sim_finish_stops(&w.sim);
	sim_pass(&w.sim);
	CHECK(sim_decision(&w.sim, FS_DECISION_PLACE, w.sim.jobs[j].id) != NULL);
	CHECK_EQ(sim_held(&w.sim, w.s1), 30);
	sim_free(&w.sim);
}

static void
test_guaranteed_before_borrowers_and_by_priority(void)
{
	QuotaWorld	w;
	int			borrow,
				low,
				high;

	quota_world(&w, 20, 10, FS_STRATEGY_LEND_AND_BORROW, 10, FS_STRATEGY_LEND_AND_BORROW);
	sim_run(&w.sim, w.s1, w.env, w.t, 10, 0);
	borrow = sim_submit(&w.sim, w.s1, 5, 99, w.t);	/* a borrower, however high */
	sim_advance(&w.sim, FS_SECONDS(1));
	low = sim_submit(&w.sim, w.s2, 5, 1, w.t);
	high = sim_submit(&w.sim, w.s2, 5, 2, w.t);
	sim_pass(&w.sim);
	CHECK(sim_decision(&w.sim, FS_DECISION_PLACE, w.sim.jobs[borrow].id) == NULL);
	CHECK_EQ(w.sim.result->decisions[0].job_id, w.sim.jobs[high].id);
	CHECK_EQ(w.sim.result->decisions[1].job_id, w.sim.jobs[low].id);
	sim_free(&w.sim);
}

static void
test_idle_assignment_fifo_and_fair(void)
{
	QuotaWorld	w;
	int			a,
				b;

	/* FIFO: the offer that has waited longest */
	quota_world(&w, 30, 10, FS_STRATEGY_LEND_AND_BORROW, 10, FS_STRATEGY_LEND_AND_BORROW);
	w.s3 = sim_share(&w.sim, w.q, "Idle");
	sim_share_limit(&w.sim, w.s3, w.t, 10);
	sim_run(&w.sim, w.s1, w.env, w.t, 10, 0);
	sim_run(&w.sim, w.s1, w.env, w.t, 5, 0);	/* ProdExp1 already borrows 5 */
	sim_run(&w.sim, w.s2, w.env, w.t, 10, 0);
	a = sim_submit(&w.sim, w.s1, 5, 0, w.t);
	sim_advance(&w.sim, FS_SECONDS(1));
	b = sim_submit(&w.sim, w.s2, 5, 0, w.t);
	sim_pass(&w.sim);
	CHECK(sim_decision(&w.sim, FS_DECISION_PLACE, w.sim.jobs[a].id) != NULL);
	CHECK(sim_decision(&w.sim, FS_DECISION_PLACE, w.sim.jobs[b].id) == NULL);
	sim_free(&w.sim);

	/* FAIR: the share that borrows least (relative to its weight) */
	quota_world(&w, 30, 10, FS_STRATEGY_LEND_AND_BORROW, 10, FS_STRATEGY_LEND_AND_BORROW);
	w.sim.queues[w.q].idle_assignment = FS_IDLE_FAIR;
	w.s3 = sim_share(&w.sim, w.q, "Idle");
	sim_share_limit(&w.sim, w.s3, w.t, 10);
	sim_run(&w.sim, w.s1, w.env, w.t, 10, 0);
	sim_run(&w.sim, w.s1, w.env, w.t, 5, 0);
	sim_run(&w.sim, w.s2, w.env, w.t, 10, 0);
	a = sim_submit(&w.sim, w.s1, 5, 0, w.t);
	sim_advance(&w.sim, FS_SECONDS(1));
	b = sim_submit(&w.sim, w.s2, 5, 0, w.t);
	sim_pass(&w.sim);
	CHECK(sim_decision(&w.sim, FS_DECISION_PLACE, w.sim.jobs[a].id) == NULL);
	CHECK(sim_decision(&w.sim, FS_DECISION_PLACE, w.sim.jobs[b].id) != NULL);
	sim_free(&w.sim);
}

static void
test_in_share_victim_order(void)
{
	QuotaWorld	w;
	int			older,
				newer,
				j;

	/* equal lowest priority: the most recently started goes first */
	quota_world(&w, 40, 40, FS_STRATEGY_LEND, 0, FS_STRATEGY_LEND);
	w.sim.shares[w.s1].in_share_preemption = true;
	sim_run(&w.sim, w.s1, w.env, w.t, 20, 50);
	older = sim_run(&w.sim, w.s1, w.env, w.t, 10, 1);
	newer = sim_run(&w.sim, w.s1, w.env, w.t, 10, 1);
	w.sim.jobs[newer].started_at = w.sim.jobs[older].started_at + FS_SECONDS(60);
	j = sim_submit(&w.sim, w.s1, 10, 20, w.t);
	sim_pass(&w.sim);
	CHECK(sim_decision(&w.sim, FS_DECISION_PREEMPT, w.sim.jobs[newer].id) != NULL);
	CHECK_EQ(sim_count(&w.sim, FS_DECISION_PREEMPT), 1);
	/* not for a job of equal or lower priority */
	sim_finish_stops(&w.sim);
	sim_pass(&w.sim);
	CHECK(sim_decision(&w.sim, FS_DECISION_PLACE, w.sim.jobs[j].id) != NULL);
	sim_advance(&w.sim, FS_SECONDS(10));
	sim_pass(&w.sim);
	CHECK_EQ(sim_count(&w.sim, FS_DECISION_PREEMPT), 0);
	sim_free(&w.sim);
}

static void
test_nomination_dropped_when_env_disabled(void)
{
	QuotaWorld	w;
	int			j;

	quota_world(&w, 100, 60, FS_STRATEGY_LEND_AND_BORROW, 40, FS_STRATEGY_LEND);
	sim_run(&w.sim, w.s1, w.env, w.t, 80, 0);
	sim_run(&w.sim, w.s2, w.env, w.t, 20, 0);
	j = sim_submit(&w.sim, w.s2, 20, 0, w.t);
	sim_pass(&w.sim);
	CHECK(sim_decision(&w.sim, FS_DECISION_NOMINATE, w.sim.jobs[j].id) != NULL);
	w.sim.envs[w.env].enabled = false;
	sim_pass(&w.sim);
	CHECK(sim_decision(&w.sim, FS_DECISION_DROP_NOMINATION, w.sim.jobs[j].id) != NULL);
	CHECK_EQ(w.sim.jobs[j].nomination.kind, FS_NOMINATION_NONE);
	sim_free(&w.sim);
}

/* ---------- helpers ---------- */

static void
test_queue_order(void)
{
	Sim			sim;
	int			t,
				env,
				q,
				a,
				b,
				n,
				j1,
				j2,
				j3,
				j4;
	FsOrderEntry *order;

	/* fair share: a (weight 1) gets two picks for b's (weight 2) one */
	simple_world(&sim, FS_POLICY_FAIR_SHARE, 1, &t, &env, &q, &a);
	b = sim_share(&sim, q, "other");
	sim.shares[b].weight = 2;
	j1 = sim_submit(&sim, a, 1, 0, t);
	j2 = sim_submit(&sim, a, 1, 0, t);
	j3 = sim_submit(&sim, b, 1, 0, t);
	j4 = sim_submit(&sim, a, 1, 0, t);
	sim_pass(&sim);				/* j1 placed */
	sim_pass(&sim);				/* and running */
	n = fs_queue_order(&sim.input, q, 0, &sim.allocator, &order);
	CHECK_EQ(n, 3);				/* j1 was placed: three are left */
	if (n == 3)
	{
		/* a holds 1: (1+1) x 1 = 2 ties (0+1) x 2 = 2; j2 has the lower id */
		CHECK_EQ(order[0].job_id, ID(j2));
		CHECK_EQ(order[1].job_id, ID(j3));
		CHECK_EQ(order[2].job_id, ID(j4));
		CHECK_EQ(order[2].position, 3);
	}
	free(order);
	n = fs_queue_order(&sim.input, q, 2, &sim.allocator, &order);
	CHECK_EQ(n, 2);
	free(order);
	(void) j1;
	sim_free(&sim);
}

static void
test_more_jobs_needed(void)
{
	Sim			sim;
	int			t,
				env,
				q,
				s,
				i;

	simple_world(&sim, FS_POLICY_FIFO, 10, &t, &env, &q, &s);
	sim.prefix = 3;
	for (i = 0; i < 8; i++)
		sim_submit(&sim, s, 1, 0, t);
	sim_pass(&sim);
	CHECK_EQ(sim_count(&sim, FS_DECISION_PLACE), 3);
	CHECK(sim.result->more_jobs_needed);
	sim_pass(&sim);
	sim_pass(&sim);
	CHECK_EQ(sim_count(&sim, FS_DECISION_PLACE), 2);
	sim_pass(&sim);
	CHECK(!sim.result->more_jobs_needed);
	sim_free(&sim);
}

static void
test_check_input(void)
{
	Sim			sim;
	int			t,
				env,
				q,
				s;
	char		message[200];
	int			bad_env = 7;

	simple_world(&sim, FS_POLICY_FIFO, 10, &t, &env, &q, &s);
	sim_submit(&sim, s, 1, 0, t);
	sim_pass(&sim);
	CHECK(fs_check_input(&sim.input, message, sizeof(message)));
	((FsQueue *) sim.input.queues)[0].environments = &bad_env;
	CHECK(!fs_check_input(&sim.input, message, sizeof(message)));
	CHECK_CONTAINS(message, "queue 0: environment index out of range");
	((FsQueue *) sim.input.queues)[0].environments = sim.queues[0].envs;
	sim_free(&sim);
}

/* An arena allocator without free: the core must not need free at all. */
typedef struct Arena
{
	char		buf[1 << 20];
	size_t		used;
} Arena;

static void *
arena_alloc(void *ctx, size_t size)
{
	Arena	   *a = ctx;
	void	   *p;

	size = (size + 15) & ~(size_t) 15;
	if (a->used + size > sizeof(a->buf))
		abort();
	p = a->buf + a->used;
	a->used += size;
	return p;
}

static void
test_arena_allocator_and_no_leaks(void)
{
	Sim			sim;
	int			t,
				env,
				q,
				s,
				i;
	static Arena arena;
	FsAllocator alloc = {arena_alloc, NULL, &arena};
	FsResult   *r;

	simple_world(&sim, FS_POLICY_FIFO, 10, &t, &env, &q, &s);
	for (i = 0; i < 50; i++)
		sim_submit(&sim, s, 1 + i % 3, 0, t);
	sim_pass(&sim);
	arena.used = 0;
	r = fs_schedule(&sim.input, &alloc);
	CHECK_EQ(r->n_decisions, sim.result->n_decisions);
	CHECK(arena.used > 0);
	sim_free(&sim);
	CHECK_EQ(sim.allocs, sim.frees);
}

/* ---------- rules found by the property tests ---------- */

static void
test_in_share_preemption_does_not_borrow_more(void)
{
	Sim			sim;
	int			t0,
				t1,
				env,
				q,
				s,
				i,
				j,
				low_t1 = -1;

	/*
	 * The share may hold 12 in all and 6 of type t1, and holds 8 of t0 and 6
	 * of t1 (priority 9).  A priority-5 job of t1 would fit if two t0 jobs
	 * were stopped -- but then the share would hold 8 of t1, borrowing more,
	 * to be reclaimed by the next lender: no preemption.
	 */
	sim_init(&sim);
	t0 = sim_type(&sim, "ml.t0");
	t1 = sim_type(&sim, "ml.t1");
	env = sim_env(&sim, "Env");
	sim_env_limit(&sim, env, FS_UNIT_NUM_INSTANCES, 14);
	q = sim_queue(&sim, "quota", 1, FS_POLICY_QUOTA_SHARE);
	sim_queue_env(&sim, q, env);
	s = sim_share(&sim, q, "Share");
	sim_share_limit(&sim, s, FS_UNIT_NUM_INSTANCES, 12);
	sim_share_limit(&sim, s, t1, 6);
	sim.shares[s].in_share_preemption = true;
	for (i = 0; i < 4; i++)
		sim_run(&sim, s, env, t0, 2, 0);
	for (i = 0; i < 3; i++)
		sim_run(&sim, s, env, t1, 2, 9);
	j = sim_submit(&sim, s, 2, 5, t1);
	sim_pass(&sim);
	CHECK_EQ(sim_count(&sim, FS_DECISION_PREEMPT), 0);

	/* with a lower-priority t1 job to replace, it preempts that one only */
	sim.jobs[sim.n_jobs - 2].priority = 1;
	low_t1 = sim.n_jobs - 2;
	sim_pass(&sim);
	CHECK_EQ(sim_count(&sim, FS_DECISION_PREEMPT), 1);
	CHECK(sim_decision(&sim, FS_DECISION_PREEMPT, ID(low_t1)) != NULL);
	CHECK(sim_decision(&sim, FS_DECISION_NOMINATE, ID(j)) != NULL);
	sim_free(&sim);
}

/*
 * docs/scheduling.md, 'Quota-share queues': room being stopped is held for the job it was freed for, and
 * a preemption takes only as much as the job needs.  A starving sweep
 * trial's hold ('No starvation by back-fill') claims room as it frees up, but jobs that victims
 * were stopped for are placed first in every pass (step 1), so it never
 * gets a victim's room: the victims must not be sized to cover it too.
 * The shape of --seed 17 at 19:13 in bench/simulate: an urgent
 * 32-instance production job on a full environment stopped 16 + 16 + 8.
 */
static void
test_in_share_victims_ignore_starvation_hold(void)
{
	Sim			sim;
	int			t,
				env,
				q,
				prod,
				expl,
				sweeps,
				old8,
				mid16,
				new16,
				starver,
				urgent,
				i,
				n;

	sim_init(&sim);
	t = sim_type(&sim, "ml.p4d.24xlarge");
	env = sim_env(&sim, "P4Env");
	sim_env_limit(&sim, env, t, 128);
	q = sim_queue(&sim, "quota", 1, FS_POLICY_QUOTA_SHARE);
	sim_queue_env(&sim, q, env);
	prod = sim_share(&sim, q, "production");
	expl = sim_share(&sim, q, "exploration");
	sweeps = sim_share(&sim, q, "sweeps");
	sim_share_limit(&sim, prod, t, 64);
	sim_share_limit(&sim, expl, t, 56);
	sim_share_limit(&sim, sweeps, t, 8);
	for (i = 0; i < 3; i++)
	{
		sim.shares[prod + i].strategy = FS_STRATEGY_LEND_AND_BORROW;
		sim.shares[prod + i].borrow_limit = -1;
	}
	sim.shares[prod].in_share_preemption = true;

	/* production holds 40 of its 64; the borrowers fill the rest */
	old8 = sim_run(&sim, prod, env, t, 8, 90);
	sim.jobs[old8].started_at = sim.now - FS_SECONDS(7 * 3600);
	mid16 = sim_run(&sim, prod, env, t, 16, 90);
	sim.jobs[mid16].started_at = sim.now - FS_SECONDS(70 * 60);
	new16 = sim_run(&sim, prod, env, t, 16, 90);
	sim.jobs[new16].started_at = sim.now - FS_SECONDS(24 * 60);
	for (i = 0; i < 4; i++)
		sim_run(&sim, expl, env, t, 16, 50);
	for (i = 0; i < 6; i++)
		sim_run(&sim, sweeps, env, t, 4, 10);

	/* a sweep trial that starved: room is held for it as it frees up */
	starver = sim_submit(&sim, sweeps, 4, 10, t);
	sim.jobs[starver].runnable_at = sim.now - FS_SECONDS(5 * 3600);
	sim.jobs[starver].nomination.kind = FS_NOMINATION_STARVATION;
	sim.jobs[starver].nomination.environment = env;
	sim.jobs[starver].nomination.instance_type = t;
	sim.jobs[starver].nomination.since = sim.now - FS_SECONDS(60);

	urgent = sim_submit(&sim, prod, 32, 95, t);
	sim_pass(&sim);
	CHECK(sim_decision(&sim, FS_DECISION_NOMINATE, ID(urgent)) != NULL);
	CHECK(sim_decision(&sim, FS_DECISION_PREEMPT, ID(new16)) != NULL);
	CHECK(sim_decision(&sim, FS_DECISION_PREEMPT, ID(mid16)) != NULL);
	CHECK(sim_decision(&sim, FS_DECISION_PREEMPT, ID(old8)) == NULL);
	CHECK_EQ(sim_count(&sim, FS_DECISION_PREEMPT), 2);
	CHECK(sim.jobs[starver].nomination.kind == FS_NOMINATION_STARVATION);

	/*
	 * And the 32 instances it bought are its own once they have stopped:
	 * nothing more is stopped for it.  (The two victims come back within
	 * production's guarantee and reclaim from the borrowers: that is theirs.)
	 */
	for (n = 0; n < 10 && sim.jobs[urgent].state == SIM_RUNNABLE; n++)
	{
		sim_advance(&sim, sim.stop_delay);
		sim_pass(&sim);
		for (i = 0; i < sim.result->n_decisions; i++)
			CHECK(sim.result->decisions[i].kind != FS_DECISION_PREEMPT ||
				  sim.result->decisions[i].for_job_id != ID(urgent));
	}
	CHECK(sim.jobs[urgent].state == SIM_RUNNING);
	CHECK(sim.jobs[old8].state == SIM_RUNNING);
	CHECK(sim.jobs[starver].state == SIM_RUNNABLE);
	CHECK(sim.jobs[starver].nomination.kind == FS_NOMINATION_STARVATION);
	sim_free(&sim);
}

static void
test_prefix_used_up_stops_the_pass(void)
{
	Sim			sim;
	int			t,
				env,
				q,
				a,
				b,
				lowq,
				low,
				i,
				jl;

	/* fair share, heads of 2: a's whole head is placed and a is next in line */
	simple_world(&sim, FS_POLICY_FAIR_SHARE, 10, &t, &env, &q, &a);
	b = sim_share(&sim, q, "heavy");
	sim.shares[b].weight = 5;
	lowq = sim_queue(&sim, "later", 0, FS_POLICY_FIFO);
	sim_queue_env(&sim, lowq, env);
	low = sim_share(&sim, lowq, "later");
	sim.prefix = 2;
	for (i = 0; i < 6; i++)
		sim_submit(&sim, a, 1, 0, t);
	sim_submit(&sim, b, 1, 0, t);
	jl = sim_submit(&sim, low, 1, 0, t);
	sim_pass(&sim);
	CHECK(sim.result->more_jobs_needed);
	CHECK_EQ(sim_held(&sim, a), 2);
	CHECK(sim_decision(&sim, FS_DECISION_PLACE, ID(jl)) == NULL);	/* not its turn yet */
	for (i = 0; i < 10 && sim.result->more_jobs_needed; i++)
		sim_pass(&sim);
	CHECK_EQ(sim_held(&sim, a), 6);
	CHECK_EQ(sim_held(&sim, b), 1);
	CHECK_EQ(sim.jobs[jl].state, SIM_RUNNING);
	sim_free(&sim);
}

/*
 * A share whose whole loaded head can never fit (a sweep asking for more
 * than any environment has) has not used its head up: the pass goes on to
 * the other shares and to lower queues rather than stopping for deeper
 * heads -- a round with nothing placed loads no deeper, so stopping there
 * would block the queue for as long as the sweep waits.
 */
static void
test_misconfigured_head_does_not_stop_the_pass(void)
{
	Sim			sim;
	int			t,
				env,
				q,
				a,
				b,
				lowq,
				low,
				i,
				jb,
				jl;

	simple_world(&sim, FS_POLICY_FAIR_SHARE, 10, &t, &env, &q, &a);
	b = sim_share(&sim, q, "other");
	lowq = sim_queue(&sim, "later", 0, FS_POLICY_FIFO);
	sim_queue_env(&sim, lowq, env);
	low = sim_share(&sim, lowq, "later");
	sim.prefix = 2;
	for (i = 0; i < 6; i++)
		sim_submit(&sim, a, 200, 0, t);
	sim_advance(&sim, FS_SECONDS(1));
	jb = sim_submit(&sim, b, 1, 0, t);
	jl = sim_submit(&sim, low, 1, 0, t);
	sim_pass(&sim);
	CHECK_EQ(sim_count(&sim, FS_DECISION_MISCONFIGURED), 2);
	CHECK(sim_decision(&sim, FS_DECISION_PLACE, ID(jb)) != NULL);
	CHECK(sim_decision(&sim, FS_DECISION_PLACE, ID(jl)) != NULL);
	sim_free(&sim);
}

static void
test_starvation_needs_backfill(void)
{
	Sim			sim;
	int			t,
				env,
				q,
				a,
				b,
				i,
				pass;

	/* a saturated fair-share queue: heads wait long, but nothing goes past them */
	simple_world(&sim, FS_POLICY_FAIR_SHARE, 4, &t, &env, &q, &a);
	b = sim_share(&sim, q, "other");
	sim.starvation = FS_SECONDS(600);
	for (i = 0; i < 4; i++)
		sim_run(&sim, i % 2 ? a : b, env, t, 1, 0);
	for (i = 0; i < 10; i++)
	{
		sim_submit(&sim, a, 1, 0, t);
		sim_submit(&sim, b, 1, 0, t);
	}
	for (pass = 0; pass < 30; pass++)
	{
		sim_pass(&sim);
		CHECK_EQ(sim_count(&sim, FS_DECISION_NOMINATE), 0);
		sim_advance(&sim, FS_SECONDS(60));
	}
	sim_free(&sim);
}

static void
test_same_moment_placement_is_no_victim(void)
{
	QuotaWorld	w;
	int			fresh,
				j;

	quota_world(&w, 100, 60, FS_STRATEGY_LEND_AND_BORROW, 40, FS_STRATEGY_LEND);
	sim_run(&w.sim, w.s1, w.env, w.t, 60, 0);
	fresh = sim_run(&w.sim, w.s1, w.env, w.t, 20, 0);
	w.sim.jobs[fresh].started_at = w.sim.now;	/* placed by a pass at this moment */
	sim_run(&w.sim, w.s2, w.env, w.t, 20, 0);
	j = sim_submit(&w.sim, w.s2, 20, 0, w.t);
	sim_pass(&w.sim);
	CHECK(sim_decision(&w.sim, FS_DECISION_PREEMPT, w.sim.jobs[fresh].id) == NULL);
	CHECK_EQ(sim_count(&w.sim, FS_DECISION_PREEMPT), 1);	/* the 60 instead */
	CHECK(sim_decision(&w.sim, FS_DECISION_NOMINATE, w.sim.jobs[j].id) != NULL);
	sim_free(&w.sim);
}

static void
test_victims_count_until_next_pass(void)
{
	QuotaWorld	w;
	int			high,
				low,
				victim,
				j;

	/*
	 * 29 instances, 1 free.  ProdExp2 (limit 10) holds 12: its high-priority
	 * job is a borrower.
	 * ProdExp1 reclaims 4 of ProdExp2's instances; within the same pass
	 * ProdExp2's low-priority job must not become "guaranteed" ahead of its
	 * high-priority one, which was a borrower when it was looked at.
	 */
	quota_world(&w, 29, 20, FS_STRATEGY_LEND_AND_BORROW, 10, FS_STRATEGY_LEND_AND_BORROW);
	sim_run(&w.sim, w.s1, w.env, w.t, 16, 0);
	sim_run(&w.sim, w.s2, w.env, w.t, 8, 0);
	victim = sim_run(&w.sim, w.s2, w.env, w.t, 4, 0);
	high = sim_submit(&w.sim, w.s2, 1, 9, w.t);
	j = sim_submit(&w.sim, w.s1, 4, 5, w.t);	/* 16 + 4 <= 20: guaranteed */
	low = sim_submit(&w.sim, w.s2, 1, 1, w.t);
	sim_pass(&w.sim);
	CHECK(sim_decision(&w.sim, FS_DECISION_PREEMPT, w.sim.jobs[victim].id) != NULL);
	CHECK(sim_decision(&w.sim, FS_DECISION_NOMINATE, w.sim.jobs[j].id) != NULL);
	CHECK(sim_decision(&w.sim, FS_DECISION_PLACE, w.sim.jobs[low].id) == NULL);
	CHECK(sim_decision(&w.sim, FS_DECISION_PLACE, w.sim.jobs[high].id) != NULL);	/* the 1 free */
	sim_free(&w.sim);
}

static void
test_reserve_kept_across_environments(void)
{
	Sim			sim;
	int			t,
				e1,
				e2,
				q,
				r,
				b,
				j;

	/* RESERVE share keeps 10 unused; the two environments have 6 free each */
	sim_init(&sim);
	t = sim_type(&sim, "ml.p4d.24xlarge");
	e1 = sim_env(&sim, "One");
	e2 = sim_env(&sim, "Two");
	sim_env_limit(&sim, e1, FS_UNIT_NUM_INSTANCES, 10);
	sim_env_limit(&sim, e2, FS_UNIT_NUM_INSTANCES, 10);
	q = sim_queue(&sim, "quota", 1, FS_POLICY_QUOTA_SHARE);
	sim_queue_env(&sim, q, e1);
	sim_queue_env(&sim, q, e2);
	r = sim_share(&sim, q, "Reserved");
	sim_share_limit(&sim, r, FS_UNIT_NUM_INSTANCES, 10);
	sim.shares[r].strategy = FS_STRATEGY_RESERVE;
	b = sim_share(&sim, q, "Borrower");
	sim_share_limit(&sim, b, FS_UNIT_NUM_INSTANCES, 4);
	sim_run(&sim, b, e1, t, 4, 0);
	sim_run(&sim, b, e2, t, 4, 0);
	/* 12 free in all; 10 kept: a borrower may take 2, not 3 */
	j = sim_submit(&sim, b, 3, 0, t);
	sim_pass(&sim);
	CHECK(sim_decision(&sim, FS_DECISION_PLACE, ID(j)) == NULL);
	j = sim_submit(&sim, b, 2, 0, t);
	sim_pass(&sim);
	CHECK(sim_decision(&sim, FS_DECISION_PLACE, ID(j)) != NULL);
	sim_free(&sim);
}

/*
 * Many RESERVE shares, each using its own kept room: one pass gives every
 * share its guarantee, its best jobs first, and nothing more is needed.
 * (When a share's own placements were taken up only a round later, every
 * other share saw that room twice, kept and used; each round placed a few
 * jobs and the rounds ran out long before the environment was full.)
 */
static void
test_reserve_shares_fill_in_one_pass(void)
{
	Sim			sim;
	int			t,
				env,
				q,
				s,
				i;
	int			shares[40];
	int			jobs[40][12];
	int64_t		placed = 0;

	sim_init(&sim);
	t = sim_type(&sim, "ml.p4d.24xlarge");
	env = sim_env(&sim, "P4Env");
	sim_env_limit(&sim, env, FS_UNIT_NUM_INSTANCES, 200);
	q = sim_queue(&sim, "quota", 1, FS_POLICY_QUOTA_SHARE);
	sim_queue_env(&sim, q, env);
	for (s = 0; s < 40; s++)
	{
		char		name[16];

		snprintf(name, sizeof(name), "Team%02d", s);
		shares[s] = sim_share(&sim, q, name);
		sim_share_limit(&sim, shares[s], FS_UNIT_NUM_INSTANCES, 5);
		sim.shares[shares[s]].strategy = FS_STRATEGY_RESERVE;
		for (i = 0; i < 12; i++)
			jobs[s][i] = sim_submit(&sim, shares[s], 1, (s * 7 + i * 3) % 10, t);
	}
	sim_pass(&sim);
	for (s = 0; s < 40; s++)
	{
		int			lowest_placed = 10;
		int			highest_waiting = -1;

		CHECK_EQ(sim_held(&sim, shares[s]), 5);
		for (i = 0; i < 12; i++)
		{
			int			prio = sim.jobs[jobs[s][i]].priority;

			if (sim_decision(&sim, FS_DECISION_PLACE, ID(jobs[s][i])) != NULL)
			{
				placed++;
				if (prio < lowest_placed)
					lowest_placed = prio;
			}
			else if (prio > highest_waiting)
				highest_waiting = prio;
		}
		CHECK(lowest_placed >= highest_waiting);	/* its best jobs */
	}
	CHECK_EQ(placed, 200);
	CHECK_EQ(sim_env_used(&sim, env, FS_UNIT_NUM_INSTANCES), 200);
	CHECK(!sim.result->more_jobs_needed);
	sim_free(&sim);
}

/*
 * Room a RESERVE share has just used itself is no longer kept from others
 * in the same round: a LEND share's job within its guarantee fits in the
 * free capacity next to it and comes before a borrower.  (Counted as still
 * kept, it left the guaranteed job waiting, gave the room to the borrower,
 * and the next pass preempted the borrower for it.)
 */
static void
test_own_reserve_use_frees_no_room_twice(void)
{
	Sim			sim;
	int			t,
				env,
				q,
				reserve,
				lend,
				borrower,
				a,
				g,
				b;

	sim_init(&sim);
	t = sim_type(&sim, "ml.p4d.24xlarge");
	env = sim_env(&sim, "P4Env");
	sim_env_limit(&sim, env, FS_UNIT_NUM_INSTANCES, 8);
	q = sim_queue(&sim, "quota", 1, FS_POLICY_QUOTA_SHARE);
	sim_queue_env(&sim, q, env);
	reserve = sim_share(&sim, q, "Reserve");
	sim_share_limit(&sim, reserve, FS_UNIT_NUM_INSTANCES, 2);
	sim.shares[reserve].strategy = FS_STRATEGY_RESERVE;
	lend = sim_share(&sim, q, "Lend");
	sim_share_limit(&sim, lend, FS_UNIT_NUM_INSTANCES, 5);
	sim.shares[lend].strategy = FS_STRATEGY_LEND;
	borrower = sim_share(&sim, q, "Borrower");
	sim_share_limit(&sim, borrower, FS_UNIT_NUM_INSTANCES, 0);
	b = sim_submit(&sim, borrower, 3, 1, t);	/* waited longest */
	sim_advance(&sim, FS_SECONDS(1));
	a = sim_submit(&sim, reserve, 2, 9, t);
	g = sim_submit(&sim, lend, 5, 5, t);
	sim_pass(&sim);
	/* 2 for Reserve's own job, then 6 free: 5 for Lend's guarantee, 1 left */
	CHECK(sim_decision(&sim, FS_DECISION_PLACE, ID(a)) != NULL);
	CHECK(sim_decision(&sim, FS_DECISION_PLACE, ID(g)) != NULL);
	CHECK(sim_decision(&sim, FS_DECISION_PLACE, ID(b)) == NULL);
	CHECK_CONTAINS(sim_wait_text(&sim, ID(b)), "needs 3, 1 free");
	sim_advance(&sim, FS_SECONDS(60));
	sim_pass(&sim);
	CHECK_EQ(sim_count(&sim, FS_DECISION_PREEMPT), 0);
	sim_free(&sim);
}

static void
test_nomination_dropped_when_limit_lowered(void)
{
	QuotaWorld	w;
	int			j;

	quota_world(&w, 100, 60, FS_STRATEGY_LEND_AND_BORROW, 40, FS_STRATEGY_LEND);
	sim_run(&w.sim, w.s1, w.env, w.t, 80, 0);
	sim_run(&w.sim, w.s2, w.env, w.t, 20, 0);
	j = sim_submit(&w.sim, w.s2, 20, 0, w.t);
	sim_pass(&w.sim);
	CHECK(sim_decision(&w.sim, FS_DECISION_NOMINATE, w.sim.jobs[j].id) != NULL);
	/* the environment shrinks to 30: 20 + 20 can never fit next to the rest */
	sim_env_limit(&w.sim, w.env, w.t, 30);
	sim_finish_stops(&w.sim);
	sim_run(&w.sim, w.s1, w.env, w.t, 15, 0);
	sim_pass(&w.sim);
	CHECK(sim_decision(&w.sim, FS_DECISION_DROP_NOMINATION, w.sim.jobs[j].id) != NULL);
	sim_free(&w.sim);
}

static void
test_running_job_without_share(void)
{
	Sim			sim;
	int			t,
				env,
				q,
				s,
				j;
	FsRunningJob other = {0};
	FsRunningJob *running;
	FsResult   *r;

	/* a running job of a disabled queue (share -1) fills capacity, is never a victim */
	simple_world(&sim, FS_POLICY_FIFO, 10, &t, &env, &q, &s);
	j = sim_submit(&sim, s, 5, 0, t);
	sim_pass(&sim);
	CHECK(sim_decision(&sim, FS_DECISION_PLACE, ID(j)) != NULL);
	sim.jobs[j].state = SIM_RUNNABLE;
	sim_pass(&sim);				/* rebuild the input with j runnable again */
	running = malloc(sizeof(FsRunningJob));
	other.job_id = 999;
	other.share = -1;
	other.environment = env;
	other.instance_type = t;
	other.instance_count = 6;
	other.started_at = sim.now - FS_SECONDS(3600);
	*running = other;
	sim.input.running = running;
	sim.input.n_running = 1;
	r = fs_schedule(&sim.input, &sim.allocator);
	CHECK_EQ(r->n_decisions, 0);
	CHECK(r->n_wait_reasons == 1 && r->wait_reasons[0].in_use == 6);
	fs_result_free(r, &sim.allocator);
	free(running);
	sim_free(&sim);
}

static void
test_sentences(void)
{
	QuotaWorld	w;
	int			j;
	const FsDecision *d;
	char		text[300];

	quota_world(&w, 100, 60, FS_STRATEGY_LEND_AND_BORROW, 40, FS_STRATEGY_LEND);
	sim_run(&w.sim, w.s1, w.env, w.t, 75, 0);
	sim_run(&w.sim, w.s2, w.env, w.t, 25, 0);
	j = sim_submit(&w.sim, w.s2, 15, 0, w.t);
	sim_pass(&w.sim);
	d = sim_decision(&w.sim, FS_DECISION_PREEMPT, 1);
	CHECK(d != NULL);
	if (d)
	{
		fs_format_decision(&w.sim.input, d, text, sizeof(text));
		CHECK_CONTAINS(text, "preempted by job 3 to reclaim the guaranteed capacity of quota share ProdExp2: "
					   "ProdExp1 holds 75 instances, its limit is 60");
	}
	d = sim_decision(&w.sim, FS_DECISION_NOMINATE, w.sim.jobs[j].id);
	CHECK(d != NULL);
	if (d)
	{
		fs_format_decision(&w.sim.input, d, text, sizeof(text));
		CHECK_CONTAINS(text, "capacity in P4Env for ml.p4d.24xlarge is held for this job while preempted jobs stop");
	}
	/* snprintf-like: the length it needs, however small the buffer */
	CHECK(fs_format_wait_reason(&w.sim.input, sim_wait(&w.sim, w.sim.jobs[j].id), text, 8) > 8);
	CHECK_EQ(strlen(text), 7);
	sim_free(&w.sim);
}

/*
 * A quota share's PLACE reason names the limit that bound the job's
 * guarantee: with NUM_INSTANCES 4 and a type limit of 10, a job of 6 is
 * within the type limit but borrows 2 beyond NUM_INSTANCES, which is what
 * the pass decided (fs_quota_room takes the smaller room).  The wrapper
 * once named the type limit ("holds 6 of its 10") whenever there was one.
 */
static void
test_place_reason_names_binding_limit(void)
{
	Sim			sim;
	int			t,
				env,
				q,
				s,
				a,
				b;
	const FsDecision *d;
	char		text[300];

	simple_world(&sim, FS_POLICY_QUOTA_SHARE, 100, &t, &env, &q, &s);
	sim_share_limit(&sim, s, FS_UNIT_NUM_INSTANCES, 4);
	sim_share_limit(&sim, s, t, 10);
	a = sim_submit(&sim, s, 3, 5, t);
	b = sim_submit(&sim, s, 3, 0, t);
	sim_pass(&sim);
	d = sim_decision(&sim, FS_DECISION_PLACE, sim.jobs[a].id);
	CHECK(d != NULL);
	if (d)
	{
		fs_format_decision(&sim.input, d, text, sizeof(text));
		CHECK_CONTAINS(text, "within share's guarantee: holds 3 of its 4 on P4Env");
	}
	d = sim_decision(&sim, FS_DECISION_PLACE, sim.jobs[b].id);
	CHECK(d != NULL);
	if (d)
	{
		fs_format_decision(&sim.input, d, text, sizeof(text));
		CHECK_CONTAINS(text, "share borrows 2 idle instances beyond its guarantee of 4 "
					   "(holds 6 of ml.p4d.24xlarge on P4Env)");
	}
	sim_free(&sim);
}

static void
test_queue_order_fifo_and_quota(void)
{
	Sim			sim;
	int			t,
				env,
				q,
				s,
				a,
				b,
				c,
				n;
	FsOrderEntry *order;
	QuotaWorld	w;

	simple_world(&sim, FS_POLICY_FIFO, 10, &t, &env, &q, &s);
	a = sim_submit(&sim, s, 1, 9, t);
	sim_advance(&sim, FS_SECONDS(1));
	b = sim_submit(&sim, s, 500, 0, t);	/* misconfigured: last */
	sim_advance(&sim, FS_SECONDS(1));
	c = sim_submit(&sim, s, 1, 0, t);
	sim_pass(&sim);
	n = fs_queue_order(&sim.input, q, 0, &sim.allocator, &order);
	CHECK_EQ(n, 3);
	if (n == 3)
	{
		CHECK_EQ(order[0].job_id, ID(a));
		CHECK_EQ(order[1].job_id, ID(c));
		CHECK_EQ(order[2].job_id, ID(b));
	}
	free(order);
	sim_free(&sim);

	/* quota: within guarantee by priority, then borrowers */
	quota_world(&w, 100, 10, FS_STRATEGY_LEND_AND_BORROW, 10, FS_STRATEGY_LEND_AND_BORROW);
	sim_run(&w.sim, w.s1, w.env, w.t, 10, 0);
	a = sim_submit(&w.sim, w.s1, 5, 9, w.t);	/* borrower */
	b = sim_submit(&w.sim, w.s2, 5, 1, w.t);	/* guaranteed */
	c = sim_submit(&w.sim, w.s2, 5, 5, w.t);	/* guaranteed, higher */
	sim_pass(&w.sim);
	n = fs_queue_order(&w.sim.input, w.q, 0, &w.sim.allocator, &order);
	CHECK_EQ(n, 3);
	if (n == 3)
	{
		CHECK_EQ(order[0].job_id, w.sim.jobs[c].id);
		CHECK_EQ(order[1].job_id, w.sim.jobs[b].id);
		CHECK_EQ(order[2].job_id, w.sim.jobs[a].id);
	}
	free(order);
	sim_free(&w.sim);
}

const TestCase rule_tests[] = {
	{"limits_num_and_type", test_limits_num_and_type},
	{"type_without_limit_cannot_be_placed", test_type_without_limit_cannot_be_placed},
	{"stopping_jobs_occupy_capacity", test_stopping_jobs_occupy_capacity},
	{"misconfigured_does_not_block", test_misconfigured_does_not_block},
	{"disabled_environment", test_disabled_environment},
	{"queue_ties_by_name", test_queue_ties_by_name},
	{"fifo_backfill_and_order", test_fifo_backfill_and_order},
	{"strict_fifo", test_strict_fifo},
	{"fallback_order_environments_then_types", test_fallback_order_environments_then_types},
	{"backoff_reason", test_backoff_reason},
	{"starvation_holds_capacity", test_starvation_holds_capacity},
	{"starvation_off", test_starvation_off},
	{"starvation_backfill_by_time_limit", test_starvation_backfill_by_time_limit},
	{"starvation_backfill_spare_room", test_starvation_backfill_spare_room},
	{"starvation_backfill_two_starving_jobs", test_starvation_backfill_two_starving_jobs},
	{"starvation_backfill_keeps_the_promise", test_starvation_backfill_keeps_the_promise},
	{"fair_placements_count_into_usage", test_fair_placements_count_into_usage},
	{"fair_backfill_and_priority", test_fair_backfill_and_priority},
	{"fair_compute_reservation", test_fair_compute_reservation},
	{"fair_compute_reservation_exact", test_fair_compute_reservation_exact},
	{"share_weight_helper", test_share_weight_helper},
	{"decayed_usage_helper", test_decayed_usage_helper},
	{"fair_first_keys", test_fair_first_keys},
	{"reserve_is_not_borrowed", test_reserve_is_not_borrowed},
	{"lend_does_not_borrow", test_lend_does_not_borrow},
	{"borrow_limit", test_borrow_limit},
	{"victims_most_over_limit_first", test_victims_most_over_limit_first},
	{"victims_only_above_limit", test_victims_only_above_limit},
	{"no_preemption_that_does_not_fit", test_no_preemption_that_does_not_fit},
	{"min_runtime_preference", test_min_runtime_preference},
	{"reverse_walk_drops_unneeded", test_reverse_walk_drops_unneeded},
	{"nominated_room_is_held", test_nominated_room_is_held},
	{"lowered_limit_makes_excess_preemptible", test_lowered_limit_makes_excess_preemptible},
	{"guaranteed_before_borrowers_and_by_priority", test_guaranteed_before_borrowers_and_by_priority},
	{"idle_assignment_fifo_and_fair", test_idle_assignment_fifo_and_fair},
	{"in_share_victim_order", test_in_share_victim_order},
	{"nomination_dropped_when_env_disabled", test_nomination_dropped_when_env_disabled},
	{"queue_order", test_queue_order},
	{"more_jobs_needed", test_more_jobs_needed},
	{"check_input", test_check_input},
	{"arena_allocator_and_no_leaks", test_arena_allocator_and_no_leaks},
	{"in_share_preemption_does_not_borrow_more", test_in_share_preemption_does_not_borrow_more},
	{"in_share_victims_ignore_starvation_hold", test_in_share_victims_ignore_starvation_hold},
	{"prefix_used_up_stops_the_pass", test_prefix_used_up_stops_the_pass},
	{"misconfigured_head_does_not_stop_the_pass", test_misconfigured_head_does_not_stop_the_pass},
	{"starvation_needs_backfill", test_starvation_needs_backfill},
	{"same_moment_placement_is_no_victim", test_same_moment_placement_is_no_victim},
	{"victims_count_until_next_pass", test_victims_count_until_next_pass},
	{"reserve_kept_across_environments", test_reserve_kept_across_environments},
	{"reserve_shares_fill_in_one_pass", test_reserve_shares_fill_in_one_pass},
	{"own_reserve_use_frees_no_room_twice", test_own_reserve_use_frees_no_room_twice},
	{"nomination_dropped_when_limit_lowered", test_nomination_dropped_when_limit_lowered},
	{"running_job_without_share", test_running_job_without_share},
	{"sentences", test_sentences},
	{"place_reason_names_binding_limit", test_place_reason_names_binding_limit},
	{"queue_order_fifo_and_quota", test_queue_order_fifo_and_quota},
};
const int	n_rule_tests = sizeof(rule_tests) / sizeof(rule_tests[0]);
