/*-------------------------------------------------------------------------
 *
 * config_cache.c
 *		Per-backend cache of queue configuration, invalidated on change.
 *
 * Every INSERT into fairshare.jobs needs its queue's policy kind, quota
 * shares and the instance types its environments can run.  Reading those
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
 * as a query under READ COMMITTED would.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_prelude.h"

#include "commands/trigger.h"
#include "utils/hsearch.h"
#include "utils/inval.h"

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
static HTAB *queue_cache = NULL;
/* The relation whose invalidation means "configuration changed". */
static Oid	anchor_relid = InvalidOid;
/* Counts invalidations, so a load that one interrupted can be redone. */
static uint64 cache_generation = 0;

static void
config_cache_invalidate(Datum arg, Oid relid)
{
	if (relid == InvalidOid || relid == anchor_relid)
	{
		cache_generation++;
		queue_cache = NULL;
		anchor_relid = InvalidOid;
		if (cache_context != NULL)
			MemoryContextReset(cache_context);
	}
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

/* Run a statement about a queue and copy column 1 of every row into cache memory. */
static char **
load_names(FairshareStatement *st, const char *queue, int *count)
{
	Datum		values[1] = {CStringGetTextDatum(queue)};
	char	  **names;

	*count = (int) fairshare_run_statement(st, values, NULL);
	names = MemoryContextAlloc(cache_context, sizeof(char *) * Max(*count, 1));
	for (uint64 i = 0; i < SPI_processed; i++)
		names[i] = MemoryContextStrdup(cache_context,
									   SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1));
	return names;
}

/*
 * Read one queue's configuration into cache memory.  Returns false if there
 * is no such queue.
 */
static bool
load_queue(const char *name, QueueConfig *config)
{
	Datum		values[1];
	char	   *state;
	char	   *kind;
	char	  **units;
	int			n_units;
	int			path_level;

	/* A per-row trigger carries no SET clause: pin the path here. */
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	path_level = fairshare_pin_search_path();
	values[0] = CStringGetTextDatum(name);
	if (fairshare_run_statement(&queue_stmt, values, NULL) == 0)
	{
		fairshare_unpin_search_path(path_level);
		SPI_finish();
		return false;
	}
	state = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
	kind = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2);

	memset(config, 0, sizeof(*config));
	config->name = MemoryContextStrdup(cache_context, name);
	config->enabled = strcmp(state, "ENABLED") == 0;
	config->accepts_jobs = strcmp(SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3), "t") == 0;
	config->kind = fs_policy_kind_from_name(kind);
	config->quota_shares = load_names(&quota_shares_stmt, name, &config->n_quota_shares);
	config->closed_quota_shares = load_names(&closed_quota_shares_stmt, name,
											 &config->n_closed_quota_shares);
	units = load_names(&units_stmt, name, &n_units);
	config->instance_types = MemoryContextAlloc(cache_context, sizeof(char *) * Max(n_units, 1));
	for (int i = 0; i < n_units; i++)
	{
		if (strcmp(units[i], "NUM_INSTANCES") == 0)
			config->any_instance_type = true;
		else
			config->instance_types[config->n_instance_types++] = units[i];
	}
	fairshare_unpin_search_path(path_level);
	SPI_finish();
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
		/* An invalidation during the load freed what it read: read again. */
		if (generation == cache_generation)
			break;
	}
	entry = hash_search(queue_cache, name, HASH_ENTER, NULL);
	entry->config = config;
	return &entry->config;
}

bool
fairshare_queue_has_quota_share(const QueueConfig *queue, const char *share)
{
	for (int i = 0; i < queue->n_quota_shares; i++)
		if (strcmp(queue->quota_shares[i], share) == 0)
			return true;
	return false;
}

bool
fairshare_quota_share_accepts_jobs(const QueueConfig *queue, const char *share)
{
	for (int i = 0; i < queue->n_closed_quota_shares; i++)
		if (strcmp(queue->closed_quota_shares[i], share) == 0)
			return false;
	return true;
}

bool
fairshare_queue_can_run_type(const QueueConfig *queue, const char *instance_type)
{
	if (queue->any_instance_type)
		return true;
	for (int i = 0; i < queue->n_instance_types; i++)
		if (strcmp(queue->instance_types[i], instance_type) == 0)
			return true;
	return false;
}
