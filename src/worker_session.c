/*-------------------------------------------------------------------------
 *
 * worker_session.c
 *		Connect one of fairshare's background workers to its database with
 *		the server's settings, whatever the database's owner set.
 *
 * A background worker's connection takes the database's settings (ALTER
 * DATABASE ... SET) as any session does, and the database's owner may make
 * them without being a superuser.  fairshare's workers run as the
 * bootstrap superuser, and some settings any user may change would change
 * what they guarantee: synchronous_commit = local turns the failover fence
 * off (a placement would no longer wait for the synchronous standby);
 * default_transaction_read_only or a short statement_timeout stops the
 * dispatcher; search_path would let the owner's functions run as the
 * superuser.  So, for every setting a user may change (PGC_USERSET), a
 * worker keeps the value the server's configuration gives it (the one it
 * had before it connected) and logs the names of the database's settings
 * it ignored.  Settings only a superuser may change stay as the database
 * has them: only a superuser can have made those.  The value kept is
 * pinned (PGC_S_OVERRIDE), as the database's own would have outranked a
 * reload of postgresql.conf too.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_prelude.h"

#include "lib/stringinfo.h"
#include "postmaster/bgworker.h"
#include "utils/guc.h"
#include "utils/guc_tables.h"
#include "utils/memutils.h"

#include "worker_session.h"

typedef struct ServerSetting
{
	const char *name;
	const char *value;
} ServerSetting;

static const char *
server_value(const ServerSetting *saved, int nsaved, const char *name)
{
	for (int i = 0; i < nsaved; i++)
		if (strcmp(saved[i].name, name) == 0)
			return saved[i].value;
	return NULL;
}

/*
 * Connect to database as the bootstrap superuser (BackgroundWorkerInitialize-
 * Connection), undo the database's settings of what any user may set, then
 * pin search_path.  worker_name names the worker in the log.
 */
void
fairshare_worker_connect(const char *database, const char *search_path, const char *worker_name)
{
	MemoryContext cxt = AllocSetContextCreate(TopMemoryContext, "fairshare worker settings",
											  ALLOCSET_SMALL_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	struct config_generic **vars = get_guc_variables();
	int			nvars = GetNumConfigOptions();
	ServerSetting *saved = palloc(nvars * sizeof(ServerSetting));
	int			nsaved = 0;
	StringInfoData ignored;

	for (int i = 0; i < nvars; i++)
	{
		const char *value;

		if (vars[i]->context != PGC_USERSET)
			continue;
		value = GetConfigOption(vars[i]->name, true, false);
		if (value == NULL)
			continue;
		saved[nsaved].name = pstrdup(vars[i]->name);
		saved[nsaved].value = pstrdup(value);
		nsaved++;
	}

	BackgroundWorkerInitializeConnection(database, NULL, 0);

	/* Connecting may have added placeholders: look again, by name. */
	vars = get_guc_variables();
	nvars = GetNumConfigOptions();
	initStringInfo(&ignored);
	for (int i = 0; i < nvars; i++)
	{
		const char *value;

		if (vars[i]->context != PGC_USERSET || vars[i]->source != PGC_S_DATABASE)
			continue;
		value = server_value(saved, nsaved, vars[i]->name);
		if (value == NULL)
			continue;			/* a placeholder: no module defines it */
		if (set_config_option(vars[i]->name, value, PGC_SUSET, PGC_S_OVERRIDE,
							  GUC_ACTION_SET, true, WARNING, false) > 0)
			appendStringInfo(&ignored, "%s%s", ignored.len > 0 ? ", " : "", vars[i]->name);
	}
	SetConfigOption("search_path", search_path, PGC_SUSET, PGC_S_OVERRIDE);
	if (ignored.len > 0)
		ereport(LOG,
				(errmsg("%s ignores the settings of database \"%s\" for %s",
						worker_name, database, ignored.data),
				 errdetail("fairshare's workers run with the server's configuration for every setting a user may change, "
						   "since the database's owner may make such settings.")));
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
}
