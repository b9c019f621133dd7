/*-------------------------------------------------------------------------
 *
 * sigv4_internal.h
 *		What the files of the SigV4 signer share: the wiped growable
 *		buffer, the parsed URL, and the functions each file offers the
 *		others.  Plain C, like the signer; only src/aws/sigv4*.c include it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FAIRSHARE_SIGV4_INTERNAL_H
#define FAIRSHARE_SIGV4_INTERNAL_H

#include <stddef.h>

#include "sigv4.h"

#define SHA256_LEN			32

/* A growable string; "failed" records an allocation failure. */
typedef struct Buf
{
	char	   *data;
	size_t		len;
	size_t		cap;
	int			failed;
} Buf;

/* The parts of the URL that are signed. */
typedef struct ParsedUrl
{
	int			https;
	const char *host;
	size_t		host_len;
	int			host_is_ipv6;
	long		port;			/* -1 when none */
	const char *path;
	size_t		path_len;
	const char *query;
	size_t		query_len;
} ParsedUrl;

/*
 * The functions below keep the short names they had when the signer was one
 * file.  PostgreSQL 15 builds modules without -fvisibility=hidden, so they
 * are hidden here by hand: they stay out of the library's exported symbols,
 * where names such as str_dup could clash with another library's.
 */
#if defined(__GNUC__)
#pragma GCC visibility push(hidden)
#endif

/* sigv4_text.c */
extern void set_error(char *errbuf, size_t errbuf_len, const char *fmt,...)
			__attribute__((format(printf, 3, 4)));
extern void buf_add(Buf *b, const char *s, size_t n);
extern void buf_adds(Buf *b, const char *s);
extern void buf_addc(Buf *b, char c);
extern void buf_addall(Buf *b,...) __attribute__((sentinel));
extern void buf_wipe(Buf *b);
extern char *buf_take(Buf *b);
extern char *str_dup(const char *s);
extern void str_free_wipe(char *s);
extern int	is_alnum(unsigned char c);
extern int	is_tchar(unsigned char c);
extern int	is_path_safe(unsigned char c);
extern char ascii_lower(char c);
extern char ascii_upper(char c);
extern int	ci_prefix(const char *s, const char *prefix);
extern int	valid_text(const char *s, int allow_tab);
extern void buf_add_trimmed(Buf *b, const char *value);

/* sigv4_crypto.c */
extern int	compute_signature(const char *secret, const char *date8, const char *region,
							  const char *service, const char *sts, char *out_hex);

/* sigv4_url.c */
extern FsSigV4Status parse_url(const char *url, ParsedUrl *pu, char *errbuf, size_t errbuf_len);
extern char *host_value(const ParsedUrl *pu);
extern void add_canonical_path(Buf *out, const char *path, size_t len);
extern void add_canonical_query(Buf *out, const char *q, size_t len);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#endif							/* FAIRSHARE_SIGV4_INTERNAL_H */
