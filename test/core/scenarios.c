/*
 * scenarios.c — the six reference scenarios of docs/scheduling.md, driven through
 * the core: place, then move time (jobs start, stops finish), pass again.
 */
#include <stdio.h>
#include <stdlib.h>

#include "sim.h"
#include "test.h"
#include "tests.h"

#define ID(i)	(sim.jobs[(i)].id)

/*
 * 1. Borrow and reclaim: 100 x ml.p4d.24xlarge; ProdExp1 (60,
 * LEND_AND_BORROW) and ProdExp2 (40, LEND).  ProdExp2 runs 25, ProdExp1 has
 * a backlog -> ProdExp1 runs 75.  ProdExp2 submits 15 more -> 15 instances
 * of ProdExp1 are preempted and ProdExp2 reaches 40.
 */
static void
borrow_and_reclaim(int pe1_job_size, int pe2_new_jobs, int pe2_new_size)
{
	Sim			sim;
	int			p4d,
				env,
				q,
				pe1,
				pe2,
				i;
	int			first_new;
	int			victims_instances = 0;

	sim_init(&sim);
	p4d = sim_type(&sim, "ml.p4d.24xlarge");
	env = sim_env(&sim, "P4Env");
	sim_env_limit(&sim, env, p4d, 100);
	q = sim_queue(&sim, "p4-queue", 1, FS_POLICY_QUOTA_SHARE);
	sim_queue_env(&sim, q, env);
	pe1 = sim_share(&sim, q, "ProdExp1");
	sim_share_limit(&sim, pe1, p4d, 60);
	sim.shares[pe1].strategy = FS_STRATEGY_LEND_AND_BORROW;
	pe2 = sim_share(&sim, q, "ProdExp2");
	sim_share_limit(&sim, pe2, p4d, 40);
	sim.shares[pe2].strategy = FS_STRATEGY_LEND;

	for (i = 0; i < 5; i++)
		sim_run(&sim, pe2, env, p4d, 5, 0);
	for (i = 0; i < 100 / pe1_job_size; i++)
		sim_submit(&sim, pe1, pe1_job_size, 0, p4d);

	sim_pass(&sim);
	CHECK_EQ(sim_held(&sim, pe1), 75);
	CHECK_EQ(sim_held(&sim, pe2), 25);
	CHECK_EQ(sim_count(&sim, FS_DECISION_PREEMPT), 0);

	sim_advance(&sim, FS_SECONDS(3600));
	first_new = sim.n_jobs;
	for (i = 0; i < pe2_new_jobs; i++)
		sim_submit(&sim, pe2, pe2_new_size, 0, p4d);
	sim_pass(&sim);
	for (i = 0; i < sim.result->n_decisions; i++)
	{
		const FsDecision *d = &sim.result->decisions[i];

		if (d->kind != FS_DECISION_PREEMPT)
			continue;
		CHECK_EQ(d->share, pe1);
		CHECK_EQ(d->preempt_reason, FS_PREEMPT_RECLAIM);
		victims_instances += d->instance_count;
	}
	CHECK_EQ(victims_instances, 15);
	for (i = first_new; i < sim.n_jobs; i++)
		CHECK(sim_decision(&sim, FS_DECISION_NOMINATE, ID(i)) != NULL);
	/* the victims still occupy their capacity: nothing else is placed */
	CHECK_EQ(sim_count(&sim, FS_DECISION_PLACE), 0);
	CHECK_EQ(sim_env_used(&sim, env, p4d), 100);

	/* the room stays held while the stops are in progress */
	sim_advance(&sim, FS_SECONDS(5));
	sim_pass(&sim);
	CHECK_EQ(sim_count(&sim, FS_DECISION_PLACE), 0);
	CHECK_EQ(sim_count(&sim, FS_DECISION_PREEMPT), 0);

	sim_finish_stops(&sim);
	sim_pass(&sim);
	for (i = first_new; i < sim.n_jobs; i++)
		CHECK(sim_decision(&sim, FS_DECISION_PLACE, ID(i)) != NULL);
	CHECK_EQ(sim_held(&sim, pe2), 40);
	CHECK_EQ(sim_held(&sim, pe1), 60);

	/* and it is stable: nothing thrashes afterwards */
	for (i = 0; i < 5; i++)
	{
		sim_advance(&sim, FS_SECONDS(60));
		sim_pass(&sim);
		CHECK_EQ(sim_count(&sim, FS_DECISION_PREEMPT), 0);
		CHECK_EQ(sim_count(&sim, FS_DECISION_PLACE), 0);
	}
	sim_free(&sim);
	CHECK_EQ(sim.allocs, sim.frees);
}

static void
test_scenario1_borrow_and_reclaim(void)
{
	borrow_and_reclaim(5, 3, 5);	/* 15 jobs of 5; three jobs of 5 arrive */
	borrow_and_reclaim(15, 1, 15);	/* 5 jobs of 15; one job of 15 arrives */
	borrow_and_reclaim(5, 1, 15);	/* three victims for one job */
}

/*
 * 2. In-share priority preemption: ProdExp2 is busy with its own 40,
 * ProdExp1 (60, in-share preemption) runs A (80), B (50), C (30), D (10),
 * 15 each.  A priority-90 job of 15 arrives -> D is preempted, the new job
 * runs, ProdExp1 still holds 60.  With idle capacity it borrows instead.
 */
static void
in_share_preemption(bool idle_capacity)
{
	Sim			sim;
	int			p4d,
				env,
				q,
				pe1,
				pe2,
				i;
	int			a,
				b,
				c,
				d,
				e;

	sim_init(&sim);
	p4d = sim_type(&sim, "ml.p4d.24xlarge");
	env = sim_env(&sim, "P4Env");
	sim_env_limit(&sim, env, p4d, idle_capacity ? 115 : 100);
	q = sim_queue(&sim, "p4-queue", 1, FS_POLICY_QUOTA_SHARE);
	sim_queue_env(&sim, q, env);
	pe1 = sim_share(&sim, q, "ProdExp1");
	sim_share_limit(&sim, pe1, p4d, 60);
	sim.shares[pe1].in_share_preemption = true;
	pe2 = sim_share(&sim, q, "ProdExp2");
	sim_share_limit(&sim, pe2, p4d, 40);
	sim.shares[pe2].strategy = FS_STRATEGY_LEND;
	for (i = 0; i < 4; i++)
		sim_run(&sim, pe2, env, p4d, 10, 0);
	a = sim_run(&sim, pe1, env, p4d, 15, 80);
	b = sim_run(&sim, pe1, env, p4d, 15, 50);
	c = sim_run(&sim, pe1, env, p4d, 15, 30);
	d = sim_run(&sim, pe1, env, p4d, 15, 10);
	e = sim_submit(&sim, pe1, 15, 90, p4d);

	sim_pass(&sim);
	if (idle_capacity)
	{
		CHECK_EQ(sim_count(&sim, FS_DECISION_PREEMPT), 0);
		CHECK(sim_decision(&sim, FS_DECISION_PLACE, ID(e)) != NULL);
		CHECK_EQ(sim_held(&sim, pe1), 75);
		sim_free(&sim);
		return;
	}
	CHECK_EQ(sim_count(&sim, FS_DECISION_PREEMPT), 1);
	{
		const FsDecision *v = sim_decision(&sim, FS_DECISION_PREEMPT, ID(d));
		char		text[256];

		CHECK(v != NULL);
		if (v != NULL)
		{
			CHECK_EQ(v->for_job_id, ID(e));
			CHECK_EQ(v->preempt_reason, FS_PREEMPT_IN_SHARE);
			fs_format_decision(&sim.input, v, text, sizeof(text));
			CHECK_CONTAINS(text, "preempted by job");
			CHECK_CONTAINS(text, "same quota share ProdExp1");
		}
	}
	CHECK(sim_decision(&sim, FS_DECISION_NOMINATE, ID(e)) != NULL);
	CHECK_EQ(sim_wait(&sim, ID(e)) ? (int) sim_wait(&sim, ID(e))->kind : -1, FS_WAIT_NOMINATED);

	sim_finish_stops(&sim);
	sim_pass(&sim);
	CHECK(sim_decision(&sim, FS_DECISION_PLACE, ID(e)) != NULL);
	CHECK_EQ(sim_held(&sim, pe1), 60);
	CHECK_EQ(sim.jobs[a].state, SIM_RUNNING);
	CHECK_EQ(sim.jobs[b].state, SIM_RUNNING);
	CHECK_EQ(sim.jobs[c].state, SIM_RUNNING);
	CHECK_EQ(sim.jobs[d].state, SIM_RUNNABLE);

	/* D (priority 10) waits: it outranks nobody */
	sim_advance(&sim, FS_SECONDS(600));
	sim_pass(&sim);
	CHECK_EQ(sim_count(&sim, FS_DECISION_PREEMPT), 0);
	CHECK(sim_wait(&sim, ID(d)) != NULL);
	sim_free(&sim);
}

static void
test_scenario2_in_share_preemption(void)
{
	in_share_preemption(false);
	in_share_preemption(true);
}

/*
 * 3. Share weights: HIGHPRI (1), MIDPRI (3), LOWPRI (5) on 1 instance.  LOWPRI
 * and MIDPRI submit together -> MIDPRI runs first; a HIGHPRI job submitted
 * later runs before the LOWPRI one.
 */
static void
share_weights(FsTime decay)
{
	Sim			sim;
	int			t,
				env,
				q,
				hi,
				mid,
				lo;
	int			jlo,
				jmid,
				jhi;

	sim_init(&sim);
	t = sim_type(&sim, "ml.g5.xlarge");
	env = sim_env(&sim, "G5Env");
	sim_env_limit(&sim, env, FS_UNIT_NUM_INSTANCES, 1);
	q = sim_queue(&sim, "fair-queue", 1, FS_POLICY_FAIR_SHARE);
	sim.queues[q].share_decay = decay;
	sim_queue_env(&sim, q, env);
	hi = sim_share(&sim, q, "HIGHPRI");
	sim.shares[hi].weight = 1;
	mid = sim_share(&sim, q, "MIDPRI");
	sim.shares[mid].weight = 3;
	lo = sim_share(&sim, q, "LOWPRI");
	sim.shares[lo].weight = 5;

	jlo = sim_submit(&sim, lo, 1, 0, t);
	jmid = sim_submit(&sim, mid, 1, 0, t);
	sim_pass(&sim);
	CHECK(sim_decision(&sim, FS_DECISION_PLACE, ID(jmid)) != NULL);
	CHECK_EQ(sim.jobs[jlo].state, SIM_RUNNABLE);
	CHECK_CONTAINS(sim_wait_text(&sim, ID(jlo)), "insufficient unused capacity in G5Env");
	CHECK_CONTAINS(sim_wait_text(&sim, ID(jlo)), "weight 5");

	sim_advance(&sim, FS_SECONDS(60));
	jhi = sim_submit(&sim, hi, 1, 0, t);
	sim_pass(&sim);
	CHECK_EQ(sim_count(&sim, FS_DECISION_PLACE), 0);	/* fair share never preempts */
	CHECK_EQ(sim_count(&sim, FS_DECISION_PREEMPT), 0);

	sim_advance(&sim, FS_SECONDS(60));
	sim_finish(&sim, jmid);
	sim_pass(&sim);
	CHECK(sim_decision(&sim, FS_DECISION_PLACE, ID(jhi)) != NULL);
	CHECK_EQ(sim.jobs[jlo].state, SIM_RUNNABLE);

	sim_advance(&sim, FS_SECONDS(60));
	sim_finish(&sim, jhi);
	sim_pass(&sim);
	CHECK(sim_decision(&sim, FS_DECISION_PLACE, ID(jlo)) != NULL);
	sim_free(&sim);
}

static void
test_scenario3_share_weights(void)
{
	share_weights(0);
	share_weights(FS_SECONDS(3600));
}

/*
 * 4. Steady-state proportions: weights 1/3/5 with saturated demand converge
 * to 15/23, 5/23, 3/23 of capacity (within one instance).
 */
static void
steady_state(int capacity, FsTime decay, unsigned seed)
{
	Sim			sim;
	int			t,
				env,
				q,
				s[3],
				i,
				k,
				pass;
	double		weights[3] = {1, 3, 5};
	int			expected[3];
	int			worst = 0;
	double		mean[3] = {0, 0, 0};
	int			measured = 0;

	srand(seed);
	for (i = 0; i < 3; i++)
		expected[i] = (int) ((double) capacity * (1.0 / weights[i]) / (1.0 + 1.0 / 3 + 1.0 / 5) + 0.5);
	sim_init(&sim);
	t = sim_type(&sim, "ml.p4d.24xlarge");
	env = sim_env(&sim, "P4Env");
	sim_env_limit(&sim, env, t, capacity);
	q = sim_queue(&sim, "fair-queue", 1, FS_POLICY_FAIR_SHARE);
	sim.queues[q].share_decay = decay;
	sim_queue_env(&sim, q, env);
	for (i = 0; i < 3; i++)
	{
		char		name[16];

		snprintf(name, sizeof(name), "share%d", i);
		s[i] = sim_share(&sim, q, name);
		sim.shares[s[i]].weight = weights[i];
	}
	sim.prefix = 16;
	for (pass = 0; pass < 600; pass++)
	{
		/* keep every share saturated */
		for (i = 0; i < 3; i++)
		{
			int			waiting = 0;

			for (k = 0; k < sim.n_jobs; k++)
				if (sim.jobs[k].share == s[i] && sim.jobs[k].state == SIM_RUNNABLE)
					waiting++;
			while (waiting++ < capacity)
			{
				int			j = sim_submit(&sim, s[i], 1, 0, t);

				sim.jobs[j].duration = FS_SECONDS(60 + rand() % 600);
			}
		}
		/* the wrapper loads a head of 16 per share and passes again while asked */
		for (k = 0; k < 100 && (k == 0 || sim.result->more_jobs_needed); k++)
			sim_pass(&sim);
		CHECK_EQ(sim_env_used(&sim, env, t), capacity);
		if (pass >= 200)
		{
			for (i = 0; i < 3; i++)
			{
				int			off = (int) sim_held(&sim, s[i]) - expected[i];

				if (off < 0)
					off = -off;
				if (off > worst)
					worst = off;
				mean[i] += (double) sim_held(&sim, s[i]);
			}
			measured++;
		}
		sim_advance(&sim, FS_SECONDS(30));
	}
	if (decay == 0)
	{
		if (worst > 1)
			printf("    capacity %d: held strays %d from %d/%d/%d\n", capacity, worst,
				   expected[0], expected[1], expected[2]);
		CHECK(worst <= 1);
	}
	/* with a half-life, usage lags: the average still converges */
	for (i = 0; i < 3; i++)
	{
		double		avg = mean[i] / measured;

		if (avg < expected[i] - 1.0 || avg > expected[i] + 1.0)
		{
			printf("    capacity %d decay %lld: share %d averages %.2f, expected %d\n",
				   capacity, (long long) (decay / FS_USECS_PER_SEC), i, avg, expected[i]);
			CHECK(false);
		}
	}
	sim_free(&sim);
}

static void
test_scenario4_steady_state_proportions(void)
{
	steady_state(23, 0, 1);
	steady_state(23, FS_SECONDS(600), 2);
	steady_state(46, 0, 3);
	steady_state(230, 0, 4);
}

/* 5. Two queues on one environment: the higher-priority queue's jobs go first. */
static void
test_scenario5_queue_priority(void)
{
	Sim			sim;
	int			t,
				env,
				hi,
				lo,
				shi,
				slo,
				jlo,
				jhi,
				i;

	sim_init(&sim);
	t = sim_type(&sim, "ml.p4d.24xlarge");
	env = sim_env(&sim, "P4Env");
	sim_env_limit(&sim, env, t, 10);
	lo = sim_queue(&sim, "low", 1, FS_POLICY_FIFO);
	hi = sim_queue(&sim, "high", 10, FS_POLICY_FIFO);
	sim_queue_env(&sim, lo, env);
	sim_queue_env(&sim, hi, env);
	slo = sim_share(&sim, lo, "low");
	shi = sim_share(&sim, hi, "high");
	jlo = sim_submit(&sim, slo, 6, 0, t);
	sim_advance(&sim, FS_SECONDS(10));
	jhi = sim_submit(&sim, shi, 6, 0, t);
	sim_pass(&sim);
	CHECK(sim_decision(&sim, FS_DECISION_PLACE, ID(jhi)) != NULL);
	CHECK(sim_decision(&sim, FS_DECISION_PLACE, ID(jlo)) == NULL);

	/* a smaller job of the lower queue still uses what is left */
	i = sim_submit(&sim, slo, 4, 0, t);
	sim_pass(&sim);
	CHECK(sim_decision(&sim, FS_DECISION_PLACE, ID(i)) != NULL);
	sim_free(&sim);
}

/*
 * 6. Fallback: a job listing p5 then p4d runs on p4d when p5 is full, and
 * moves to p4d when SageMaker answers its p5 attempt with a capacity failure.
 */
static void
test_scenario6_instance_type_fallback(void)
{
	Sim			sim;
	int			p5,
				p4d,
				env,
				q,
				s,
				j,
				k;
	const FsDecision *d;

	sim_init(&sim);
	p5 = sim_type(&sim, "ml.p5.48xlarge");
	p4d = sim_type(&sim, "ml.p4d.24xlarge");
	env = sim_env(&sim, "GPUEnv");
	sim_env_limit(&sim, env, p5, 8);
	sim_env_limit(&sim, env, p4d, 16);
	q = sim_queue(&sim, "gpu-queue", 1, FS_POLICY_FIFO);
	sim_queue_env(&sim, q, env);
	s = sim_share(&sim, q, "gpu-queue");

	/* p5 full: the job lands on p4d */
	k = sim_run(&sim, s, env, p5, 8, 0);
	j = sim_submit(&sim, s, 4, 0, p5);
	sim_job_type(&sim, j, p4d);
	sim_pass(&sim);
	d = sim_decision(&sim, FS_DECISION_PLACE, ID(j));
	CHECK(d != NULL);
	CHECK_EQ(d ? d->instance_type : -1, p4d);

	/* p5 free: it lands on p5; SageMaker fails it for capacity; back-off; p4d */
	sim_finish(&sim, k);
	sim_finish(&sim, j);
	j = sim_submit(&sim, s, 4, 0, p5);
	sim_job_type(&sim, j, p4d);
	sim_pass(&sim);
	d = sim_decision(&sim, FS_DECISION_PLACE, ID(j));
	CHECK_EQ(d ? d->instance_type : -1, p5);

	sim.jobs[j].state = SIM_RUNNABLE;	/* CapacityError: back to RUNNABLE */
	sim.jobs[j].runnable_at = sim.now;
	sim.jobs[j].backoffs[0].environment = env;
	sim.jobs[j].backoffs[0].instance_type = p5;
	sim.jobs[j].backoffs[0].until = sim.now + FS_SECONDS(600);
	sim.jobs[j].n_backoffs = 1;
	sim_advance(&sim, FS_SECONDS(5));
	sim_pass(&sim);
	d = sim_decision(&sim, FS_DECISION_PLACE, ID(j));
	CHECK_EQ(d ? d->instance_type : -1, p4d);

	/* with p4d full too, the back-off is what it waits for */
	sim_finish(&sim, j);
	sim.jobs[j].state = SIM_RUNNABLE;
	sim_run(&sim, s, env, p4d, 16, 0);
	sim_pass(&sim);
	CHECK_EQ(sim_count(&sim, FS_DECISION_PLACE), 0);
	CHECK_CONTAINS(sim_wait_text(&sim, ID(j)), "insufficient unused capacity in GPUEnv for ml.p4d.24xlarge");

	/* once the back-off has expired it is free to use p5 again */
	sim_advance(&sim, FS_SECONDS(600));
	sim_pass(&sim);
	d = sim_decision(&sim, FS_DECISION_PLACE, ID(j));
	CHECK_EQ(d ? d->instance_type : -1, p5);
	sim_free(&sim);
}

const TestCase scenario_tests[] = {
	{"scenario1_borrow_and_reclaim", test_scenario1_borrow_and_reclaim},
	{"scenario2_in_share_preemption", test_scenario2_in_share_preemption},
	{"scenario3_share_weights", test_scenario3_share_weights},
	{"scenario4_steady_state_proportions", test_scenario4_steady_state_proportions},
	{"scenario5_queue_priority", test_scenario5_queue_priority},
	{"scenario6_instance_type_fallback", test_scenario6_instance_type_fallback},
};
const int	n_scenario_tests = sizeof(scenario_tests) / sizeof(scenario_tests[0]);
