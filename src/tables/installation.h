/*-------------------------------------------------------------------------
 *
 * installation.h
 *		This installation's id, and the training job names made from it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FAIRSHARE_TABLES_INSTALLATION_H
#define FAIRSHARE_TABLES_INSTALLATION_H

/*
 * The installation id (fairshare.installation), as text; read at most once
 * per transaction, as the catalog owner.  Inside a transaction.
 */
extern const char *fairshare_installation_id(void);

/*
 * The training job name of an attempt: fairshare.job_name_prefix, the
 * first 8 hex digits of the installation id, the job id and the attempt,
 * joined by hyphens ("fairshare-1a2b3c4d-42-1").  The one definition of the
 * name; fairshare.training_job_name() calls it.  Inside a transaction.
 */
extern char *fairshare_training_job_name(int64 job_id, int attempt);

/* The same for a given installation id; no transaction needed. */
extern char *fairshare_training_job_name_for(const char *installation_id, int64 job_id, int attempt);

/*
 * The installation's id and its tag_key (64 hex digits), which signs the
 * fairshare:job-submitted tag (dispatch_submission_tag()), of one row in
 * one statement.  Inside a transaction; the caller keeps the key out of
 * every message.
 */
extern void fairshare_installation_id_and_tag_key(char *id, size_t id_size, char *key, size_t key_size);
extern bool fairshare_training_job_name_has_installation(const char *name, const char *installation_id,
														 int64 job_id);

/* The installation part of names: the first 8 hex digits of the id. */
#define FAIRSHARE_INSTALLATION_NAME_CHARS 8

#endif							/* FAIRSHARE_TABLES_INSTALLATION_H */
