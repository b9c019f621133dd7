/*-------------------------------------------------------------------------
 *
 * log_throttle.c
 *		At most one log line a minute for each kind of repeated trouble.
 *
 * The dispatcher meets the same trouble on every poll while it lasts (a
 * SageMaker outage, a catalog that needs ALTER EXTENSION UPDATE, a
 * missing credential): one warning per poll would bury the log.  So each
 * kind is logged once, then held back for a minute, and the next line
 * says how many were held back.  The kinds seen live in a small fixed
 * table; when it is full the one logged longest ago makes room.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_prelude.h"

#include "worker/log_throttle.h"

#define KIND_BYTES	96
#define N_KINDS		32

typedef struct ThrottledKind
{
	char		kind[KIND_BYTES];
	TimestampTz last;
	int			held;
} ThrottledKind;

static ThrottledKind kinds[N_KINDS];

bool
fs_log_due(const char *kind, int *held)
{
	TimestampTz now = GetCurrentTimestamp();
	ThrottledKind *slot = NULL;
	ThrottledKind *oldest = &kinds[0];

	for (int i = 0; i < N_KINDS; i++)
	{
		if (kinds[i].kind[0] != '\0' && strncmp(kinds[i].kind, kind, KIND_BYTES - 1) == 0)
		{
			slot = &kinds[i];
			break;
		}
		if (kinds[i].last < oldest->last)
			oldest = &kinds[i];
	}
	if (slot == NULL)
	{
		slot = oldest;
		strlcpy(slot->kind, kind, KIND_BYTES);
		slot->last = 0;
		slot->held = 0;
	}
	if (slot->last != 0 && now < TimestampTzPlusMilliseconds(slot->last, FS_LOG_THROTTLE_MS))
	{
		slot->held++;
		return false;
	}
	*held = slot->held;
	slot->held = 0;
	slot->last = now;
	return true;
}
