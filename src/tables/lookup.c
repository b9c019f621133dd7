/*-------------------------------------------------------------------------
 *
 * lookup.c
 *		Finding fairshare's own tables from C.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_prelude.h"

#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "utils/syscache.h"

#include "tables/lookup.h"

Oid
fairshare_catalog_relid(const char *relname)
{
	return RangeVarGetRelid(makeRangeVar("fairshare", (char *) relname, -1), NoLock, false);
}

Oid
fairshare_catalog_owner(void)
{
	Oid			relid = fairshare_catalog_relid("jobs");
	HeapTuple	tuple;
	Oid			owner;

	tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	if (!HeapTupleIsValid(tuple))
		elog(ERROR, "cache lookup failed for relation %u", relid);
	owner = ((Form_pg_class) GETSTRUCT(tuple))->relowner;
	ReleaseSysCache(tuple);
	return owner;
}

FairshareSavedUser
fairshare_become_catalog_owner(void)
{
	FairshareSavedUser saved;

	GetUserIdAndSecContext(&saved.user, &saved.sec_context);
	SetUserIdAndSecContext(fairshare_catalog_owner(), saved.sec_context | SECURITY_LOCAL_USERID_CHANGE);
	return saved;
}

void
fairshare_restore_user(FairshareSavedUser saved)
{
	SetUserIdAndSecContext(saved.user, saved.sec_context);
}
