/*-------------------------------------------------------------------------
 *
 * curl_prelude.h
 *		The libcurl headers, and the macros that check every curl call.
 *
 * Every server-side file that uses libcurl includes this (after
 * pg_prelude.h) instead of <curl/curl.h>, so that curl's headers are pulled
 * in one way everywhere and every curl call is checked the same way: a
 * failing call raises an ERROR naming the call and curl's own message.
 *
 * The macros ereport(ERROR), so use them only where the curl handles in use
 * are released on error (PG_TRY/PG_FINALLY around them, as http.c does).
 * Never pass anything that may hold a secret (a header line, a request
 * body) to the error text: the macros print only the call or option name.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FAIRSHARE_CURL_PRELUDE_H
#define FAIRSHARE_CURL_PRELUDE_H

#include <curl/curl.h>

/* curl_easy_setopt(h, OPT, value); on failure: "curl_easy_setopt(OPT) failed: ..." */
#define FS_CURL_SETOPT(handle, opt, value) \
	do { \
		CURLcode	fs_curl_rc_ = curl_easy_setopt((handle), (opt), (value)); \
		if (fs_curl_rc_ != CURLE_OK) \
			ereport(ERROR, \
					(errcode(ERRCODE_EXTERNAL_ROUTINE_EXCEPTION), \
					 errmsg("curl_easy_setopt(%s) failed: %s", \
							#opt, curl_easy_strerror(fs_curl_rc_)))); \
	} while (0)

/* Any call returning CURLcode; the message names the function called. */
#define FS_CURL_CHECK(func, args) \
	do { \
		CURLcode	fs_curl_rc_ = func args; \
		if (fs_curl_rc_ != CURLE_OK) \
			ereport(ERROR, \
					(errcode(ERRCODE_EXTERNAL_ROUTINE_EXCEPTION), \
					 errmsg("%s() failed: %s", #func, curl_easy_strerror(fs_curl_rc_)))); \
	} while (0)

/* Any call returning CURLMcode (the multi interface). */
#define FS_CURLM_CHECK(func, args) \
	do { \
		CURLMcode	fs_curlm_rc_ = func args; \
		if (fs_curlm_rc_ != CURLM_OK) \
			ereport(ERROR, \
					(errcode(ERRCODE_EXTERNAL_ROUTINE_EXCEPTION), \
					 errmsg("%s() failed: %s", #func, curl_multi_strerror(fs_curlm_rc_)))); \
	} while (0)

#endif							/* FAIRSHARE_CURL_PRELUDE_H */
