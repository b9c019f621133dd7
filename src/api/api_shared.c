/*-------------------------------------------------------------------------
 *
 * api_shared.c
 *		What the API worker processes share: the open connection count and
 *		the requests-per-second bucket of each key.
 *
 * Several API workers (fairshare.api_workers) listen on the same port
 * (SO_REUSEPORT; the kernel spreads connections over them).  The limits
 * are the server's, not one process's: fairshare.api_max_connections
 * counts every worker's connections, and fairshare.api_key_requests_per_second
 * is one token bucket per key that every worker takes from.
 *
 * Connections: each worker counts its own in a slot of its own (only it
 * writes there; the others read), set to zero when it starts -- so a
 * worker that died with connections open leaves nothing counted behind
 * once it is restarted (a crash also reinitialises shared memory).
 *
 * Buckets: a small table under one LWLock, held only to find or take the
 * slot (a scan of RATE_SLOTS short strings); a key beyond the table's size
 * takes the slot of the key seen longest ago.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_prelude.h"

#include <time.h>

#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"

#include "api/api.h"
#include "api/api_internal.h"
#include "settings.h"

#define RATE_SLOTS 256

typedef struct RateSlot
{
	char		key[129];
	double		tokens;
	double		last;			/* seconds, CLOCK_MONOTONIC (machine-wide) */
} RateSlot;

typedef struct ApiShared
{
	LWLock	   *lock;			/* guards slots[] */
	pg_atomic_uint32 connections[FS_API_MAX_WORKERS];
	RateSlot	slots[RATE_SLOTS];
} ApiShared;

static ApiShared *api_shared = NULL;
static int	my_slot = -1;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static void
api_shared_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(MAXALIGN(sizeof(ApiShared)));
	RequestNamedLWLockTranche("fairshare api", 1);
}

static void
api_shared_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	api_shared = ShmemInitStruct("fairshare api", sizeof(ApiShared), &found);
	if (!found)
	{
		memset(api_shared, 0, sizeof(ApiShared));
		api_shared->lock = &(GetNamedLWLockTranche("fairshare api"))->lock;
		for (int i = 0; i < FS_API_MAX_WORKERS; i++)
			pg_atomic_init_u32(&api_shared->connections[i], 0);
	}
	LWLockRelease(AddinShmemInitLock);
}

/* From _PG_init, while preloading: ask for the shared memory. */
void
fairshare_api_shared_init(void)
{
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = api_shared_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = api_shared_startup;
}

/* This worker's connection slot; its connections start at zero. */
void
fairshare_api_shared_attach(int worker)
{
	Assert(worker >= 0 && worker < FS_API_MAX_WORKERS);
	my_slot = worker;
	if (api_shared != NULL)
		pg_atomic_write_u32(&api_shared->connections[my_slot], 0);
}

void
fairshare_api_connection_opened(void)
{
	if (api_shared != NULL && my_slot >= 0)
		pg_atomic_fetch_add_u32(&api_shared->connections[my_slot], 1);
}

void
fairshare_api_connection_closed(void)
{
	if (api_shared != NULL && my_slot >= 0 &&
		pg_atomic_read_u32(&api_shared->connections[my_slot]) > 0)
		pg_atomic_fetch_sub_u32(&api_shared->connections[my_slot], 1);
}

/* Connections open on every API worker together. */
int
fairshare_api_open_connections(void)
{
	uint32		n = 0;

	if (api_shared == NULL)
		return 0;
	for (int i = 0; i < FS_API_MAX_WORKERS; i++)
		n += pg_atomic_read_u32(&api_shared->connections[i]);
	return (int) n;
}

static double
monotonic_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Take one request from key's bucket (fairshare.api_key_requests_per_second,
 * bursts of one second); false when it is empty.  Shared by every worker.
 */
bool
fairshare_api_rate_allow(const char *key)
{
	double		now = monotonic_seconds();
	double		rate = fairshare_api_key_requests_per_second;
	RateSlot   *slot = NULL;
	RateSlot   *oldest;
	bool		allowed;

	if (api_shared == NULL)
		return true;
	LWLockAcquire(api_shared->lock, LW_EXCLUSIVE);
	oldest = &api_shared->slots[0];
	for (int i = 0; i < RATE_SLOTS; i++)
	{
		RateSlot   *s = &api_shared->slots[i];

		if (strcmp(s->key, key) == 0)
		{
			slot = s;
			break;
		}
		if (s->last < oldest->last)
			oldest = s;
	}
	if (slot == NULL)
	{
		slot = oldest;
		strlcpy(slot->key, key, sizeof(slot->key));
		slot->tokens = rate;
		slot->last = now;
	}
	slot->tokens = Min(rate, slot->tokens + (now - slot->last) * rate);
	slot->last = now;
	allowed = slot->tokens >= 1.0;
	if (allowed)
		slot->tokens -= 1.0;
	LWLockRelease(api_shared->lock);
	return allowed;
}
