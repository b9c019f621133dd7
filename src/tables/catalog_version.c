/*-------------------------------------------------------------------------
 *
 * catalog_version.c
 *		Does the catalog in this database match the library?
 *
 * A package upgrade replaces the library; each database's catalog stays
 * at its old version until ALTER EXTENSION fairshare UPDATE runs there.
 * In between, the new library must neither crash nor misread the old
 * tables.  As pg_cron does for its old catalogs, the C functions that use
 * fairshare's tables (the job triggers, schedule(), the job controls and
 * the explain functions) call fairshare_require_catalog_version() first and
 * refuse with a hint; the dispatcher waits (src/worker/dispatcher.c).
 *
 * Functions that do not touch fairshare's tables (the AWS helpers, the
 * dispatcher's state, the pg_cron housekeeping calls and the DROP event
 * trigger, which must let DROP EXTENSION through whatever the version) work
 * on any catalog and are not guarded.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_prelude.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/indexing.h"
#include "catalog/pg_extension.h"
#include "commands/dbcommands.h"
#include "commands/extension.h"
#include "storage/lmgr.h"
#include "utils/fmgroids.h"
#include "utils/rel.h"

#include "tables/catalog_version.h"

/*
 * The database whose catalog this backend found current.  Versions only
 * move forward with the library, so once current stays current, except
 * when the extension is dropped and created again at another version:
 * any CREATE or ALTER EXTENSION seen running forgets it.
 */
static Oid	current_in_database = InvalidOid;

char *
fairshare_installed_version(void)
{
	Relation	rel;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tuple;
	char	   *version = NULL;

	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_extension_extname, BTEqualStrategyNumber, F_NAMEEQ,
				CStringGetDatum("fairshare"));
	scan = systable_beginscan(rel, ExtensionNameIndexId, true, NULL, 1, &key);
	tuple = systable_getnext(scan);
	if (HeapTupleIsValid(tuple))
	{
		bool		isnull;
		Datum		d = heap_getattr(tuple, Anum_pg_extension_extversion,
									 RelationGetDescr(rel), &isnull);

		if (!isnull)
			version = text_to_cstring(DatumGetTextPP(d));
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return version;
}

/*
 * For a worker that runs statements naming schema fairshare as the
 * superuser: is the extension installed here, at this library's version?
 * When it is, it is locked for the rest of the transaction, as DROP
 * EXTENSION would lock it, so that it cannot be dropped -- and a schema
 * "fairshare" of someone else's made in its place -- before the
 * transaction ends.  Without the extension, schema fairshare is whoever
 * made it (the database's owner may); CREATE EXTENSION refuses such a
 * schema, but nothing keeps it from existing meanwhile.  *version is the
 * installed version (palloc'd), or NULL.
 */
bool
fairshare_lock_current_catalog(char **version)
{
	Oid			extension_id = get_extension_oid("fairshare", true);

	*version = NULL;
	if (!OidIsValid(extension_id))
		return false;
	LockDatabaseObject(ExtensionRelationId, extension_id, 0, AccessShareLock);
	/* it may have been dropped while we waited for the lock */
	if (get_extension_oid("fairshare", true) != extension_id)
		return false;
	*version = fairshare_installed_version();
	return *version != NULL && strcmp(*version, FAIRSHARE_CATALOG_VERSION) == 0;
}

/*
 * Is catalog version a older than b?  Versions are dot-separated numbers
 * ("0.1.0"); a missing part counts as 0.
 */
bool
fairshare_version_older(const char *a, const char *b)
{
	while (*a != '\0' || *b != '\0')
	{
		char	   *end;
		long		x = strtol(a, &end, 10);
		long		y;

		a = (*end == '.') ? end + 1 : end;
		y = strtol(b, &end, 10);
		b = (*end == '.') ? end + 1 : end;
		if (x != y)
			return x < y;
	}
	return false;
}

const char *
fairshare_catalog_version_hint(const char *catalog_version, const char *database)
{
	if (fairshare_version_older(catalog_version, FAIRSHARE_CATALOG_VERSION))
		return psprintf("Run ALTER EXTENSION fairshare UPDATE in database \"%s\".", database);
	return psprintf("The catalog is newer than the library: install the fairshare library of version %s and restart the server.",
					catalog_version);
}

void
fairshare_require_catalog_version(void)
{
	char	   *version;

	if (creating_extension)
	{
		current_in_database = InvalidOid;
		return;
	}
	if (current_in_database == MyDatabaseId)
		return;
	version = fairshare_installed_version();
	if (version == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("extension \"fairshare\" is not installed in this database"),
				 errhint("Run CREATE EXTENSION fairshare.")));
	if (strcmp(version, FAIRSHARE_CATALOG_VERSION) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the fairshare catalog in this database is version %s, but the fairshare library is version %s",
						version, FAIRSHARE_CATALOG_VERSION),
				 errdetail("The library and the catalog are upgraded separately: the catalog by ALTER EXTENSION, in each database."),
				 errhint("%s", fairshare_catalog_version_hint(version, get_database_name(MyDatabaseId)))));
	current_in_database = MyDatabaseId;
}
