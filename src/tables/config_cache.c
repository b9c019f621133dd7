/*-------------------------------------------------------------------------
 *
 * config_cache.c
 *		Per-backend cache of queue configuration, invalidated on change.
 *
 * Every INSERT into fairshare.jobs needs its queue's policy kind, quota
 * shares and the instance types its environments can run, and, with
 * fairshare.require_role_arn_grant or fairshare.require_share_grant on,
 * the RoleArns and shares granted to roles.  Reading those
 * with three queries per row would cost more than the insert itself, so they
 * are cached per backend.  The cache is dropped whenever any configuration
 * table changes: a statement trigger on each of them (fairshare._config_changed)
 * sends a relcache invalidation for fairshare.job_queues, which PostgreSQL
 * delivers to every backend at commit (and to our own at the next command),
 * and our relcache callback then forgets everything.  This is pg_cron's way
 * of telling its launcher that cron.job changed, without polling.
 *
 * Concurrency is as for a query: a backend that reads the cache while an
 * admin's change is not committed yet sees the old configuration, exactly
 * as a query under READ COMMITTED would.  The cache is (re)loaded under
 * the latest snapshot, not the statement's or the transaction's: the
 * invalidation that dropped it may come from a change committed after that
 * snapshot was taken, and a load that did not see the change would keep
 * the old configuration (a revoked grant, say) cached until the next one.
 *
 * An invalidation may arrive in the middle of a submission's check: any
 * lock the check takes for the first time in its transaction (reading the
 * grants, a role's catalog row) accepts pending invalidations, and the
 * check still holds pointers into the cache (the queue it looked up, the
 * grant it is reading).  So an invalidated cache is not freed at once: its
 * memory is retired, and freed when the next submission check begins
 * (fairshare_config_cache_begin_check), when nothing points into it.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_prelude.h"

#include "commands/trigger.h"
#include "utils/acl.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/snapmgr.h"

#include "statement.h"
#include "tables/lookup.h"
#include "tables/config_cache.h"
#include "tables/catalog_version.h"

PG_FUNCTION_INFO_V1(fairshare_config_changed);

#define QUEUE_NAME_KEY 130		/* names are at most 128 bytes */

typedef struct QueueCacheEntry
{
	char		key[QUEUE_NAME_KEY];
	QueueConfig config;
} QueueCacheEntry;

static MemoryContext cache_context = NULL;
/* Parent of invalidated caches' contexts, until the next check begins. */
static MemoryContext retired_context = NULL;
static HTAB *queue_cache = NULL;
/* The relation whose invalidation means "configuration changed". */
static Oid	anchor_relid = InvalidOid;
/* Counts invalidations, so a load that one interrupted can be redone. */
static uint64 cache_generation = 0;

/*
 * A grant table (fairshare.role_arn_grants, fairshare.share_grants): the
 * role it grants to, kept by OID and name, and what it grants, as patterns
 * (exact, a prefix ending in '*', or '*').
 */
#define MAX_GRANT_PATTERNS 2

typedef struct Grant
{
	Oid			role;
	char	   *role_name;		/* the grant counts while role has this name */
	char	   *patterns[MAX_GRANT_PATTERNS];
} Grant;

typedef struct GrantTable
{
	FairshareStatement stmt;	/* role OID, role name, then the patterns */
	int			n_patterns;
	bool		loaded;
	int			n_grants;
	Grant	   *grants;
} GrantTable;

static GrantTable role_arn_grants = {
	.stmt = {
		.what = "read the RoleArns granted to roles",
		.sql = "SELECT role::oid, role_name, role_arn FROM fairshare.role_arn_grants",
		.read_only = true,
	},
	.n_patterns = 1,
};
static GrantTable share_grants = {
	.stmt = {
		.what = "read the shares granted to roles",
		.sql = "SELECT role::oid, role_name, job_queue, share FROM fairshare.share_grants",
		.read_only = true,
	},
	.n_patterns = 2,
};

static void
config_cache_invalidate(Datum arg, Oid relid)
{
	if (relid == InvalidOid || relid == anchor_relid)
	{
		cache_generation++;
		queue_cache = NULL;
		role_arn_grants.loaded = false;
		share_grants.loaded = false;
		anchor_relid = InvalidOid;
		/* retired, not freed: a check in progress may still point into it */
		if (cache_context != NULL)
			MemoryContextSetParent(cache_context, retired_context);
		cache_context = NULL;
	}
}

void
fairshare_config_cache_begin_check(void)
{
	/* a change committed since this transaction's last lock counts now */
	AcceptInvalidationMessages();
	if (retired_context != NULL)
		MemoryContextDeleteChildren(retired_context);
}

void
fairshare_config_cache_init(void)
{
	CacheRegisterRelcacheCallback(config_cache_invalidate, (Datum) 0);
}

/* Statement trigger on every configuration table. */
Datum
fairshare_config_changed(PG_FUNCTION_ARGS)
{
	fairshare_require_catalog_version();

	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("fairshare._config_changed() must be called as a trigger")));
	CacheInvalidateRelcacheByRelid(fairshare_catalog_relid("job_queues"));
	return PointerGetDatum(NULL);
}

static void
ensure_cache(void)
{
	HASHCTL		ctl;

	if (queue_cache != NULL)
		return;
	if (retired_context == NULL)
		retired_context = AllocSetContextCreate(CacheMemoryContext,
												"fairshare retired config caches",
												ALLOCSET_SMALL_SIZES);
	if (cache_context == NULL)
		cache_context = AllocSetContextCreate(CacheMemoryContext,
											  "fairshare queue config cache",
											  ALLOCSET_SMALL_SIZES);
	anchor_relid = fairshare_catalog_relid("job_queues");
	ctl.keysize = QUEUE_NAME_KEY;
	ctl.entrysize = sizeof(QueueCacheEntry);
	ctl.hcxt = cache_context;
	queue_cache = hash_create("fairshare queue config", 16, &ctl,
							  HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);
}

/* What a queue's configuration is read with; each takes the queue's name. */
static FairshareStatement queue_stmt = {
	.what = "read the job queue's configuration",
	.sql = "SELECT q.state, p.kind, q.accepts_jobs FROM fairshare.job_queues q "
		"LEFT JOIN fairshare.scheduling_policies p ON p.name = q.scheduling_policy "
		"WHERE q.name = $1",
	.argtypes = {TEXTOID},
	.read_only = true,
	.max_rows = 1,
};
static FairshareStatement quota_shares_stmt = {
	.what = "read the queue's quota shares",
	.sql = "SELECT name FROM fairshare.quota_shares WHERE job_queue = $1",
	.argtypes = {TEXTOID},
	.read_only = true,
};
static FairshareStatement closed_quota_shares_stmt = {
	.what = "read the queue's closed quota shares",
	.sql = "SELECT name FROM fairshare.quota_shares WHERE job_queue = $1 AND NOT accepts_jobs",
	.argtypes = {TEXTOID},
	.read_only = true,
};
static FairshareStatement units_stmt = {
	.what = "read the capacity units of the queue's environments",
	.sql = "SELECT DISTINCT cl.capacity_unit FROM fairshare.queue_environments qe "
		"JOIN fairshare.capacity_limits cl ON cl.service_environment = qe.service_environment "
		"WHERE qe.job_queue = $1",
	.argtypes = {TEXTOID},
	.read_only = true,
};

/*
 * A load's reads: in SPI, with the path pinned (a per-row trigger carries
 * no SET clause), read-only statements under the latest snapshot (the
 * active one, for them).  Returns what end_load() needs.
 */
static int
begin_load(void)
{
	int			path_level;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	path_level = fairshare_pin_search_path();
	PushActiveSnapshot(GetLatestSnapshot());
	return path_level;
}

static void
end_load(int path_level)
{
	PopActiveSnapshot();
	fairshare_unpin_search_path(path_level);
	SPI_finish();
}

/* Run a statement about a queue and copy column 1 of every row into cxt. */
static char **
load_names(MemoryContext cxt, FairshareStatement *st, const char *queue, int *count)
{
	Datum		values[1] = {CStringGetTextDatum(queue)};
	char	  **names;

	*count = (int) fairshare_run_statement(st, values, NULL);
	names = MemoryContextAlloc(cxt, sizeof(char *) * Max(*count, 1));
	for (uint64 i = 0; i < SPI_processed; i++)
		names[i] = MemoryContextStrdup(cxt,
									   SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1));
	return names;
}

/*
 * Read one queue's configuration into cache memory.  Returns false if there
 * is no such queue.  An invalidation during the load retires the context it
 * writes to (the caller then reads again); the memory stays valid.
 */
static bool
load_queue(const char *name, QueueConfig *config)
{
	MemoryContext cxt = cache_context;
	Datum		values[1];
	char	   *state;
	char	   *kind;
	char	  **units;
	int			n_units;
	int			path_level;

	path_level = begin_load();
	values[0] = CStringGetTextDatum(name);
	if (fairshare_run_statement(&queue_stmt, values, NULL) == 0)
	{
		end_load(path_level);
		return false;
	}
	state = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
	kind = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2);

	memset(config, 0, sizeof(*config));
	config->name = MemoryContextStrdup(cxt, name);
	config->enabled = strcmp(state, "ENABLED") == 0;
	config->accepts_jobs = strcmp(SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3), "t") == 0;
	config->kind = fs_policy_kind_from_name(kind);
	config->quota_shares = load_names(cxt, &quota_shares_stmt, name, &config->n_quota_shares);
	config->closed_quota_shares = load_names(cxt, &closed_quota_shares_stmt, name,
											 &config->n_closed_quota_shares);
	units = load_names(cxt, &units_stmt, name, &n_units);
	config->instance_types = MemoryContextAlloc(cxt, sizeof(char *) * Max(n_units, 1));
	for (int i = 0; i < n_units; i++)
	{
		if (strcmp(units[i], "NUM_INSTANCES") == 0)
			config->any_instance_type = true;
		else
			config->instance_types[config->n_instance_types++] = units[i];
	}
	end_load(path_level);
	return true;
}

const QueueConfig *
fairshare_lookup_queue(const char *name)
{
	QueueCacheEntry *entry;
	QueueConfig config;
	uint64		generation;

	if (strlen(name) >= QUEUE_NAME_KEY)
		return NULL;
	for (;;)
	{
		ensure_cache();
		entry = hash_search(queue_cache, name, HASH_FIND, NULL);
		if (entry != NULL)
			return &entry->config;
		generation = cache_generation;
		if (!load_queue(name, &config))
			return NULL;
		/* An invalidation during the load retired what it read: read again. */
		if (generation == cache_generation)
			break;
	}
	entry = hash_search(queue_cache, name, HASH_ENTER, NULL);
	entry->config = config;
	return &entry->config;
}

/* Is name one of the n names? */
static bool
name_in(char **names, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return true;
	return false;
}

bool
fairshare_queue_has_quota_share(const QueueConfig *queue, const char *share)
{
	return name_in(queue->quota_shares, queue->n_quota_shares, share);
}

bool
fairshare_quota_share_accepts_jobs(const QueueConfig *queue, const char *share)
{
	return !name_in(queue->closed_quota_shares, queue->n_closed_quota_shares, share);
}

bool
fairshare_queue_can_run_type(const QueueConfig *queue, const char *instance_type)
{
	return queue->any_instance_type ||
		name_in(queue->instance_types, queue->n_instance_types, instance_type);
}

/* Read a grant table into cache memory (as load_queue does). */
static void
load_grants(GrantTable *table)
{
	MemoryContext cxt = cache_context;
	int			path_level;
	uint64		n;

	path_level = begin_load();
	n = fairshare_run_statement(&table->stmt, NULL, NULL);
	table->grants = MemoryContextAlloc(cxt, sizeof(Grant) * Max(n, 1));
	for (uint64 i = 0; i < n; i++)
	{
		Grant	   *g = &table->grants[i];
		bool		isnull;

		g->role = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull));
		g->role_name = MemoryContextStrdup(cxt,
										   SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2));
		for (int k = 0; k < table->n_patterns; k++)
			g->patterns[k] = MemoryContextStrdup(cxt,
												 SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 3 + k));
	}
	table->n_grants = (int) n;
	end_load(path_level);
}

/* A grant's pattern: the value itself, a prefix of it ending in '*', or '*'. */
static bool
pattern_matches(const char *pattern, const char *value)
{
	size_t		n = strlen(pattern);

	if (n > 0 && pattern[n - 1] == '*')
		return strncmp(pattern, value, n - 1) == 0;
	return strcmp(pattern, value) == 0;
}

/*
 * Does the table grant values (one per pattern) to a role whose privileges
 * user has?
 */
static bool
granted(GrantTable *table, Oid user, const char *const *values)
{
	for (;;)
	{
		uint64		generation;

		ensure_cache();
		if (table->loaded)
			break;
		generation = cache_generation;
		load_grants(table);
		/* An invalidation during the load retired what it read: read again. */
		if (generation == cache_generation)
		{
			table->loaded = true;
			break;
		}
	}
	for (int i = 0; i < table->n_grants; i++)
	{
		const Grant *g = &table->grants[i];
		const char *name;
		bool		matches = true;

		for (int k = 0; k < table->n_patterns && matches; k++)
			matches = pattern_matches(g->patterns[k], values[k]);
		if (!matches)
			continue;
		/* a dropped role's grant does not pass to a role that later gets its OID */
		name = GetUserNameFromId(g->role, true);
		if (name != NULL && strcmp(name, g->role_name) == 0 && has_privs_of_role(user, g->role))
			return true;
	}
	return false;
}

bool
fairshare_role_arn_granted(Oid user, const char *role_arn)
{
	const char *values[1] = {role_arn};

	return granted(&role_arn_grants, user, values);
}

bool
fairshare_share_granted(Oid user, const char *queue, const char *share)
{
	const char *values[2] = {queue, share};

	return granted(&share_grants, user, values);
}
