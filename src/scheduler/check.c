/*-------------------------------------------------------------------------
 *
 * check.c
 *		fs_check_input(): is a pass's input consistent?  And
 *		fs_policy_kind_from_name(), the reading of a policy's kind.
 *
 * The wrapper builds the input from the catalog, so an inconsistency is a
 * bug there; this says which entry is wrong so the wrapper can raise an
 * internal error instead of acting on meaningless decisions.  fs_schedule()
 * itself never trusts an index: it skips what is out of range.
 *
 * Never include a PostgreSQL header here.
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"

static bool
bad(char *message, size_t size, const char *what, int index, const char *detail)
{
	if (size > 0)
		snprintf(message, size, "%s %d: %s", what, index, detail);
	return false;
}

static bool
limits_ok(const FsInput *in, const FsLimit *limits, int n)
{
	int			i,
				j;

	if (n < 0 || (n > 0 && limits == NULL))
		return false;
	for (i = 0; i < n; i++)
	{
		if (limits[i].unit < FS_UNIT_NUM_INSTANCES || limits[i].unit >= in->n_instance_types ||
			limits[i].max_capacity < 0)
			return false;
		for (j = 0; j < i; j++)
			if (limits[j].unit == limits[i].unit)
				return false;
	}
	return true;
}

bool
fs_check_input(const FsInput *in, char *message, size_t size)
{
	int			i,
				j,
				k;

	if (size > 0)
		message[0] = '\0';
	if (in->n_instance_types < 0 || in->n_environments < 0 || in->n_queues < 0 ||
		in->n_shares < 0 || in->n_running < 0)
		return bad(message, size, "input", 0, "negative count");
	for (i = 0; i < in->n_environments; i++)
		if (!limits_ok(in, in->environments[i].limits, in->environments[i].n_limits))
			return bad(message, size, "environment", i, "limit with a bad unit, a negative or a repeated unit");
	for (i = 0; i < in->n_queues; i++)
	{
		const FsQueue *q = &in->queues[i];

		if (q->policy < FS_POLICY_FIFO || q->policy > FS_POLICY_QUOTA_SHARE)
			return bad(message, size, "queue", i, "unknown policy");
		if (q->n_environments < 0 || (q->n_environments > 0 && q->environments == NULL))
			return bad(message, size, "queue", i, "bad environment list");
		for (j = 0; j < q->n_environments; j++)
			if (q->environments[j] < 0 || q->environments[j] >= in->n_environments)
				return bad(message, size, "queue", i, "environment index out of range");
		if (q->compute_reservation < 0 || q->compute_reservation > 99)
			return bad(message, size, "queue", i, "compute_reservation outside 0..99");
	}
	for (i = 0; i < in->n_shares; i++)
	{
		const FsShare *s = &in->shares[i];

		if (s->queue < 0 || s->queue >= in->n_queues)
			return bad(message, size, "share", i, "queue index out of range");
		if (!limits_ok(in, s->limits, s->n_limits))
			return bad(message, size, "share", i, "limit with a bad unit, a negative or a repeated unit");
		if (s->borrow_limit < -1)
			return bad(message, size, "share", i, "borrow_limit below -1");
		if (s->n_runnable < 0 || (s->n_runnable > 0 && s->runnable == NULL))
			return bad(message, size, "share", i, "bad runnable list");
		for (j = 0; j < s->n_runnable; j++)
		{
			const FsRunnableJob *job = &s->runnable[j];

			if (job->job_id <= 0)
				return bad(message, size, "share", i, "runnable job with job_id <= 0");
			if (job->n_instance_types <= 0 || job->instance_types == NULL)
				return bad(message, size, "share", i, "runnable job without instance types");
			for (k = 0; k < job->n_instance_types; k++)
				if (job->instance_types[k] < 0 || job->instance_types[k] >= in->n_instance_types)
					return bad(message, size, "share", i, "runnable job with an instance type out of range");
			if (job->n_backoffs < 0 || (job->n_backoffs > 0 && job->backoffs == NULL))
				return bad(message, size, "share", i, "runnable job with a bad back-off list");
		}
	}
	for (i = 0; i < in->n_running; i++)
	{
		const FsRunningJob *r = &in->running[i];

		if (r->environment < 0 || r->environment >= in->n_environments)
			return bad(message, size, "running job", i, "environment index out of range");
		if (r->instance_type < 0 || r->instance_type >= in->n_instance_types)
			return bad(message, size, "running job", i, "instance type out of range");
		if (r->share < -1 || r->share >= in->n_shares)
			return bad(message, size, "running job", i, "share index out of range");
		if (r->instance_count <= 0)
			return bad(message, size, "running job", i, "instance_count <= 0");
	}
	return true;
}

FsPolicyKind
fs_policy_kind_from_name(const char *kind)
{
	if (kind != NULL && strcmp(kind, "FAIR_SHARE") == 0)
		return FS_POLICY_FAIR_SHARE;
	if (kind != NULL && strcmp(kind, "QUOTA_SHARE") == 0)
		return FS_POLICY_QUOTA_SHARE;
	return FS_POLICY_FIFO;
}
