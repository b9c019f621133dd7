/*-------------------------------------------------------------------------
 *
 * lookup.h
 *		Finding fairshare's own tables from C.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FAIRSHARE_TABLES_LOOKUP_H
#define FAIRSHARE_TABLES_LOOKUP_H

/* OID of fairshare.<relname>; errors if the extension is not installed. */
extern Oid	fairshare_catalog_relid(const char *relname);

/* The role that owns the fairshare catalog (fairshare.jobs). */
extern Oid	fairshare_catalog_owner(void);

#endif							/* FAIRSHARE_TABLES_LOOKUP_H */
