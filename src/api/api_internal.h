/*-------------------------------------------------------------------------
 *
 * api_internal.h
 *		What the API worker (api_worker.c), its HTTP layer (api_http.c) and
 *		the state shared between workers (api_shared.c) have in common:
 *		libmicrohttpd's callbacks, the per-request memory, the limits.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FAIRSHARE_API_INTERNAL_H
#define FAIRSHARE_API_INTERNAL_H

#include <microhttpd.h>

/* Reset after every request; a child of TopMemoryContext. */
extern MemoryContext fairshare_api_request_context;

/* cls is non-NULL for an HTTPS daemon. */
extern enum MHD_Result fairshare_api_access_handler(void *cls, struct MHD_Connection *connection,
													const char *url, const char *method,
													const char *version, const char *upload_data,
													size_t *upload_data_size, void **con_cls);
extern void fairshare_api_request_completed(void *cls, struct MHD_Connection *connection,
											void **con_cls, enum MHD_RequestTerminationCode toe);
extern void fairshare_api_connection_notify(void *cls, struct MHD_Connection *connection,
											void **socket_context,
											enum MHD_ConnectionNotificationCode toe);
extern size_t fairshare_api_unescape_nothing(void *cls, struct MHD_Connection *c, char *s);

/* The API worker's SIGINT handler (api_call.c). */
extern void fairshare_api_cancel_handler(SIGNAL_ARGS);

/* Shared by every API worker (api_shared.c). */
extern void fairshare_api_shared_init(void);
extern void fairshare_api_shared_attach(int worker);
extern void fairshare_api_connection_opened(void);
extern void fairshare_api_connection_closed(void);
extern int	fairshare_api_open_connections(void);
extern bool fairshare_api_rate_allow(const char *key);

#endif							/* FAIRSHARE_API_INTERNAL_H */
