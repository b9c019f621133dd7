/*-------------------------------------------------------------------------
 *
 * pg_prelude.h
 *		The PostgreSQL headers the extension's server-side files use.
 *
 * Every server-side .c file includes this first instead of picking its own
 * set of PostgreSQL headers, so the include order (postgres.h first) is
 * right everywhere and a new file starts from a known base.  The pure
 * scheduling core (src/scheduler/) must NOT include it: it is plain C.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FAIRSHARE_PG_PRELUDE_H
#define FAIRSHARE_PG_PRELUDE_H

#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#endif							/* FAIRSHARE_PG_PRELUDE_H */
