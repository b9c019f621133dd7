/*-------------------------------------------------------------------------
 *
 * catalog_version.h
 *		Does the catalog in this database match the library?
 *
 * After a package upgrade the server runs the new library while each
 * database keeps its old catalog until someone runs ALTER EXTENSION
 * fairshare UPDATE.  The C functions that read or write fairshare's tables
 * check first, so that they refuse with a hint instead of misreading a
 * table whose columns are not the ones they know.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FAIRSHARE_TABLES_CATALOG_VERSION_H
#define FAIRSHARE_TABLES_CATALOG_VERSION_H

/* The Makefile passes the version it builds (EXTVERSION). */
#ifndef FAIRSHARE_VERSION
#error "FAIRSHARE_VERSION must be defined (the Makefile passes -DFAIRSHARE_VERSION)"
#endif

/* The catalog version this library works with. */
#define FAIRSHARE_CATALOG_VERSION FAIRSHARE_VERSION

/*
 * The installed version of extension fairshare in this database (palloc'd),
 * or NULL when it is not installed.  Reads pg_extension; in a transaction.
 */
extern char *fairshare_installed_version(void);

/*
 * ERROR (with a hint to run ALTER EXTENSION fairshare UPDATE) unless the
 * catalog is FAIRSHARE_CATALOG_VERSION.  Passes while CREATE or ALTER
 * EXTENSION runs a script: the script's own calls are meant for the
 * catalog it is building.  A backend that has seen the right version once
 * does not read pg_extension again (triggers call this for every row).
 */
extern void fairshare_require_catalog_version(void);

/*
 * Is the extension installed in this database at FAIRSHARE_CATALOG_VERSION?
 * If it is installed at all, it is locked against DROP EXTENSION until the
 * transaction ends.  *version is the installed version, or NULL.  For the
 * workers that run statements naming schema fairshare as the superuser.
 */
extern bool fairshare_lock_current_catalog(char **version);

/* Is catalog version a older than b (dot-separated numbers)? */
extern bool fairshare_version_older(const char *a, const char *b);

/*
 * What to do about a catalog of this version in this database: ALTER
 * EXTENSION UPDATE, or (a catalog newer than the library) install the
 * library that goes with it.
 */
extern const char *fairshare_catalog_version_hint(const char *catalog_version, const char *database);

#endif							/* FAIRSHARE_TABLES_CATALOG_VERSION_H */
