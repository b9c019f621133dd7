/*-------------------------------------------------------------------------
 *
 * pass_input.c
 *		Load what one scheduling pass needs into the pure core's structs.
 *
 * A pass reads only what it needs, each through an index: the configuration
 * (small), the jobs that hold capacity (bounded by capacity), and the head
 * of every share's RUNNABLE jobs (a fixed-size prefix per share, read from
 * the partial indexes jobs_runnable_*_idx), so its cost does not grow with
 * the backlog.  Fair-share identifiers are found with a skip scan over the
 * same index rather than a DISTINCT over every RUNNABLE job, which reads
 * each share's first job on the way; a bounded pass reads deeper heads only
 * for the fair shares it will serve first (PASS_FAIR_DEEP_SHARES).  The jobs that
 * hold capacity are read first: a share that can be given nothing in the
 * pass (its queue's environments are full, and it cannot preempt: the core's
 * fs_shares_without_room()) has only its nominated jobs read, so a pass on
 * a saturated cluster does not grow with the shares that wait.
 *
 * Everything is copied into one memory context owned by the PassWorld, so
 * the caller can finish SPI and still use it, and frees it in one go.
 * Statements are prepared once per backend and kept (statement.h); the
 * plan cache re-plans them if the extension is re-created.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_prelude.h"

#include "utils/array.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "settings.h"
#include "datums.h"
#include "progress.h"
#include "statement.h"
#include "sql_api/pass_input.h"
#include "tables/job_status.h"

#define TYPE_KEY_LEN 128
#define SHARE_KEY_LEN 400
#define SHARE_KEY_SEPARATOR '\x1f'

typedef struct TypeEntry
{
	char		name[TYPE_KEY_LEN];
	int			id;
} TypeEntry;

typedef struct ShareEntry
{
	char		key[SHARE_KEY_LEN];
	int			share;
} ShareEntry;

/*
 * The jobs that hold capacity, read before the shares: which queues have
 * room left depends on them, and they name the fair shares that hold
 * capacity.  Their names are kept here until the shares are known.
 */
typedef struct HeldJobs
{
	int			n;
	const char **queue;
	const char **share;			/* share identifier, quota share, or NULL */
	const char **identifier;	/* share identifier, or NULL */
	const char **job_name;
	int		   *share_of;		/* the share's index once known, else -1 */
} HeldJobs;

/*
 * The statements that read the world.  None is read-only: a pass must see
 * what _prepare_pass just changed.
 */
static FairshareStatement environments_stmt = {
	.what = "read the service environments",
	.sql = "SELECT name, state = 'ENABLED' FROM fairshare.service_environments ORDER BY name",
};
static FairshareStatement limits_stmt = {
	.what = "read the capacity limits",
	.sql = "SELECT service_environment, capacity_unit, max_capacity::bigint FROM fairshare.capacity_limits "
		"ORDER BY service_environment, capacity_unit",
};
static FairshareStatement queues_stmt = {
	.what = "read the enabled job queues",
	.sql = "SELECT q.name, q.priority, coalesce(p.kind, 'FIFO'), q.strict_fifo, "
		"coalesce(p.share_decay_seconds, 0), coalesce(p.compute_reservation, 0), "
		"coalesce(p.idle_assignment, 'FIFO'), q.scheduling_policy "
		"FROM fairshare.job_queues q LEFT JOIN fairshare.scheduling_policies p ON p.name = q.scheduling_policy "
		"WHERE q.state = 'ENABLED' ORDER BY q.name",
};
static FairshareStatement queue_environments_stmt = {
	.what = "read the queues' environments",
	.sql = "SELECT job_queue, service_environment FROM fairshare.queue_environments ORDER BY job_queue, \"order\"",
};
static FairshareStatement quota_shares_stmt = {
	.what = "read the quota shares",
	.sql = "SELECT job_queue, name, strategy, coalesce(borrow_limit, -1), in_share_preemption, weight::float8 "
		"FROM fairshare.quota_shares WHERE state = 'ENABLED' ORDER BY job_queue, name",
};
static FairshareStatement quota_limits_stmt = {
	.what = "read the quota shares' limits",
	.sql = "SELECT job_queue, quota_share, capacity_unit, max_capacity::bigint FROM fairshare.quota_share_limits",
};
static FairshareStatement weights_stmt = {
	.what = "read the share distributions",
	.sql = "SELECT scheduling_policy, share_identifier, weight_factor::float8 FROM fairshare.share_distribution "
		"ORDER BY scheduling_policy",
};

/*
 * The fair shares of the queues in $1 that hold capacity, are nominated or
 * have stored usage that has not decayed away.  Those with RUNNABLE jobs
 * come from fair_first_jobs_stmt; those of jobs holding capacity from the
 * running jobs, which a pass reads anyway.
 */
static FairshareStatement fair_shares_stmt = {
	.what = "read the fair shares",
	.sql = "SELECT job_queue, share_identifier FROM fairshare.jobs"
		"  WHERE status = 'RUNNABLE' AND nomination_kind IS NOT NULL AND job_queue = ANY ($1)"
		"  AND share_identifier IS NOT NULL"
		" UNION SELECT job_queue, share_identifier FROM fairshare.share_usage"
		"  WHERE job_queue = ANY ($1) AND usage >= 0.01",
	.argtypes = {TEXTARRAYOID},
};
static FairshareStatement usage_stmt = {
	.what = "read the fair shares' usage",
	.sql = "SELECT job_queue, share_identifier, usage, updated_at FROM fairshare.share_usage",
};

/*
 * A job's time limit in seconds, or NULL when it has none that can be
 * trusted: the request's StoppingCondition.MaxRuntimeInSeconds (SageMaker
 * stops the job when it is reached; 86400, SageMaker's default, when the
 * request does not say), or fairshare's own attempt_duration_seconds if that
 * is shorter.  A value that is not a positive number counts as none.
 */
#define TIME_LIMIT(p) \
		"least(CASE WHEN " p "request #> '{StoppingCondition,MaxRuntimeInSeconds}' IS NULL THEN 86400" \
		" WHEN jsonb_typeof(" p "request #> '{StoppingCondition,MaxRuntimeInSeconds}') = 'number'" \
		"  AND (" p "request #>> '{StoppingCondition,MaxRuntimeInSeconds}')::numeric >= 1" \
		" THEN least(floor((" p "request #>> '{StoppingCondition,MaxRuntimeInSeconds}')::numeric), 100000000)::bigint" \
		" END, " p "attempt_duration_seconds)"

/* The columns of RUNNABLE_COLUMNS are 3 to 14 of a heads query; the share's index follows. */
#define RUNNABLE_SHARE_COLUMN 15

#define RUNNABLE_COLUMNS \
		"j.job_id, j.job_name, j.scheduling_priority, j.runnable_at, j.instance_count, j.instance_types, " \
		"j.nomination_kind, j.nominated_environment, j.nominated_instance_type, j.nominated_at, j.submitted_by || ':' || j.submitter_oid, " \
	TIME_LIMIT("j.")

/*
 * The head of each share, n + 1 rows (the extra one says "there is more"),
 * with the share's index in the pass (the last column), so that its rows
 * need no lookup by name.  Nominated jobs are not part of a head: they are
 * all read anyway (nominated_stmt), and counted in the head they hid the
 * jobs behind them -- a share whose first 512 jobs reclaimed room, all
 * nominated while their victims stopped, had no other job loaded, and its
 * 513th could not reclaim until those victims had stopped.  So a share's
 * n is its head plus its nominated jobs, and load_runnable counts only
 * the others.  (A filter on nomination_kind here made the heads query
 * 1.5-3 times slower.)  Rows come in no order SQL promises;
 * load_runnable sorts and trims them (they usually come share by share in
 * the arrays' order, each share's in its order, which it checks).  A fair
 * share and a quota share order their jobs the same way; only the column
 * naming the share differs.
 */
#define SHARE_HEADS_SQL(share_column) \
		"SELECT s.q, s.id, " RUNNABLE_COLUMNS ", s.share" \
		" FROM unnest($1::text[], $2::text[], $3::int[], $4::int[]) AS s(q, id, n, share)," \
		" LATERAL (SELECT * FROM fairshare.jobs WHERE status = 'RUNNABLE' AND job_queue = s.q" \
		"          AND " share_column " = s.id" \
		"          ORDER BY scheduling_priority DESC, runnable_at, job_id LIMIT s.n + 1) j"

static FairshareStatement fifo_heads_stmt = {
	.what = "read the heads of FIFO queues",
	.sql = "SELECT s.q, NULL::text, " RUNNABLE_COLUMNS ", s.share"
		" FROM unnest($1::text[], $2::int[], $3::int[]) AS s(q, n, share),"
		" LATERAL (SELECT * FROM fairshare.jobs WHERE status = 'RUNNABLE' AND job_queue = s.q"
		"          AND share_identifier IS NULL AND quota_share IS NULL"
		"          ORDER BY runnable_at, job_id LIMIT s.n + 1) j",
	.argtypes = {TEXTARRAYOID, INT4ARRAYOID, INT4ARRAYOID},
};
static FairshareStatement fair_heads_stmt = {
	.what = "read the heads of fair shares",
	.sql = SHARE_HEADS_SQL("share_identifier"),
	.argtypes = {TEXTARRAYOID, TEXTARRAYOID, INT4ARRAYOID, INT4ARRAYOID},
};
static FairshareStatement quota_heads_stmt = {
	.what = "read the heads of quota shares",
	.sql = SHARE_HEADS_SQL("quota_share"),
	.argtypes = {TEXTARRAYOID, TEXTARRAYOID, INT4ARRAYOID, INT4ARRAYOID},
};
/*
 * The fair shares with RUNNABLE jobs in the queues in $1, each with its
 * first job: a skip scan of the index in share order, one probe per share
 * that lands on that share's first job (the order of the heads), so it
 * finds the shares and their first jobs at once.  A bounded pass loads
 * deeper heads only for the shares it will serve first (load_runnable);
 * the others keep the job found here.  Rows come a share at a time, the
 * same identifier never twice in a queue.
 */
#define FAIR_FIRST_JOB_SQL(queue, after) \
		" (SELECT j.job_queue, j.share_identifier, " RUNNABLE_COLUMNS \
		"  FROM fairshare.jobs j WHERE j.status = 'RUNNABLE' AND j.job_queue = " queue \
		"  AND j.share_identifier " after \
		"  ORDER BY j.share_identifier, j.scheduling_priority DESC, j.runnable_at, j.job_id LIMIT 1)"

static FairshareStatement fair_first_jobs_stmt = {
	.what = "read the fair shares and their first jobs",
	.sql = "WITH RECURSIVE firsts AS ("
		"  SELECT f.* FROM unnest($1::text[]) AS q(name), LATERAL"
		FAIR_FIRST_JOB_SQL("q.name", "IS NOT NULL") " f"
		"  UNION ALL"
		"  SELECT f.* FROM firsts p, LATERAL"
		FAIR_FIRST_JOB_SQL("p.job_queue", "> p.share_identifier") " f)"
		" SELECT * FROM firsts",
	.argtypes = {TEXTARRAYOID},
};
/* Nominated jobs are always loaded, wherever they stand in their share. */
static FairshareStatement nominated_stmt = {
	.what = "read the nominated jobs",
	.sql = "SELECT j.job_queue, coalesce(j.share_identifier, j.quota_share), " RUNNABLE_COLUMNS
		" FROM fairshare.jobs j WHERE j.status = 'RUNNABLE' AND j.nomination_kind IS NOT NULL",
};
/*
 * (A join with the ids rather than job_id = ANY ($2): the planner estimates
 * = ANY element by element, and re-plans with each pass's array: 4% of a
 * steady pass at 1,000 shares, 65,000 ids.)
 */
static FairshareStatement backoffs_stmt = {
	.what = "read the capacity back-offs",
	.sql = "SELECT b.job_id, b.service_environment, b.instance_type, b.until "
		"FROM unnest($2::bigint[]) AS i(id) JOIN fairshare.capacity_backoffs b ON b.job_id = i.id "
		"WHERE b.until > $1 ORDER BY b.job_id",
	.argtypes = {TIMESTAMPTZOID, INT8ARRAYOID},
};
/*
 * Checkpoints, for the work a preemption would lose: whether the request
 * has a CheckpointConfig, and for such a job that trains (RUNNING: SageMaker
 * says Training or Uploading) when it last began to, from its events (an
 * index probe per such job; it resumes from its checkpoint in every attempt,
 * so only the last start counts), and its queue's checkpoint_interval (a
 * primary-key probe per such job; NULL: fairshare.checkpoint_interval), in
 * whole seconds rounded up, so that any interval above 0 counts.
 */
static FairshareStatement running_stmt = {
	.what = "read the jobs that hold capacity",
	.sql = "SELECT job_id, job_name, job_queue, coalesce(share_identifier, quota_share), service_environment, "
		"instance_type, instance_count, scheduling_priority, coalesce(started_at, scheduled_at), "
		"stop_requested_at IS NOT NULL, CASE WHEN stop_kind = 'PREEMPT' THEN preempted_for END, "
	TIME_LIMIT("") ", "
		"jsonb_typeof(request -> 'CheckpointConfig') = 'object', "
		"CASE WHEN status = 'RUNNING' AND jsonb_typeof(request -> 'CheckpointConfig') = 'object' THEN"
		" (SELECT max(e.at) FROM fairshare.job_events e WHERE e.job_id = jobs.job_id AND e.new_status = 'RUNNING') END, "
		"share_identifier, "
		"CASE WHEN jsonb_typeof(request -> 'CheckpointConfig') = 'object' THEN"
		" (SELECT ceil(extract(epoch FROM q.checkpoint_interval))::int4 FROM fairshare.job_queues q"
		"  WHERE q.name = jobs.job_queue) END"
		" FROM fairshare.jobs WHERE status IN " FS_PLACED_STATUSES_SQL,
};

/* A text Datum of a deformed row, copied into cxt; NULL when it is null. */
static const char *
datum_text(Datum d, bool isnull, MemoryContext cxt)
{
	MemoryContext old;
	char	   *s;

	if (isnull)
		return NULL;
	old = MemoryContextSwitchTo(cxt);
	s = TextDatumGetCString(d);
	MemoryContextSwitchTo(old);
	return s;
}

/* Column accessors over SPI_tuptable. */
static char *
col_text(uint64 row, int col, MemoryContext cxt)
{
	bool		isnull;
	Datum		d = SPI_getbinval(SPI_tuptable->vals[row], SPI_tuptable->tupdesc, col, &isnull);
	char	   *s;

	if (isnull)
		return NULL;
	s = TextDatumGetCString(d);
	return cxt ? MemoryContextStrdup(cxt, s) : s;
}

static int64
col_int(uint64 row, int col, int64 if_null)
{
	bool		isnull;
	Datum		d = SPI_getbinval(SPI_tuptable->vals[row], SPI_tuptable->tupdesc, col, &isnull);
	Oid			type = SPI_gettypeid(SPI_tuptable->tupdesc, col);

	if (isnull)
		return if_null;
	if (type == INT8OID)
		return DatumGetInt64(d);
	if (type == INT2OID)
		return DatumGetInt16(d);
	return DatumGetInt32(d);
}

static bool
col_bool(uint64 row, int col)
{
	bool		isnull;
	Datum		d = SPI_getbinval(SPI_tuptable->vals[row], SPI_tuptable->tupdesc, col, &isnull);

	return !isnull && DatumGetBool(d);
}

static double
col_float(uint64 row, int col)
{
	bool		isnull;
	Datum		d = SPI_getbinval(SPI_tuptable->vals[row], SPI_tuptable->tupdesc, col, &isnull);

	return isnull ? 0.0 : DatumGetFloat8(d);
}

static FsTime
col_time(uint64 row, int col)
{
	bool		isnull;
	Datum		d = SPI_getbinval(SPI_tuptable->vals[row], SPI_tuptable->tupdesc, col, &isnull);

	return isnull ? 0 : (FsTime) DatumGetTimestampTz(d);
}

static void *
world_alloc(void *ctx, size_t size)
{
	return MemoryContextAllocHuge((MemoryContext) ctx, Max(size, 1));
}

static void *
alloc_array(PassWorld *w, size_t n, size_t size)
{
	return MemoryContextAllocZero(w->cxt, Max(n, 1) * size);
}

static int
intern_type(PassWorld *w, const char *name)
{
	TypeEntry  *e;
	bool		found;

	if (strlen(name) >= TYPE_KEY_LEN)
		ereport(ERROR,
				(errcode(ERRCODE_NAME_TOO_LONG),
				 errmsg("instance type name \"%s\" is too long", name)));
	e = hash_search(w->type_ids, name, HASH_ENTER, &found);
	if (!found)
		e->id = hash_get_num_entries(w->type_ids) - 1;
	return e->id;
}

static int
capacity_unit(PassWorld *w, const char *unit)
{
	return strcmp(unit, "NUM_INSTANCES") == 0 ? FS_UNIT_NUM_INSTANCES : intern_type(w, unit);
}

static int
environment_index(const PassWorld *w, const char *name)
{
	if (name == NULL)
		return -1;
	for (int i = 0; i < w->input.n_environments; i++)
		if (strcmp(w->input.environments[i].name, name) == 0)
			return i;
	return -1;
}

int
fairshare_world_queue(const PassWorld *w, const char *name)
{
	for (int i = 0; i < w->input.n_queues; i++)
		if (strcmp(w->input.queues[i].name, name) == 0)
			return i;
	return -1;
}

static void
share_key(char *key, const char *queue, const char *name)
{
	snprintf(key, SHARE_KEY_LEN, "%s%c%s", queue, SHARE_KEY_SEPARATOR, name ? name : "");
}

/*
 * Jobs that can never fit (MISCONFIGURED) at the head of a share.  The core
 * passes over them, so they must not take the places of the jobs a head is
 * read for: a FIFO queue with more of them at its front than its head holds
 * would otherwise never reach the jobs behind them.  So a share whose head
 * held k such jobs is read k jobs deeper (load_runnable; twice as deep while
 * their count grows, below).  The counts are
 * kept in the backend between passes -- the dispatcher runs every pass in
 * one backend -- for the shares that have such jobs only: a count that is
 * too large costs rows read, one too small a round of the pass
 * (fairshare_note_misconfigured()).
 */
typedef struct MisconfiguredHead
{
	char		key[SHARE_KEY_LEN];
	int			count;
} MisconfiguredHead;

static HTAB *misconfigured_heads = NULL;

/*
 * Fair shares whose first job, all a bounded pass read of them (they were
 * not among the shares its turn serves first: first_only), waited: the job
 * behind it may fit now, and back-fill can only place what was read.  Each
 * is read a head in the backend's next passes while that same job stands
 * first (its id is kept), then ranked again as before.
 */
typedef struct WaitingFirstJob
{
	char		key[SHARE_KEY_LEN];
	int64		job_id;
} WaitingFirstJob;

static HTAB *waiting_first_jobs = NULL;

/*
 * The two tables above keep an entry only while its share has jobs to read;
 * a share that goes away (its jobs ended, its identifier never used again)
 * leaves its entry.  So that a backend that runs for months does not grow
 * with every identifier it ever saw, a table with more entries than
 * SHARE_HINTS_MAX is emptied: what it forgets costs a round to learn again.
 */
#define SHARE_HINTS_MAX 50000

/* *table, made (in TopMemoryContext, keyed by share_key()) or emptied as above. */
static HTAB *
share_hints(HTAB **table, const char *name, Size entrysize)
{
	if (*table != NULL && hash_get_num_entries(*table) > SHARE_HINTS_MAX)
	{
		hash_destroy(*table);
		*table = NULL;
	}
	if (*table == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = SHARE_KEY_LEN;
		ctl.entrysize = entrysize;
		ctl.hcxt = TopMemoryContext;
		*table = hash_create(name, 16, &ctl, HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);
	}
	return *table;
}

/* Is `key''s first job, job_id, one that waited?  Forget it once another is first. */
static bool
first_job_waited(const char *key, int64 job_id)
{
	WaitingFirstJob *e;

	if (waiting_first_jobs == NULL || hash_get_num_entries(waiting_first_jobs) == 0)
		return false;
	e = hash_search(waiting_first_jobs, key, HASH_FIND, NULL);
	if (e == NULL)
		return false;
	if (e->job_id == job_id)
		return true;
	(void) hash_search(waiting_first_jobs, key, HASH_REMOVE, NULL);
	return false;
}

bool
fairshare_note_waiting_first_jobs(const PassWorld *w, const int *decided)
{
	bool		any_new = false;

	(void) share_hints(&waiting_first_jobs, "fairshare waiting first jobs", sizeof(WaitingFirstJob));
	for (int s = 0; s < w->input.n_shares; s++)
	{
		const FsShare *share = &w->input.shares[s];
		char		key[SHARE_KEY_LEN];
		WaitingFirstJob *e;
		bool		found;

		/* a fair share read to its first job only, which got no decision */
		if (w->shares[s].policy != FS_POLICY_FAIR_SHARE || share->n_runnable != 1 ||
			!share->more_runnable || decided[s] > 0)
			continue;
		share_key(key, w->input.queues[share->queue].name, share->name);
		e = hash_search(waiting_first_jobs, key, HASH_ENTER, &found);
		if (!found || e->job_id != share->runnable[0].job_id)
			any_new = true;
		e->job_id = share->runnable[0].job_id;
	}
	return any_new;
}

static int
misconfigured_head_count(const char *key)
{
	MisconfiguredHead *e;

	if (misconfigured_heads == NULL || hash_get_num_entries(misconfigured_heads) == 0)
		return 0;
	e = hash_search(misconfigured_heads, key, HASH_FIND, NULL);
	return e ? e->count : 0;
}

bool
fairshare_note_misconfigured(const PassWorld *w, const int *misconfigured, bool *grew)
{
	bool		any_grew = false;

	(void) share_hints(&misconfigured_heads, "fairshare misconfigured heads", sizeof(MisconfiguredHead));
	for (int s = 0; s < w->input.n_shares; s++)
	{
		const FsShare *share = &w->input.shares[s];
		char		key[SHARE_KEY_LEN];
		MisconfiguredHead *e;
		int			count = Min(misconfigured[s], PASS_MISCONFIGURED_MAX);
		bool		found;

		grew[s] = false;
		/* a share whose head was not read says nothing about its head */
		if (share->n_runnable == 0 || (count == 0 && hash_get_num_entries(misconfigured_heads) == 0))
			continue;
		share_key(key, w->input.queues[share->queue].name, share->name);
		if (count == 0)
		{
			(void) hash_search(misconfigured_heads, key, HASH_REMOVE, NULL);
			continue;
		}
		/*
		 * More than the head was read past, with more jobs beyond it: there
		 * may be more such jobs further on, so read twice as far past them
		 * next, and a sweep of thousands is passed in a few rounds rather
		 * than a head a round.  (Once the count stops growing it is the
		 * exact one, and the next pass reads no further than it needs.)
		 */
		e = hash_search(misconfigured_heads, key, HASH_ENTER, &found);
		grew[s] = !found || count > e->count;
		if (grew[s] && share->more_runnable)
			count = Min(count * 2, PASS_MISCONFIGURED_MAX);
		any_grew |= grew[s];
		e->count = count;
	}
	return any_grew;
}

static int
share_index(const PassWorld *w, const char *queue, const char *name)
{
	char		key[SHARE_KEY_LEN];
	ShareEntry *e;

	share_key(key, queue, name);
	e = hash_search(w->share_ids, key, HASH_FIND, NULL);
	return e ? e->share : -1;
}

/* ---------- environments, queues ---------- */

static void
load_environments(PassWorld *w)
{
	FsEnvironment *envs;
	FsLimit    *limits;
	int			n;

	fairshare_run_statement(&environments_stmt, NULL, NULL);
	n = (int) SPI_processed;
	envs = alloc_array(w, n, sizeof(FsEnvironment));
	for (int i = 0; i < n; i++)
	{
		envs[i].name = col_text(i, 1, w->cxt);
		envs[i].enabled = col_bool(i, 2);
	}
	w->input.environments = envs;
	w->input.n_environments = n;

	fairshare_run_statement(&limits_stmt, NULL, NULL);
	limits = alloc_array(w, SPI_processed, sizeof(FsLimit));
	for (uint64 r = 0; r < SPI_processed; r++)
	{
		char	   *env_name = col_text(r, 1, NULL);
		int			e = environment_index(w, env_name);

		if (e < 0)
			continue;
		/* Rows are ordered by environment, so each one's limits are adjacent. */
		if (envs[e].n_limits == 0)
			envs[e].limits = &limits[r];
		limits[r].unit = capacity_unit(w, col_text(r, 2, NULL));
		limits[r].max_capacity = col_int(r, 3, 0);
		envs[e].n_limits++;
	}
}

/* Returns the scheduling policy name of each queue (NULL for FIFO). */
static char **
load_queues(PassWorld *w)
{
	FsQueue    *queues;
	char	  **policies;
	int			n;
	int		   *env_lists;

	fairshare_run_statement(&queues_stmt, NULL, NULL);
	n = (int) SPI_processed;
	queues = alloc_array(w, n, sizeof(FsQueue));
	policies = alloc_array(w, n, sizeof(char *));
	for (int i = 0; i < n; i++)
	{
		char	   *idle = col_text(i, 7, NULL);

		queues[i].name = col_text(i, 1, w->cxt);
		queues[i].priority = (int) col_int(i, 2, 0);
		queues[i].policy = fs_policy_kind_from_name(col_text(i, 3, NULL));
		queues[i].strict_fifo = col_bool(i, 4);
		queues[i].share_decay = FS_SECONDS(col_int(i, 5, 0));
		queues[i].compute_reservation = (int) col_int(i, 6, 0);
		queues[i].idle_assignment = strcmp(idle, "FAIR") == 0 ? FS_IDLE_FAIR : FS_IDLE_FIFO;
		policies[i] = col_text(i, 8, w->cxt);
	}
	w->input.queues = queues;
	w->input.n_queues = n;

	fairshare_run_statement(&queue_environments_stmt, NULL, NULL);
	env_lists = alloc_array(w, SPI_processed, sizeof(int));
	for (uint64 r = 0; r < SPI_processed; r++)
	{
		int			q = fairshare_world_queue(w, col_text(r, 1, NULL));
		int			e = environment_index(w, col_text(r, 2, NULL));

		if (q < 0 || e < 0)
			continue;
		if (queues[q].n_environments == 0)
			queues[q].environments = &env_lists[r];
		env_lists[r] = e;
		queues[q].n_environments++;
	}
	return policies;
}

/* ---------- shares ---------- */

typedef struct ShareList
{
	FsShare    *shares;
	PassShareInfo *info;
	int			n;
	int			cap;
} ShareList;

typedef struct LoadedJob
{
	int			share;
	FsRunnableJob job;
	const char *job_name;
	const char *submitted_by;
} LoadedJob;

typedef struct JobList
{
	LoadedJob  *jobs;
	int			n;
	int			cap;
} JobList;

static int
add_share(PassWorld *w, ShareList *list, int queue, const char *name)
{
	char		key[SHARE_KEY_LEN];
	ShareEntry *e;
	bool		found;
	FsShare    *s;

	if (strlen(w->input.queues[queue].name) + (name ? strlen(name) : 0) + 2 > SHARE_KEY_LEN)
		elog(ERROR, "share name too long");
	share_key(key, w->input.queues[queue].name, name);
	e = hash_search(w->share_ids, key, HASH_ENTER, &found);
	if (found)
		return e->share;
	if (list->n == list->cap)
	{
		list->cap = Max(16, list->cap * 2);
		list->shares = list->shares ?
			repalloc_huge(list->shares, sizeof(FsShare) * list->cap) :
			MemoryContextAllocHuge(w->cxt, sizeof(FsShare) * list->cap);
		list->info = list->info ?
			repalloc_huge(list->info, sizeof(PassShareInfo) * list->cap) :
			MemoryContextAllocHuge(w->cxt, sizeof(PassShareInfo) * list->cap);
	}
	s = &list->shares[list->n];
	memset(s, 0, sizeof(*s));
	s->name = name ? MemoryContextStrdup(w->cxt, name) : w->input.queues[queue].name;
	s->queue = queue;
	s->weight = 1.0;
	s->borrow_limit = -1;
	list->info[list->n].queue = w->input.queues[queue].name;
	list->info[list->n].name = name ? s->name : NULL;
	list->info[list->n].policy = w->input.queues[queue].policy;
	e->share = list->n;
	return list->n++;
}

static FsStrategy
strategy_of(const char *s)
{
	if (strcmp(s, "LEND") == 0)
		return FS_STRATEGY_LEND;
	if (strcmp(s, "LEND_AND_BORROW") == 0)
		return FS_STRATEGY_LEND_AND_BORROW;
	return FS_STRATEGY_RESERVE;
}

static void collect_first_jobs(PassWorld *w, ShareList *shares, JobList *firsts, Datum queues);

/*
 * The shares of the pass: every FIFO queue's one, the quota shares, and
 * the fair shares that have jobs, capacity or usage.  The fair shares'
 * first RUNNABLE jobs, where they may be placed, go to firsts.
 */
static void
load_shares(PassWorld *w, char **policies, const bool *without_room, HeldJobs *held, JobList *firsts)
{
	ShareList	list = {0};
	int			n_fair = 0;
	int			n_with_room = 0;
	Datum	   *fair_queues;
	Datum	   *with_room;

	/* A FIFO queue is one share.  (FIFO, quota, fair: load_runnable reads heads in this order.) */
	for (int q = 0; q < w->input.n_queues; q++)
		if (w->input.queues[q].policy == FS_POLICY_FIFO)
			add_share(w, &list, q, NULL);

	/* Quota shares and their limits. */
	fairshare_run_statement(&quota_shares_stmt, NULL, NULL);
	for (uint64 r = 0; r < SPI_processed; r++)
	{
		int			q = fairshare_world_queue(w, col_text(r, 1, NULL));
		int			s;

		if (q < 0 || w->input.queues[q].policy != FS_POLICY_QUOTA_SHARE)
			continue;
		s = add_share(w, &list, q, col_text(r, 2, NULL));
		list.shares[s].strategy = strategy_of(col_text(r, 3, NULL));
		list.shares[s].borrow_limit = (int) col_int(r, 4, -1);
		list.shares[s].in_share_preemption = col_bool(r, 5);
		list.shares[s].weight = col_float(r, 6);
	}

	/* Fair shares: whatever has jobs, capacity or usage. */
	fair_queues = palloc(sizeof(Datum) * Max(w->input.n_queues, 1));
	with_room = palloc(sizeof(Datum) * Max(w->input.n_queues, 1));
	for (int q = 0; q < w->input.n_queues; q++)
		if (w->input.queues[q].policy == FS_POLICY_FAIR_SHARE)
		{
			fair_queues[n_fair++] = CStringGetTextDatum(w->input.queues[q].name);
			if (!without_room[q])
				with_room[n_with_room++] = CStringGetTextDatum(w->input.queues[q].name);
		}
	if (n_fair > 0)
	{
		Datum		args[1];
		FsWeightEntry *entries = NULL;
		char	  **entry_policy = NULL;
		int			n_entries;
		int			last_queue = -1;

		/* the identifiers of RUNNABLE jobs only where they may be placed */
		if (n_with_room > 0)
			collect_first_jobs(w, &list, firsts, fairshare_text_array(with_room, n_with_room));
		args[0] = fairshare_text_array(fair_queues, n_fair);
		fairshare_run_statement(&fair_shares_stmt, args, NULL);
		for (uint64 r = 0; r < SPI_processed; r++)
		{
			int			q = fairshare_world_queue(w, col_text(r, 1, NULL));

			if (q >= 0)
				add_share(w, &list, q, col_text(r, 2, NULL));
		}
		for (int r = 0; r < held->n; r++)
		{
			/* most running jobs are of the queue of the one before */
			if (last_queue < 0 || strcmp(w->input.queues[last_queue].name, held->queue[r]) != 0)
				last_queue = fairshare_world_queue(w, held->queue[r]);
			if (last_queue >= 0 && held->identifier[r] != NULL &&
				w->input.queues[last_queue].policy == FS_POLICY_FAIR_SHARE)
				held->share_of[r] = add_share(w, &list, last_queue, held->identifier[r]);
		}

		fairshare_run_statement(&weights_stmt, NULL, NULL);
		n_entries = (int) SPI_processed;
		entries = alloc_array(w, n_entries, sizeof(FsWeightEntry));
		entry_policy = alloc_array(w, n_entries, sizeof(char *));
		for (int i = 0; i < n_entries; i++)
		{
			entry_policy[i] = col_text(i, 1, w->cxt);
			entries[i].share_identifier = col_text(i, 2, w->cxt);
			entries[i].weight_factor = col_float(i, 3);
		}
		for (int s = 0; s < list.n; s++)
		{
			int			q = list.shares[s].queue;
			int			first = -1,
						count = 0;

			if (w->input.queues[q].policy != FS_POLICY_FAIR_SHARE)
				continue;
			/* entries are ordered by policy: find this policy's run */
			for (int i = 0; i < n_entries; i++)
				if (strcmp(entry_policy[i], policies[q]) == 0)
				{
					if (first < 0)
						first = i;
					count++;
				}
			list.shares[s].weight = first < 0 ? 1.0 :
				fs_share_weight(&entries[first], count, list.shares[s].name);
		}

		fairshare_run_statement(&usage_stmt, NULL, NULL);
		for (uint64 r = 0; r < SPI_processed; r++)
		{
			int			s = share_index(w, col_text(r, 1, NULL), col_text(r, 2, NULL));

			if (s < 0 || w->input.queues[list.shares[s].queue].policy != FS_POLICY_FAIR_SHARE)
				continue;
			list.shares[s].usage = col_float(r, 3);
			list.shares[s].usage_at = col_time(r, 4);
		}
	}

	/* Quota share limits, now that every quota share has its index. */
	fairshare_run_statement(&quota_limits_stmt, NULL, NULL);
	{
		FsLimit    *limits = alloc_array(w, SPI_processed, sizeof(FsLimit));
		int		   *count = palloc0(sizeof(int) * Max(list.n, 1));
		int		   *seen = palloc0(sizeof(int) * Max(list.n, 1));
		int		   *share_of = palloc(sizeof(int) * Max(SPI_processed, 1));
		int			offset = 0;

		for (uint64 r = 0; r < SPI_processed; r++)
		{
			share_of[r] = share_index(w, col_text(r, 1, NULL), col_text(r, 2, NULL));
			if (share_of[r] >= 0)
				count[share_of[r]]++;
		}
		for (int s = 0; s < list.n; s++)
		{
			list.shares[s].limits = &limits[offset];
			offset += count[s];
		}
		for (uint64 r = 0; r < SPI_processed; r++)
		{
			int			s = share_of[r];
			FsLimit    *l;

			if (s < 0)
				continue;
			l = (FsLimit *) &list.shares[s].limits[seen[s]++];
			l->unit = capacity_unit(w, col_text(r, 3, NULL));
			l->max_capacity = col_int(r, 4, 0);
			list.shares[s].n_limits++;
		}
	}

	w->input.shares = list.shares;
	w->input.n_shares = list.n;
	w->shares = list.info;
}

/* ---------- jobs ---------- */

static FsNominationKind
nomination_kind(const char *kind)
{
	if (kind == NULL)
		return FS_NOMINATION_NONE;
	return strcmp(kind, "PREEMPTION") == 0 ? FS_NOMINATION_PREEMPTION : FS_NOMINATION_STARVATION;
}

/*
 * The longest a job with this time limit (seconds, 0 = none) can hold its
 * instances once placed: the limit plus fairshare.backfill_allowance for
 * its startup and its stop.  0 (unknown) without a limit or with the
 * allowance at -1.  A running job of unknown end never counts towards a
 * starving job's room, and a waiting one back-fills that room only as far
 * as the starving job will not need it (src/scheduler/README.md,
 * "Starvation").
 */
static FsTime
max_occupancy(int64 time_limit)
{
	if (time_limit <= 0 || fairshare_backfill_allowance_s < 0)
		return 0;
	return FS_SECONDS(time_limit + fairshare_backfill_allowance_s);
}

/* collect_runnable_row's state while the rows of a heads query come */
typedef struct RunnableReader
{
	PassWorld  *w;
	JobList    *list;
	bool		with_index;
	ShareList  *adding;			/* not NULL: the rows' shares are added to it */
	/* the last row's instance types: most jobs of a pass ask for the same */
	ArrayType  *last_types;
	int		   *last_ids;
	int			last_n;
} RunnableReader;

/*
 * Append a row of a heads query: (queue, share, RUNNABLE_COLUMNS..., and
 * with_index, the share's index).  Without the index, the share is looked
 * up by its names, or added (reader->adding) while the shares are read.
 */
static void
collect_runnable_row(void *arg, TupleDesc desc, Datum *v, bool *null)
{
	RunnableReader *reader = arg;
	PassWorld  *w = reader->w;
	JobList    *list = reader->list;
	int			s;
	LoadedJob  *lj;
	ArrayType  *types;

	fairshare_progress();
	if (desc->natts < RUNNABLE_SHARE_COLUMN - 1 || desc->natts > RUNNABLE_SHARE_COLUMN)
		elog(ERROR, "a heads query returned %d columns", desc->natts);
	if (reader->adding != NULL)
	{
		int			q = fairshare_world_queue(w, TextDatumGetCString(v[0]));

		if (q < 0 || null[1])
			return;
		s = add_share(w, reader->adding, q, TextDatumGetCString(v[1]));
	}
	else if (reader->with_index)
		s = null[RUNNABLE_SHARE_COLUMN - 1] ? -1 : DatumGetInt32(v[RUNNABLE_SHARE_COLUMN - 1]);
	else
		s = share_index(w, TextDatumGetCString(v[0]), null[1] ? NULL : TextDatumGetCString(v[1]));
	if (s < 0 || (reader->adding == NULL && s >= w->input.n_shares))
		return;
	if (list->n == list->cap)
	{
		list->cap = Max(256, list->cap * 2);
		list->jobs = list->jobs ? repalloc_huge(list->jobs, sizeof(LoadedJob) * list->cap)
			: MemoryContextAllocHuge(w->cxt, sizeof(LoadedJob) * list->cap);
	}
	lj = &list->jobs[list->n++];
	memset(lj, 0, sizeof(*lj));
	lj->share = s;
	lj->job.job_id = DatumGetInt64(v[2]);
	lj->job_name = datum_text(v[3], null[3], w->cxt);
	lj->submitted_by = datum_text(v[12], null[12], w->cxt);
	lj->job.priority = DatumGetInt32(v[4]);
	lj->job.runnable_at = null[5] ? 0 : (FsTime) DatumGetTimestampTz(v[5]);
	lj->job.instance_count = null[6] ? 1 : DatumGetInt32(v[6]);
	lj->job.max_occupancy = max_occupancy(null[13] ? 0 : TupleDescAttr(desc, 13)->atttypid == INT8OID ?
										  DatumGetInt64(v[13]) : DatumGetInt32(v[13]));
	types = DatumGetArrayTypeP(v[7]);
	if (reader->last_types == NULL || VARSIZE(types) != VARSIZE(reader->last_types) ||
		memcmp(types, reader->last_types, VARSIZE(types)) != 0)
	{
		Datum	   *elems;
		bool	   *nulls;

		deconstruct_array(types, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &reader->last_n);
		reader->last_ids = alloc_array(w, reader->last_n, sizeof(int));
		for (int t = 0; t < reader->last_n; t++)
			reader->last_ids[t] = intern_type(w, TextDatumGetCString(elems[t]));
		/* a copy: the row's own memory is the executor's only during this call */
		if (reader->last_types != NULL)
			pfree(reader->last_types);
		reader->last_types = MemoryContextAlloc(w->cxt, VARSIZE(types));
		memcpy(reader->last_types, types, VARSIZE(types));
	}
	/* shared by the jobs that ask for the same: the core only reads them */
	lj->job.instance_types = reader->last_ids;
	lj->job.n_instance_types = reader->last_n;
	lj->job.nomination.kind = nomination_kind(null[8] ? NULL : TextDatumGetCString(v[8]));
	if (lj->job.nomination.kind != FS_NOMINATION_NONE)
	{
		char	   *type = null[10] ? NULL : TextDatumGetCString(v[10]);

		lj->job.nomination.environment = null[9] ? -1 : environment_index(w, TextDatumGetCString(v[9]));
		lj->job.nomination.instance_type = type ? intern_type(w, type) : -1;
		lj->job.nomination.since = null[11] ? 0 : (FsTime) DatumGetTimestampTz(v[11]);
		if (lj->job.nomination.environment < 0 || type == NULL)
			lj->job.nomination.kind = FS_NOMINATION_NONE;
	}
}

/* Run a heads query (or the nominated jobs') and append its rows to list. */
static void
collect_runnable(PassWorld *w, JobList *list, bool with_index, FairshareStatement *st, Datum *args)
{
	RunnableReader reader = {.w = w, .list = list, .with_index = with_index};

	fairshare_each_row(st, args, NULL, collect_runnable_row, &reader);
}

/* The fair shares with RUNNABLE jobs in `queues', added to shares, and their first jobs. */
static void
collect_first_jobs(PassWorld *w, ShareList *shares, JobList *firsts, Datum queues)
{
	RunnableReader reader = {.w = w, .list = firsts, .adding = shares};

	fairshare_each_row(&fair_first_jobs_stmt, &queues, NULL, collect_runnable_row, &reader);
}

static int
compare_loaded(const void *a, const void *b)
{
	const LoadedJob *x = a;
	const LoadedJob *y = b;

	if (x->share != y->share)
		return x->share < y->share ? -1 : 1;
	if (x->job.job_id != y->job.job_id)
		return x->job.job_id < y->job.job_id ? -1 : 1;
	return 0;
}

static int
compare_share_order(const void *a, const void *b, void *arg)
{
	const LoadedJob *x = a;
	const LoadedJob *y = b;
	const PassWorld *w = arg;

	if (x->share != y->share)
		return x->share < y->share ? -1 : 1;
	if (w->input.queues[w->input.shares[x->share].queue].policy != FS_POLICY_FIFO &&
		x->job.priority != y->job.priority)
		return x->job.priority > y->job.priority ? -1 : 1;
	if (x->job.runnable_at != y->job.runnable_at)
		return x->job.runnable_at < y->job.runnable_at ? -1 : 1;
	if (x->job.job_id != y->job.job_id)
		return x->job.job_id < y->job.job_id ? -1 : 1;
	return 0;
}

static bool
in_share_order(PassWorld *w, const LoadedJob *jobs, int n)
{
	for (int i = 1; i < n; i++)
		if (compare_share_order(&jobs[i - 1], &jobs[i], w) >= 0)
			return false;
	return true;
}

static int
compare_job_id(const void *a, const void *b)
{
	int64		x = ((const LoadedJob *) a)->job.job_id;
	int64		y = ((const LoadedJob *) b)->job.job_id;

	return x < y ? -1 : x > y ? 1 : 0;
}

/*
 * Put the loaded jobs in share order (share, then the order of its jobs),
 * each job once: the first n_heads come from the heads queries, the rest
 * are the nominated jobs, some of which are in the heads too.
 *
 * The heads usually come in share order already (share by share in the
 * arrays' order, each share's through its index), and the nominated jobs
 * are few: then only those are sorted, and merged in -- sorting the whole
 * list twice was a tenth of a steady pass at 1,000 shares (65,000 jobs,
 * bench/scale).  Otherwise, or when a job comes twice in the heads, the
 * whole list is sorted and its duplicates dropped.
 */
static void
order_runnable(PassWorld *w, JobList *list, int n_heads)
{
	int			n_nominated = list->n - n_heads;
	LoadedJob  *nominated = list->jobs + n_heads;
	LoadedJob  *merged;
	int			kept;
	int			i,
				j,
				m;

	if (list->n <= 1)
		return;
	if (in_share_order(w, list->jobs, n_heads))
	{
		/* drop the nominated jobs the heads have */
		if (n_nominated > 0)
		{
			qsort(nominated, n_nominated, sizeof(LoadedJob), compare_job_id);
			kept = 0;
			for (i = 0; i < n_nominated; i++)
				if (kept == 0 || nominated[i].job.job_id != nominated[kept - 1].job.job_id)
					nominated[kept++] = nominated[i];
			n_nominated = kept;
			for (i = 0; i < n_heads; i++)
			{
				LoadedJob  *dup = bsearch(&list->jobs[i], nominated, n_nominated, sizeof(LoadedJob),
										  compare_job_id);

				if (dup != NULL)
					dup->share = -1;	/* dropped below (the ids stay sorted) */
			}
			kept = 0;
			for (i = 0; i < n_nominated; i++)
				if (nominated[i].share >= 0)
					nominated[kept++] = nominated[i];
			n_nominated = kept;
		}
		if (n_nominated == 0)
		{
			list->n = n_heads;
			return;
		}
		qsort_arg(nominated, n_nominated, sizeof(LoadedJob), compare_share_order, w);
		merged = MemoryContextAllocHuge(w->cxt, sizeof(LoadedJob) * (n_heads + n_nominated));
		for (i = 0, j = 0, m = 0; i < n_heads || j < n_nominated;)
		{
			if (j == n_nominated ||
				(i < n_heads && compare_share_order(&list->jobs[i], &nominated[j], w) < 0))
				merged[m++] = list->jobs[i++];
			else
				merged[m++] = nominated[j++];
		}
		pfree(list->jobs);
		list->jobs = merged;
		list->n = list->cap = m;
		return;
	}
	qsort(list->jobs, list->n, sizeof(LoadedJob), compare_loaded);
	kept = 1;
	for (i = 1; i < list->n; i++)
		if (list->jobs[i].job.job_id != list->jobs[kept - 1].job.job_id)
			list->jobs[kept++] = list->jobs[i];
	list->n = kept;
	qsort_arg(list->jobs, list->n, sizeof(LoadedJob), compare_share_order, w);
}

/*
 * Add the first jobs of the shares marked first_only to the heads in list,
 * keeping share order: both come in it (the heads usually, the first jobs
 * always, the shares having been numbered as the skip scan found them).
 */
static void
merge_first_jobs(PassWorld *w, JobList *list, const JobList *firsts, const bool *first_only)
{
	int			n_first = 0;
	LoadedJob  *merged;
	int			i,
				j,
				m;

	for (j = 0; j < firsts->n; j++)
		if (first_only[firsts->jobs[j].share])
			n_first++;
	if (n_first == 0)
		return;
	merged = MemoryContextAllocHuge(w->cxt, sizeof(LoadedJob) * (list->cap + n_first));
	for (i = 0, j = 0, m = 0; i < list->n || j < firsts->n;)
	{
		if (j < firsts->n && !first_only[firsts->jobs[j].share])
			j++;
		else if (j == firsts->n ||
				 (i < list->n && list->jobs[i].share <= firsts->jobs[j].share))
			merged[m++] = list->jobs[i++];
		else
			merged[m++] = firsts->jobs[j++];
	}
	pfree(list->jobs);
	list->jobs = merged;
	list->n = m;
	list->cap += n_first;
}

/* Which heads query reads a queue's shares: 0 FIFO, 1 fair, 2 quota. */
static int
heads_kind(const FsQueue *q)
{
	return q->policy == FS_POLICY_FIFO ? 0 : q->policy == FS_POLICY_FAIR_SHARE ? 1 : 2;
}

typedef struct ShareRank
{
	int			queue;
	double		key;
	int			share;
} ShareRank;

/* by queue, then key, then share (the skip scan's order: by identifier) */
static int
compare_share_rank(const void *a, const void *b)
{
	const ShareRank *x = a;
	const ShareRank *y = b;

	if (x->queue != y->queue)
		return x->queue < y->queue ? -1 : 1;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->share < y->share ? -1 : x->share > y->share ? 1 : 0;
}

/*
 * Which fair shares a bounded pass loads only their first job for (marked
 * in first_only): in each fair-share queue, all but the `deep' shares
 * whose first jobs enter the queue's turn first (fs_fair_first_keys).
 * Only shares whose first job is in firsts and not nominated are ranked;
 * `ranked' says which.
 */
static void
choose_first_only(PassWorld *w, const JobList *firsts, const int *first_of, const bool *ranked,
				  int deep, bool *first_only)
{
	int			n_shares = w->input.n_shares;
	int		   *instances = palloc0(sizeof(int) * Max(n_shares, 1));
	int64	   *held = palloc(sizeof(int64) * Max(n_shares, 1));
	double	   *key = palloc(sizeof(double) * Max(n_shares, 1));
	ShareRank  *order = palloc(sizeof(ShareRank) * Max(n_shares, 1));
	int			n = 0;

	for (int s = 0; s < n_shares; s++)
		if (first_of[s] >= 0)
			instances[s] = firsts->jobs[first_of[s]].job.instance_count;
	fs_fair_first_keys(&w->input, instances, held, key);
	for (int s = 0; s < n_shares; s++)
		if (ranked[s])
		{
			order[n].queue = w->input.shares[s].queue;
			order[n].key = key[s];
			order[n].share = s;
			n++;
		}
	qsort(order, n, sizeof(ShareRank), compare_share_rank);
	for (int i = 0, in_queue = 0; i < n; i++)
	{
		if (i == 0 || order[i].queue != order[i - 1].queue)
			in_queue = 0;
		first_only[order[i].share] = in_queue++ >= deep;
	}
	pfree(instances);
	pfree(held);
	pfree(key);
	pfree(order);
}

static void
load_runnable(PassWorld *w, int prefix, const char *focus_queue, const char *focus_share,
			  int focus_prefix, HTAB *deeper, int least_prefix, int budget,
			  const bool *share_without_room, const JobList *firsts)
{
	int			n_shares = w->input.n_shares;
	int			n_loaded = 0;
	int		   *limit = palloc(sizeof(int) * Max(n_shares, 1));
	bool	   *more = palloc0(sizeof(bool) * Max(n_shares, 1));
	int		   *n_nominated = palloc0(sizeof(int) * Max(n_shares, 1));
	JobList		list = {0};
	JobList		nominated = {0};
	Datum	   *queues[3];
	Datum	   *names[3];
	Datum	   *counts[3];
	Datum	   *indexes[3];
	int			n[3] = {0, 0, 0};
	int			n_heads;
	FairshareStatement *statements[3] = {&fifo_heads_stmt, &fair_heads_stmt, &quota_heads_stmt};
	int			kept;
	int			each;
	int			each_fair;
	int		   *first_of = palloc(sizeof(int) * Max(n_shares, 1));
	bool	   *ranked = palloc0(sizeof(bool) * Max(n_shares, 1));
	bool	   *first_only = palloc0(sizeof(bool) * Max(n_shares, 1));
	bool		bounded = budget >= 0;

	for (int k = 0; k < 3; k++)
	{
		queues[k] = palloc(sizeof(Datum) * Max(n_shares, 1));
		names[k] = palloc(sizeof(Datum) * Max(n_shares, 1));
		counts[k] = palloc(sizeof(Datum) * Max(n_shares, 1));
		indexes[k] = palloc(sizeof(Datum) * Max(n_shares, 1));
	}
	/*
	 * Nominated jobs, wherever they stand, first: each share's heads query
	 * asks for as many more rows as it has of them.
	 */
	collect_runnable(w, &nominated, false, &nominated_stmt, NULL);
	for (int i = 0; i < nominated.n; i++)
		if (nominated.jobs[i].job.nomination.kind != FS_NOMINATION_NONE)
			n_nominated[nominated.jobs[i].share]++;

	/*
	 * the head of each share, cut so that the pass loads PASS_LOAD_MAX at
	 * most (the fair shares of a bounded pass PASS_FAIR_LOAD_MAX)
	 */
	for (int s = 0; s < n_shares; s++)
		if (!share_without_room[s])
			n_loaded++;
	each = Min(prefix, Max(Max(PASS_PREFIX_MIN, least_prefix), PASS_LOAD_MAX / Max(n_loaded, 1)));
	each_fair = !bounded ? each :
		Min(each, Max(Max(PASS_FAIR_PREFIX_MIN, least_prefix / 2), PASS_FAIR_LOAD_MAX / Max(n_loaded, 1)));

	/*
	 * A fair share the skip scan found no RUNNABLE job of (fair_first_jobs_stmt)
	 * has none to read a head of.  Of the others, a bounded pass reads a
	 * head only for the `budget' shares of each queue that its turn serves
	 * first (PASS_FAIR_DEEP_SHARES); the rest keep the first job the scan
	 * found.
	 */
	for (int s = 0; s < n_shares; s++)
		first_of[s] = -1;
	for (int i = 0; i < firsts->n; i++)
		first_of[firsts->jobs[i].share] = i;
	for (int s = 0; s < n_shares; s++)
	{
		const FsQueue *q = &w->input.queues[w->input.shares[s].queue];
		int			k = heads_kind(q);
		bool		focused = focus_queue && strcmp(focus_queue, q->name) == 0 &&
			(focus_share == NULL || strcmp(focus_share, w->input.shares[s].name) == 0);
		bool		deep = false;

		/* a share without room has only its nominated jobs loaded */
		limit[s] = 0;
		if (share_without_room[s])
			continue;
		limit[s] = k == 1 ? each_fair : each;
		if (focused)
			limit[s] = Max(focus_prefix, each);
		else if (deeper != NULL)
		{
			char		key[SHARE_KEY_LEN];

			share_key(key, q->name, w->input.shares[s].name);
			if (hash_search(deeper, key, HASH_FIND, NULL) != NULL)
			{
				limit[s] = Max(prefix, each);
				deep = true;
			}
		}
		/*
		 * What the backend's earlier passes learnt of the share: read past
		 * the jobs at its head that can never fit; and a share whose first
		 * job waited is read a head, for back-fill.
		 */
		if (!focused && limit[s] > 0 && (misconfigured_heads != NULL || waiting_first_jobs != NULL))
		{
			char		key[SHARE_KEY_LEN];
			int			skip;

			share_key(key, q->name, w->input.shares[s].name);
			skip = misconfigured_head_count(key);
			if (skip > 0)
			{
				limit[s] += skip;
				deep = true;
			}
			if (!deep && k == 1 && first_of[s] >= 0)
				deep = first_job_waited(key, firsts->jobs[first_of[s]].job.job_id);
		}
		if (k == 1 && first_of[s] < 0)
			limit[s] = 0;
		ranked[s] = bounded && k == 1 && first_of[s] >= 0 && !focused && !deep &&
			firsts->jobs[first_of[s]].job.nomination.kind == FS_NOMINATION_NONE;
	}
	if (bounded)
		choose_first_only(w, firsts, first_of, ranked, Max(budget, PASS_FAIR_DEEP_SHARES), first_only);
	for (int s = 0; s < n_shares; s++)
	{
		const FsQueue *q = &w->input.queues[w->input.shares[s].queue];
		int			k = heads_kind(q);

		if (first_only[s])
			limit[s] = 1;
		if (limit[s] == 0 || first_only[s])
			continue;
		queues[k][n[k]] = CStringGetTextDatum(q->name);
		names[k][n[k]] = CStringGetTextDatum(w->input.shares[s].name);
		counts[k][n[k]] = Int32GetDatum(limit[s] + n_nominated[s]);
		indexes[k][n[k]] = Int32GetDatum(s);
		n[k]++;
	}
	/* room for every head at once: growing the list copies it */
	{
		int64		rows = 0;

		for (int s = 0; s < n_shares; s++)
			rows += limit[s] + 1 + (limit[s] > 0 ? n_nominated[s] : 0);
		rows += nominated.n;
		list.cap = (int) Min(rows + 256, (int64) MaxAllocHugeSize / (int64) sizeof(LoadedJob) / 2);
		list.jobs = MemoryContextAllocHuge(w->cxt, sizeof(LoadedJob) * list.cap);
	}
	/*
	 * FIFO, quota, then fair shares: the order load_shares numbers them in,
	 * so that the heads come in share order (order_runnable).
	 */
	for (int i = 0; i < 3; i++)
	{
		static const int kinds[3] = {0, 2, 1};
		int			k = kinds[i];
		Datum		args[4];

		if (n[k] == 0)
			continue;
		args[0] = fairshare_text_array(queues[k], n[k]);
		if (k == 0)
		{
			args[1] = fairshare_int4_array(counts[k], n[k]);
			args[2] = fairshare_int4_array(indexes[k], n[k]);
		}
		else
		{
			args[1] = fairshare_text_array(names[k], n[k]);
			args[2] = fairshare_int4_array(counts[k], n[k]);
			args[3] = fairshare_int4_array(indexes[k], n[k]);
		}
		collect_runnable(w, &list, true, statements[k], args);
	}
	merge_first_jobs(w, &list, firsts, first_only);
	n_heads = list.n;
	/* then the nominated jobs; order_runnable drops those the heads have */
	if (list.n + nominated.n > list.cap)
	{
		list.cap = list.n + nominated.n;
		list.jobs = repalloc_huge(list.jobs, sizeof(LoadedJob) * list.cap);
	}
	if (nominated.n > 0)
		memcpy(list.jobs + list.n, nominated.jobs, sizeof(LoadedJob) * nominated.n);
	list.n += nominated.n;
	order_runnable(w, &list, n_heads);
	/*
	 * Each share keeps its first `limit' jobs that are not nominated, and
	 * its nominated ones wherever they stand; an extra row beyond that
	 * says it has more.
	 */
	kept = 0;
	for (int i = 0, in_share = 0; i < list.n; i++)
	{
		int			s = list.jobs[i].share;
		bool		nominated = list.jobs[i].job.nomination.kind != FS_NOMINATION_NONE;

		if (i == 0 || list.jobs[i - 1].share != s)
			in_share = 0;
		if (!nominated && in_share++ >= limit[s])
		{
			more[s] = true;
			continue;
		}
		list.jobs[kept++] = list.jobs[i];
	}
	list.n = kept;
	/* a share read only to its first job may have more */
	for (int s = 0; s < n_shares; s++)
		if (first_only[s])
			more[s] = true;

	/* Back-offs of the loaded jobs that have not expired. */
	if (list.n > 0)
	{
		Datum	   *ids = palloc(sizeof(Datum) * list.n);
		Datum		args[2];
		int64	   *job_of = NULL;
		FsBackoff  *backoffs;
		uint64		nb;

		for (int i = 0; i < list.n; i++)
			ids[i] = Int64GetDatum(list.jobs[i].job.job_id);
		args[0] = TimestampTzGetDatum(GetCurrentTransactionStartTimestamp());
		args[1] = PointerGetDatum(construct_array(ids, list.n, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
		fairshare_run_statement(&backoffs_stmt, args, NULL);
		nb = SPI_processed;
		backoffs = alloc_array(w, nb, sizeof(FsBackoff));
		job_of = palloc(sizeof(int64) * Max(nb, 1));
		for (uint64 r = 0; r < nb; r++)
		{
			job_of[r] = col_int(r, 1, 0);
			backoffs[r].environment = environment_index(w, col_text(r, 2, NULL));
			backoffs[r].instance_type = intern_type(w, col_text(r, 3, NULL));
			backoffs[r].until = col_time(r, 4);
		}
		/* rows are ordered by job_id; give each job its run */
		for (int i = 0; i < list.n; i++)
			for (uint64 r = 0; r < nb; r++)
				if (job_of[r] == list.jobs[i].job.job_id)
				{
					if (list.jobs[i].job.n_backoffs == 0)
						list.jobs[i].job.backoffs = &backoffs[r];
					list.jobs[i].job.n_backoffs++;
				}
	}

	/* Hand each share its run of jobs. */
	{
		FsRunnableJob *jobs = alloc_array(w, list.n, sizeof(FsRunnableJob));
		FsShare    *shares = (FsShare *) w->input.shares;

		for (int i = 0; i < list.n; i++)
		{
			FsShare    *s = &shares[list.jobs[i].share];

			jobs[i] = list.jobs[i].job;
			if (s->n_runnable == 0)
				s->runnable = &jobs[i];
			s->n_runnable++;
		}
		for (int s = 0; s < n_shares; s++)
			shares[s].more_runnable = more[s];

		w->jobs = alloc_array(w, list.n, sizeof(PassJobInfo));
		for (int i = 0; i < list.n; i++)
		{
			w->jobs[i].job_id = list.jobs[i].job.job_id;
			w->jobs[i].job_name = list.jobs[i].job_name;
			w->jobs[i].submitted_by = list.jobs[i].submitted_by;
			w->jobs[i].share = list.jobs[i].share;
			w->jobs[i].index = (int) (&jobs[i] - shares[list.jobs[i].share].runnable);
		}
		w->n_jobs = list.n;
	}
}

/* An inlined sort of the jobs by id: a generic qsort took 6% of a steady pass. */
#define ST_SORT sort_job_infos
#define ST_ELEMENT_TYPE PassJobInfo
#define ST_COMPARE(a, b) ((a)->job_id < (b)->job_id ? -1 : (a)->job_id > (b)->job_id ? 1 : 0)
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

#define ST_SORT sort_running_jobs
#define ST_ELEMENT_TYPE FsRunningJob
#define ST_COMPARE(a, b) ((a)->job_id < (b)->job_id ? -1 : (a)->job_id > (b)->job_id ? 1 : 0)
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

/* The columns of running_stmt. */
#define RUNNING_COLUMNS 16

/* read_running's state while the rows come */
typedef struct RunningReader
{
	PassWorld  *w;
	HeldJobs   *held;
	FsRunningJob *running;
	int			cap;
} RunningReader;

static void *
grow_array(PassWorld *w, void *array, int old_n, int new_n, size_t size)
{
	void	   *grown = alloc_array(w, new_n, size);

	if (array != NULL)
	{
		memcpy(grown, array, old_n * size);
		pfree(array);
	}
	return grown;
}

static void
read_running_row(void *arg, TupleDesc desc, Datum *v, bool *null)
{
	RunningReader *reader = arg;
	PassWorld  *w = reader->w;
	HeldJobs   *held = reader->held;
	FsRunningJob *j;
	int64		time_limit;
	int			environment;

	fairshare_progress();
	if (desc->natts != RUNNING_COLUMNS)
		elog(ERROR, "the running jobs' query returned %d columns", desc->natts);
	if (null[4] || null[5])
		return;					/* cannot happen: placed jobs pin their environment */
	environment = environment_index(w, TextDatumGetCString(v[4]));
	if (environment < 0)
		return;
	if (held->n == reader->cap)
	{
		int			cap = Max(1024, reader->cap * 2);

		reader->running = grow_array(w, reader->running, held->n, cap, sizeof(FsRunningJob));
		held->queue = grow_array(w, held->queue, held->n, cap, sizeof(char *));
		held->share = grow_array(w, held->share, held->n, cap, sizeof(char *));
		held->identifier = grow_array(w, held->identifier, held->n, cap, sizeof(char *));
		held->job_name = grow_array(w, held->job_name, held->n, cap, sizeof(char *));
		held->share_of = grow_array(w, held->share_of, held->n, cap, sizeof(int));
		reader->cap = cap;
	}
	j = &reader->running[held->n];
	j->environment = environment;
	j->job_id = DatumGetInt64(v[0]);
	j->share = -1;				/* attach_running, once the shares are known */
	j->instance_type = intern_type(w, TextDatumGetCString(v[5]));
	j->instance_count = null[6] ? 1 : DatumGetInt32(v[6]);
	j->priority = null[7] ? 0 : DatumGetInt32(v[7]);
	j->started_at = null[8] ? 0 : (FsTime) DatumGetTimestampTz(v[8]);
	j->stopping = !null[9] && DatumGetBool(v[9]);
	j->stopping_for = null[10] ? 0 : DatumGetInt64(v[10]);
	time_limit = null[11] ? 0 : TupleDescAttr(desc, 11)->atttypid == INT8OID ?
		DatumGetInt64(v[11]) : DatumGetInt32(v[11]);
	if (max_occupancy(time_limit) > 0)
		j->ends_by = j->started_at + max_occupancy(time_limit);
	if (!null[12] && DatumGetBool(v[12]))
	{
		int			interval_s = null[15] ? fairshare_checkpoint_interval_s : DatumGetInt32(v[15]);

		if (interval_s > 0)
		{
			j->checkpoint_interval = FS_SECONDS(interval_s);
			j->checkpoint_from = null[13] ? 0 : (FsTime) DatumGetTimestampTz(v[13]);
		}
	}
	held->job_name[held->n] = datum_text(v[1], null[1], w->cxt);
	held->queue[held->n] = datum_text(v[2], null[2], w->cxt);
	held->share[held->n] = datum_text(v[3], null[3], w->cxt);
	held->identifier[held->n] = datum_text(v[14], null[14], w->cxt);
	held->share_of[held->n] = -1;
	held->n++;
}

/*
 * The jobs that hold capacity, as the executor makes their rows (100,000 at
 * most): not formed into SPI_tuptable and deformed again.
 */
static void
read_running(PassWorld *w, HeldJobs *held)
{
	RunningReader reader = {.w = w, .held = held};

	memset(held, 0, sizeof(*held));
	fairshare_each_row(&running_stmt, NULL, NULL, read_running_row, &reader);
	if (reader.cap == 0)
	{
		/* none: the arrays are still there, empty */
		reader.running = alloc_array(w, 0, sizeof(FsRunningJob));
		held->queue = alloc_array(w, 0, sizeof(char *));
		held->share = alloc_array(w, 0, sizeof(char *));
		held->identifier = alloc_array(w, 0, sizeof(char *));
		held->job_name = alloc_array(w, 0, sizeof(char *));
		held->share_of = alloc_array(w, 0, sizeof(int));
	}
	w->input.running = reader.running;
	w->input.n_running = held->n;
}

/* Give the running jobs their shares, once the shares are known. */
static void
assign_running_shares(PassWorld *w, const HeldJobs *held)
{
	FsRunningJob *running = (FsRunningJob *) w->input.running;

	for (int r = 0; r < held->n; r++)
		running[r].share = held->share_of[r] >= 0 ? held->share_of[r] :
			share_index(w, held->queue[r], held->share[r]);
}

/* Add the running jobs' names after the RUNNABLE ones', and sort them by job_id. */
static void
attach_running(PassWorld *w, const HeldJobs *held)
{
	FsRunningJob *running = (FsRunningJob *) w->input.running;
	int			first_info = w->n_jobs;

	w->jobs = repalloc_huge(w->jobs, sizeof(PassJobInfo) * Max(w->n_jobs + held->n, 1));
	for (int r = 0; r < held->n; r++)
	{
		w->jobs[w->n_jobs].job_id = running[r].job_id;
		w->jobs[w->n_jobs].job_name = held->job_name[r];
		w->jobs[w->n_jobs].share = running[r].share;
		w->jobs[w->n_jobs].index = -1;
		w->n_jobs++;
	}
	/*
	 * In job_id order, sorted here rather than by the statement: with
	 * ORDER BY job_id the planner may read all of jobs through its primary
	 * key to skip a sort of the few that hold capacity -- it did while
	 * job_events had no statistics after a burst, 540 ms instead of 30.
	 */
	sort_running_jobs(running, w->input.n_running);
	sort_job_infos(w->jobs + first_info, w->n_jobs - first_info);
}

static int
compare_job_info(const void *a, const void *b)
{
	int64		x = ((const PassJobInfo *) a)->job_id;
	int64		y = ((const PassJobInfo *) b)->job_id;

	return x < y ? -1 : x > y ? 1 : 0;
}

/*
 * Sort w->jobs by id: the first n_runnable (in share order), then merged
 * with the running ones, which load_running sorted.
 */
static void
sort_jobs(PassWorld *w, int n_runnable)
{
	PassJobInfo *runnable = w->jobs;
	PassJobInfo *running = w->jobs + n_runnable;
	int			n_running = w->n_jobs - n_runnable;
	PassJobInfo *merged;
	int			i,
				j,
				m;

	if (w->n_jobs <= 1)
		return;
	for (i = 1; i < n_running; i++)
		if (running[i - 1].job_id >= running[i].job_id)
			break;
	if (i < n_running)
	{
		sort_job_infos(w->jobs, w->n_jobs);
		return;
	}
	sort_job_infos(runnable, n_runnable);
	merged = MemoryContextAllocHuge(w->cxt, sizeof(PassJobInfo) * w->n_jobs);
	for (i = 0, j = 0, m = 0; i < n_runnable || j < n_running;)
	{
		if (j == n_running || (i < n_runnable && runnable[i].job_id <= running[j].job_id))
			merged[m++] = runnable[i++];
		else
			merged[m++] = running[j++];
	}
	pfree(w->jobs);
	w->jobs = merged;
}

HTAB *
fairshare_deeper_shares(HTAB *set, const PassWorld *w, const bool *marked)
{
	HASHCTL		ctl;

	for (int s = 0; s < w->input.n_shares; s++)
	{
		char		key[SHARE_KEY_LEN];

		if (!marked[s])
			continue;
		if (set == NULL)
		{
			ctl.keysize = SHARE_KEY_LEN;
			ctl.entrysize = SHARE_KEY_LEN;
			ctl.hcxt = CurrentMemoryContext;
			set = hash_create("fairshare deeper shares", 64, &ctl, HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);
		}
		share_key(key, w->input.queues[w->input.shares[s].queue].name, w->input.shares[s].name);
		(void) hash_search(set, key, HASH_ENTER, NULL);
	}
	return set;
}

PassWorld *
fairshare_load_world(int prefix, const char *focus_queue, const char *focus_share, int focus_prefix,
			  bool collect_wait_reasons, HTAB *deeper, int least_prefix, int budget)
{
	MemoryContext cxt = AllocSetContextCreate(TopTransactionContext, "fairshare pass",
											  ALLOCSET_DEFAULT_SIZES);
	PassWorld  *w = MemoryContextAllocZero(cxt, sizeof(PassWorld));
	HASHCTL		ctl;
	char	  **policies;
	char	  **type_names;
	HASH_SEQ_STATUS seq;
	TypeEntry  *te;
	int			n_runnable;
	HeldJobs	held;
	bool		gate;
	bool	   *queue_without_room;
	bool	   *share_without_room;
	JobList		firsts = {0};

	w->cxt = cxt;
	w->allocator.alloc = world_alloc;
	w->allocator.free = NULL;
	w->allocator.ctx = cxt;

	ctl.keysize = TYPE_KEY_LEN;
	ctl.entrysize = sizeof(TypeEntry);
	ctl.hcxt = cxt;
	w->type_ids = hash_create("fairshare pass instance types", 32, &ctl,
							  HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);
	ctl.keysize = SHARE_KEY_LEN;
	ctl.entrysize = sizeof(ShareEntry);
	w->share_ids = hash_create("fairshare pass shares", 256, &ctl,
							   HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);

	w->input.now = (FsTime) GetCurrentTransactionStartTimestamp();
	w->input.preemption_min_runtime = FS_SECONDS(fairshare_preemption_min_runtime_s);
	w->input.starvation_wait = FS_SECONDS(fairshare_starvation_seconds);
	w->input.reclaim_wait = FS_SECONDS(fairshare_reclaim_wait_s);
	w->input.checkpoint_on_stop = fairshare_checkpoint_on_stop;
	w->input.collect_wait_reasons = collect_wait_reasons;

	load_environments(w);
	policies = load_queues(w);
	read_running(w, &held);

	/*
	 * A share that can be given nothing in this pass (the core says which:
	 * its queue's environments are full, and it cannot preempt) has only
	 * its nominated jobs loaded, and a fair-share queue of such shares has
	 * only those that hold capacity, are nominated or have usage: a pass on
	 * a saturated cluster does not grow with the shares that wait.  Not for
	 * explain() and the snapshot, which show why every share waits.
	 */
	queue_without_room = alloc_array(w, w->input.n_queues, sizeof(bool));
	gate = !collect_wait_reasons && focus_queue == NULL;
	if (gate)
		(void) fs_queues_without_room(&w->input,
									  alloc_array(w, w->input.n_environments, sizeof(int64_t)),
									  queue_without_room);
	load_shares(w, policies, queue_without_room, &held, &firsts);
	assign_running_shares(w, &held);
	share_without_room = alloc_array(w, w->input.n_shares, sizeof(bool));
	if (gate)
		(void) fs_shares_without_room(&w->input,
									  alloc_array(w, w->input.n_environments + w->input.n_shares,
												  sizeof(int64_t)),
									  share_without_room);
	load_runnable(w, prefix, focus_queue, focus_share, focus_prefix, deeper, least_prefix, budget,
				  share_without_room, &firsts);
	n_runnable = w->n_jobs;
	attach_running(w, &held);
	sort_jobs(w, n_runnable);

	w->input.n_instance_types = hash_get_num_entries(w->type_ids);
	type_names = alloc_array(w, w->input.n_instance_types, sizeof(char *));
	hash_seq_init(&seq, w->type_ids);
	while ((te = hash_seq_search(&seq)) != NULL)
		type_names[te->id] = te->name;
	w->input.instance_type_names = (const char *const *) type_names;
	return w;
}

/*
 * Jobs whose rows another transaction has locked (a user's open
 * update_job_priority or terminate_job, say): the pass must not wait for
 * that commit, and cannot write to them, so it decides around them.  A
 * waiting one keeps its place in line but is backed off every pair, as a
 * capacity back-off would -- a strict FIFO queue still waits behind it, a
 * back-filling one goes past it -- and a placed one is never a victim
 * (started_at of now, like a job placed at this moment).
 */
void
fairshare_world_treat_as_busy(PassWorld *w, const int64 *ids, int n_ids)
{
	for (int i = 0; i < n_ids; i++)
	{
		const PassJobInfo *info = fairshare_world_job(w, ids[i]);

		if (info == NULL)
			continue;
		if (info->index >= 0)
		{
			FsRunnableJob *j = (FsRunnableJob *) &w->input.shares[info->share].runnable[info->index];
			FsBackoff  *all = alloc_array(w, Max(w->input.n_environments * j->n_instance_types, 1),
										  sizeof(FsBackoff));
			int			n = 0;

			for (int e = 0; e < w->input.n_environments; e++)
				for (int t = 0; t < j->n_instance_types; t++)
				{
					all[n].environment = e;
					all[n].instance_type = j->instance_types[t];
					all[n].until = w->input.now + 1;
					n++;
				}
			j->backoffs = all;
			j->n_backoffs = n;
		}
		else
		{
			const FsRunningJob *run = fairshare_world_running(w, ids[i]);

			if (run != NULL)
				((FsRunningJob *) run)->started_at = w->input.now;
		}
	}
}

/*
 * Run the pure core on the world.  The input is checked first: a wrong
 * index there is a bug in this file, and the core's answer would be
 * meaningless, so it is an internal error rather than a bad pass.
 */
FsResult *
fairshare_run_core(PassWorld *w)
{
	char		message[256];

	if (!fs_check_input(&w->input, message, sizeof(message)))
		elog(ERROR, "fairshare built an inconsistent scheduling input: %s", message);
	return fs_schedule(&w->input, &w->allocator);
}

const PassJobInfo *
fairshare_world_job(const PassWorld *w, int64 job_id)
{
	PassJobInfo key;

	key.job_id = job_id;
	return bsearch(&key, w->jobs, w->n_jobs, sizeof(PassJobInfo), compare_job_info);
}

static int
compare_running_job_id(const void *a, const void *b)
{
	int64		x = ((const FsRunningJob *) a)->job_id;
	int64		y = ((const FsRunningJob *) b)->job_id;

	return (x > y) - (x < y);
}

/*
 * The running job of that id, or NULL.  The running jobs are in job_id
 * order (attach_running); a scan of them for each victim a reclaiming pass
 * locks was millions of comparisons at 20,000 running jobs.
 */
const FsRunningJob *
fairshare_world_running(const PassWorld *w, int64 job_id)
{
	FsRunningJob key;

	key.job_id = job_id;
	return bsearch(&key, w->input.running, w->input.n_running, sizeof(FsRunningJob),
				   compare_running_job_id);
}

/* "ProdExp1", "HIGHPRI" or, for a FIFO queue, the queue's name. */
const char *
fairshare_world_share_label(const PassWorld *w, int share)
{
	if (share < 0 || share >= w->input.n_shares)
		return NULL;
	return w->input.shares[share].name;
}

void
fairshare_world_free(PassWorld *w)
{
	MemoryContextDelete(w->cxt);
}

/*
 * The core's sentence for a decision or a wait reason, palloc'd: formatted
 * into a buffer on the stack, or again into one of the size it asked for.
 */
typedef size_t (*CoreFormatter) (const FsInput *input, const void *what, char *buf, size_t size);

static char *
core_text(const PassWorld *w, CoreFormatter format, const void *what)
{
	char		buf[1024];
	size_t		len = format(&w->input, what, buf, sizeof(buf));

	if (len >= sizeof(buf))
	{
		char	   *big = palloc(len + 1);

		format(&w->input, what, big, len + 1);
		return big;
	}
	return pstrdup(buf);
}

static size_t
format_decision(const FsInput *input, const void *what, char *buf, size_t size)
{
	return fs_format_decision(input, (const FsDecision *) what, buf, size);
}

static size_t
format_wait_reason(const FsInput *input, const void *what, char *buf, size_t size)
{
	return fs_format_wait_reason(input, (const FsWaitReason *) what, buf, size);
}

char *
fairshare_decision_text(const PassWorld *w, const FsDecision *d)
{
	return core_text(w, format_decision, d);
}

char *
fairshare_wait_text(const PassWorld *w, const FsWaitReason *r)
{
	return core_text(w, format_wait_reason, r);
}
