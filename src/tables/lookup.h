/*-------------------------------------------------------------------------
 *
 * lookup.h
 *		Finding fairshare's own tables, and its jobs as the caller sees them, from C.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FAIRSHARE_TABLES_LOOKUP_H
#define FAIRSHARE_TABLES_LOOKUP_H

/* OID of fairshare.<relname>; errors if the extension is not installed. */
extern Oid	fairshare_catalog_relid(const char *relname);

/* The role that owns the fairshare catalog (fairshare.jobs). */
extern Oid	fairshare_catalog_owner(void);

/*
 * The search_path every piece of fairshare's own SQL runs with when it runs
 * with more privilege than its caller (as the catalog owner, in a background
 * worker): PostgreSQL's built-ins first, then fairshare, and the session's
 * temporary schema explicitly last.  Left off the path, pg_temp would be
 * searched FIRST for relations and types, so a caller's temporary domain
 * named "text" would stand in for pg_catalog.text in our statements; and a
 * schema of the caller's earlier on the path would win function and
 * operator lookups.  PL/pgSQL binds the types of its variables when a
 * function is first compiled in a session, which is why the extension's
 * SQL functions carry the same path in their SET clause.
 */
#define FAIRSHARE_SAFE_SEARCH_PATH "pg_catalog, fairshare, pg_temp"

/*
 * Pin FAIRSHARE_SAFE_SEARCH_PATH for a block: returns the GUC nest level to
 * give back to fairshare_unpin_search_path().  An ERROR in the block needs
 * no unpin: transaction (or subtransaction) abort restores the setting.
 */
extern int	fairshare_pin_search_path(void);
extern void fairshare_unpin_search_path(int nest_level);

/*
 * Acting as the catalog owner for a block, the way a SECURITY DEFINER
 * function would: after the caller's own permission checks, reads (or
 * writes) of tables the caller may not touch.  It also pins the safe
 * search_path and marks the block a security-restricted operation (no SET
 * ROLE, no temporary objects), so nothing the caller prepared in its
 * session can run as the owner.  An ERROR in the block needs no restore:
 * transaction abort resets the user and the setting.
 */
typedef struct FairshareSavedUser
{
	Oid			user;
	int			sec_context;
	int			guc_nest_level;
} FairshareSavedUser;

extern FairshareSavedUser fairshare_become_catalog_owner(void);
extern void fairshare_restore_user(FairshareSavedUser saved);

/*
 * As the current user: may it see the job?  Row-level security answers
 * for a submitter; a job it may not see "does not exist".  Inside SPI.
 */
extern void fairshare_require_visible_job(int64 job_id);

#endif							/* FAIRSHARE_TABLES_LOOKUP_H */
