/*-------------------------------------------------------------------------
 *
 * snapshot.c
 *		fairshare.queue_snapshot() and the pass side of fairshare.explain():
 *		what a dry pass says about a queue and about one job.
 *
 * Both run the pure core on the current state without writing anything,
 * with wait reasons collected, and read its answer: the order in which a
 * queue's RUNNABLE jobs would be placed (as AWS GetJobQueueSnapshot's front
 * of queue), and why each job is left waiting, in words and in numbers.
 *
 * They load the whole world as the owner of the fairshare catalog, because
 * a queue's order depends on every job in it, not only on those the caller
 * may see.  A submitter still sees the names of its own jobs only; the
 * other rows of the snapshot show the job id, share and priority.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_prelude.h"

#include "catalog/pg_authid.h"
#include "utils/acl.h"

#include "sql_api/args.h"
#include "sql_api/pass_input.h"
#include "sql_api/schedule.h"
#include "statement.h"
#include "tables/catalog_version.h"
#include "tables/lookup.h"

PG_FUNCTION_INFO_V1(fairshare_queue_snapshot);
PG_FUNCTION_INFO_V1(fairshare_explain);
PG_FUNCTION_INFO_V1(fairshare_explain_pass);

#define MAX_SNAPSHOT_JOBS	10000

/* May the caller see the names of every job (admins, viewers)? */
static bool
sees_all_jobs(Oid caller)
{
	Oid			admin = get_role_oid("fairshare_admin", true);
	Oid			viewer = get_role_oid("fairshare_viewer", true);

	return superuser_arg(caller) ||
		(OidIsValid(admin) && has_privs_of_role(caller, admin)) ||
		(OidIsValid(viewer) && has_privs_of_role(caller, viewer));
}

/* Run a dry pass as the catalog owner; returns its world and result. */
static PassWorld *
dry_pass(const char *focus_queue, const char *focus_share, int focus_prefix, FsResult **result)
{
	FairshareSavedUser saved;
	PassWorld  *world;

	saved = fairshare_become_catalog_owner();
	world = fairshare_load_world(PASS_PREFIX, focus_queue, focus_share, focus_prefix, true, NULL, PASS_PREFIX_MIN,
								 -1);
	fairshare_restore_user(saved);
	*result = fairshare_run_core(world);
	return world;
}

/* What the dry pass decided or said about one job, in words; NULL if nothing. */
static char *
pending_reason(const PassWorld *w, const FsResult *r, int64 job_id, const FsWaitReason **wait)
{
	*wait = NULL;
	for (int i = 0; i < r->n_decisions; i++)
	{
		const FsDecision *d = &r->decisions[i];

		if (d->job_id != job_id)
			continue;
		switch (d->kind)
		{
			case FS_DECISION_PLACE:
				return psprintf("fits now on %s, %s: the next pass places it",
								w->input.environments[d->environment].name,
								w->input.instance_type_names[d->instance_type]);
			case FS_DECISION_NOMINATE:
			case FS_DECISION_KEEP_NOMINATION:
			case FS_DECISION_MISCONFIGURED:
				return fairshare_decision_text(w, d);
			default:
				break;
		}
	}
	for (int i = 0; i < r->n_wait_reasons; i++)
		if (r->wait_reasons[i].job_id == job_id)
		{
			*wait = &r->wait_reasons[i];
			return fairshare_wait_text(w, &r->wait_reasons[i]);
		}
	return NULL;
}

Datum
fairshare_queue_snapshot(PG_FUNCTION_ARGS)
{
	char	   *queue_name;
	int32		max_jobs = PG_ARGISNULL(1) ? 100 : PG_GETARG_INT32(1);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Oid			caller = GetUserId();
	char	   *caller_name = psprintf("%s:%u", GetUserNameFromId(caller, false), caller);
	bool		all_names = sees_all_jobs(caller);
	PassWorld  *world;
	FsResult   *result;
	FsOrderEntry *order;
	int			n;
	int			q;
	FairshareSavedUser saved;

	fairshare_require_catalog_version();
	fairshare_require_arg(fcinfo, 0, "queue_snapshot", "job_queue");
	queue_name = text_to_cstring(PG_GETARG_TEXT_PP(0));

	if (max_jobs < 1 || max_jobs > MAX_SNAPSHOT_JOBS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_jobs %d is out of range", max_jobs),
				 errhint("Ask for 1 to %d jobs.", MAX_SNAPSHOT_JOBS)));
	InitMaterializedSRF(fcinfo, 0);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	/* as the owner: a viewer may not read the configuration tables */
	saved = fairshare_become_catalog_owner();
	{
		static FairshareStatement queue_stmt = {
			.what = "read the job queue",
			.sql = "SELECT state FROM fairshare.job_queues WHERE name = $1",
			.argtypes = {TEXTOID},
			.read_only = true,
			.max_rows = 1,
		};
		Datum		v[1] = {CStringGetTextDatum(queue_name)};

		if (fairshare_run_statement(&queue_stmt, v, NULL) == 0)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_OBJECT),
					 errmsg("job queue \"%s\" does not exist", queue_name),
					 errhint("SELECT name FROM fairshare.job_queues lists the queues; "
							 "viewers, who cannot read it: SELECT job_queue FROM fairshare.queue_status.")));
	}
	fairshare_restore_user(saved);

	world = dry_pass(queue_name, NULL, max_jobs, &result);
	q = fairshare_world_queue(world, queue_name);
	n = q < 0 ? 0 : fs_queue_order(&world->input, q, max_jobs, &world->allocator, &order);
	for (int i = 0; i < n; i++)
	{
		const FsShare *s = &world->input.shares[order[i].share];
		const FsRunnableJob *j = &s->runnable[order[i].job];
		const PassJobInfo *info = fairshare_world_job(world, j->job_id);
		const FsWaitReason *wait;
		char	   *reason = pending_reason(world, result, j->job_id, &wait);
		Datum		values[8];
		bool		nulls[8] = {false, false, false, false, false, false, false, false};
		bool		named = all_names || (info && info->submitted_by &&
										  strcmp(info->submitted_by, caller_name) == 0);

		values[0] = Int32GetDatum(order[i].position);
		values[1] = Int64GetDatum(j->job_id);
		if (named && info)
			values[2] = CStringGetTextDatum(info->job_name);
		else
			nulls[2] = true;
		if (world->shares[order[i].share].name)
			values[3] = CStringGetTextDatum(world->shares[order[i].share].name);
		else
			nulls[3] = true;
		values[4] = Int32GetDatum(j->priority);
		values[5] = DirectFunctionCall2(enum_in, CStringGetDatum("RUNNABLE"),
										ObjectIdGetDatum(rsinfo->setDesc->attrs[5].atttypid));
		values[6] = TimestampTzGetDatum((TimestampTz) j->runnable_at);
		if (reason)
			values[7] = CStringGetTextDatum(reason);
		else
			nulls[7] = true;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	fairshare_world_free(world);
	SPI_finish();
	return (Datum) 0;
}

static const char *
wait_kind_name(FsWaitKind kind)
{
	switch (kind)
	{
		case FS_WAIT_CAPACITY:
			return "CAPACITY";
		case FS_WAIT_HELD:
			return "HELD_FOR_ANOTHER_JOB";
		case FS_WAIT_RESERVED:
			return "RESERVED";
		case FS_WAIT_SHARE_LIMIT:
			return "SHARE_LIMIT";
		case FS_WAIT_NOMINATED:
			return "CAPACITY_BEING_FREED";
		case FS_WAIT_BACKOFF:
			return "CAPACITY_BACKOFF";
		case FS_WAIT_ENVIRONMENT_DISABLED:
			return "ENVIRONMENT_DISABLED";
		case FS_WAIT_STRICT_FIFO:
			return "STRICT_FIFO";
		case FS_WAIT_MISCONFIGURED:
			return "MISCONFIGURATION";
	}
	return "UNKNOWN";
}

/*
 * fairshare.explain(job_id): the caller must be able to see the job -- a
 * submitter its own (row-level security), admins and viewers any -- and
 * then fairshare._explain() builds the answer as the catalog owner: where
 * a job stands depends on jobs and tables the caller may not read (those
 * ahead of it in its share, capacity back-offs), and a viewer reads no
 * table at all.
 */
static FairshareStatement explain_stmt = {
	.what = "explain the job",
	.sql = "SELECT fairshare._explain($1)",
	.argtypes = {INT8OID},
	.max_rows = 1,
};

Datum
fairshare_explain(PG_FUNCTION_ARGS)
{
	int64		job_id;
	Datum		v[1];
	FairshareSavedUser saved;
	bool		isnull;
	Datum		answer;

	fairshare_require_catalog_version();
	fairshare_require_arg(fcinfo, 0, "explain", "job_id");
	job_id = PG_GETARG_INT64(0);
	v[0] = Int64GetDatum(job_id);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (!sees_all_jobs(GetUserId()))
		fairshare_require_visible_job(job_id);
	saved = fairshare_become_catalog_owner();
	if (fairshare_run_statement(&explain_stmt, v, NULL) != 1)
		elog(ERROR, "fairshare._explain failed");
	answer = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	if (!isnull)
		answer = SPI_datumTransfer(answer, false, -1);
	fairshare_restore_user(saved);
	SPI_finish();
	if (isnull)
		PG_RETURN_NULL();
	PG_RETURN_DATUM(answer);
}

/*
 * fairshare._explain_pass(job_id, job_queue, share, depth): what a dry pass
 * says about one RUNNABLE job, with the job's share loaded `depth' deep.
 * Called by fairshare._explain(), as the catalog owner, once explain() has
 * checked the job is visible to the user.  Returns one row:
 *	 position, ahead (job ids before it in the queue's order), reason,
 *	 wait_kind, service_environment, instance_type, needed, capacity_limit,
 *	 in_use, held, reserved, free, held_for_job, share_weight, share_usage
 *	 (fair shares), share_held, share_limit (quota shares)
 */
Datum
fairshare_explain_pass(PG_FUNCTION_ARGS)
{
	int64		job_id = PG_GETARG_INT64(0);
	char	   *queue_name = text_to_cstring(PG_GETARG_TEXT_PP(1));
	char	   *share_name = PG_ARGISNULL(2) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(2));
	int32		depth = PG_GETARG_INT32(3);
	TupleDesc	desc;
	Datum		values[17];
	bool		nulls[17];
	PassWorld  *world;
	FsResult   *result;
	FsOrderEntry *order;
	int			n = 0;
	int			q;
	const FsWaitReason *wait = NULL;
	char	   *reason;
	const PassJobInfo *info;
	HeapTuple	tuple;
	MemoryContext caller_cxt = CurrentMemoryContext;
	MemoryContext spi_cxt;

	fairshare_require_catalog_version();
	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "fairshare._explain_pass must return a record");
	desc = BlessTupleDesc(desc);
	memset(nulls, true, sizeof(nulls));

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	/* The caller must be able to see the job (row-level security). */
	fairshare_require_visible_job(job_id);
	world = dry_pass(queue_name, share_name, Min(Max(depth, 1), MAX_SNAPSHOT_JOBS), &result);
	q = fairshare_world_queue(world, queue_name);
	info = fairshare_world_job(world, job_id);
	if (q >= 0 && info != NULL && info->index >= 0)
	{
		Datum	   *ahead;
		int			n_ahead = 0;
		int			position = 0;

		n = fs_queue_order(&world->input, q, 0, &world->allocator, &order);
		ahead = palloc(sizeof(Datum) * Max(n, 1));
		for (int i = 0; i < n; i++)
		{
			if (order[i].job_id == job_id)
			{
				position = order[i].position;
				break;
			}
			ahead[n_ahead++] = Int64GetDatum(order[i].job_id);
		}
		if (position > 0)
		{
			values[0] = Int32GetDatum(position);
			nulls[0] = false;
			values[1] = PointerGetDatum(construct_array(ahead, Min(n_ahead, 20), INT8OID, 8,
														FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
			nulls[1] = false;
		}
		reason = pending_reason(world, result, job_id, &wait);
		if (reason)
		{
			values[2] = CStringGetTextDatum(reason);
			nulls[2] = false;
		}
		if (wait)
		{
			values[3] = CStringGetTextDatum(wait_kind_name(wait->kind));
			nulls[3] = false;
			if (wait->environment >= 0)
			{
				values[4] = CStringGetTextDatum(world->input.environments[wait->environment].name);
				nulls[4] = false;
			}
			if (wait->instance_type >= 0)
			{
				values[5] = CStringGetTextDatum(world->input.instance_type_names[wait->instance_type]);
				nulls[5] = false;
			}
			values[6] = Int32GetDatum(wait->needed);
			values[7] = Int64GetDatum(wait->limit);
			values[8] = Int64GetDatum(wait->in_use);
			values[9] = Int64GetDatum(wait->held);
			values[10] = Int64GetDatum(wait->reserved);
			values[11] = Int64GetDatum(wait->free);
			for (int c = 6; c <= 11; c++)
				nulls[c] = false;
			if (wait->held_for_job_id > 0)
			{
				values[12] = Int64GetDatum(wait->held_for_job_id);
				nulls[12] = false;
			}
		}
		if (info->share >= 0)
		{
			const FsShare *s = &world->input.shares[info->share];
			FsPolicyKind policy = world->shares[info->share].policy;

			values[13] = Float8GetDatum(s->weight);
			values[15] = Int64GetDatum(result->share_held[info->share]);
			nulls[13] = nulls[15] = false;
			if (policy == FS_POLICY_FAIR_SHARE)
			{
				values[14] = Float8GetDatum(result->share_usage[info->share]);
				nulls[14] = false;
			}
			if (policy == FS_POLICY_QUOTA_SHARE)
			{
				const FsRunnableJob *j = &s->runnable[info->index];
				int			type = wait && wait->instance_type >= 0 ? wait->instance_type :
					(j->n_instance_types > 0 ? j->instance_types[0] : -1);
				int64		limit = -1;

				for (int l = 0; l < s->n_limits; l++)
					if (s->limits[l].unit == type ||
						(s->limits[l].unit == FS_UNIT_NUM_INSTANCES && limit < 0))
						limit = s->limits[l].max_capacity;
				if (limit >= 0)
				{
					values[16] = Int64GetDatum(limit);
					nulls[16] = false;
				}
			}
		}
	}
	/*
	 * The row outlives SPI_finish(), which frees everything allocated since
	 * SPI_connect(): it is built in the caller's context.  (Built in SPI's,
	 * it was read after being freed, and at a few thousand jobs the memory
	 * was gone: explain() crashed the backend.)
	 */
	spi_cxt = MemoryContextSwitchTo(caller_cxt);
	tuple = heap_form_tuple(desc, values, nulls);
	MemoryContextSwitchTo(spi_cxt);
	fairshare_world_free(world);
	SPI_finish();
	PG_RETURN_DATUM(HeapTupleGetDatum(tuple));
}
