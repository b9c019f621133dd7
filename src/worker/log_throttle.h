/*-------------------------------------------------------------------------
 *
 * log_throttle.h
 *		At most one log line a minute for each kind of repeated trouble.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FAIRSHARE_WORKER_LOG_THROTTLE_H
#define FAIRSHARE_WORKER_LOG_THROTTLE_H

/* How long a kind of message stays quiet after it was logged. */
#define FS_LOG_THROTTLE_MS	60000

/*
 * Is a message of this kind due?  True at most once per FS_LOG_THROTTLE_MS
 * per kind; then *held says how many were held back since the last one.
 * kind is any short text naming what went wrong ("DescribeTrainingJob:
 * ServiceUnavailable"); only its first 96 bytes count.
 */
extern bool fs_log_due(const char *kind, int *held);

#endif							/* FAIRSHARE_WORKER_LOG_THROTTLE_H */
