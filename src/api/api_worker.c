/*-------------------------------------------------------------------------
 *
 * api_worker.c
 *		The "fairshare api" background worker: listens for AWS Batch API
 *		requests (libmicrohttpd) and answers them from its latch loop.
 *
 * Off while fairshare.api_port is 0: the worker then waits for a reload
 * without even connecting to a database.  Once a port is set it connects
 * to fairshare.database and, on a primary only, listens on every address
 * of fairshare.api_listen_addresses.  An address outside loopback is
 * served only over HTTPS (fairshare.api_tls_cert_file and _key_file);
 * without them the worker refuses to listen at all and logs why.
 *
 * libmicrohttpd runs without threads of its own (external epoll mode): the
 * epoll descriptor of each listening daemon sits in a WaitEventSet beside
 * the latch, and MHD_run() is called when one is ready or when
 * MHD_get_timeout() says a connection is due to time out.  Every request
 * callback therefore runs here, on the worker's one thread.
 *
 * Several workers (fairshare.api_workers, registered when the server
 * starts) each open their own listening sockets on the same addresses and
 * port (SO_REUSEPORT: MHD_OPTION_LISTENING_ADDRESS_REUSE) and the kernel
 * spreads new connections over them; each serves its connections from its
 * own latch loop.  The limits hold for all of them together (api_shared.c).
 *
 * Independent of the dispatcher: its own process, restarted by the
 * postmaster after a crash (bgw_restart_time), exiting with 1 on SIGTERM;
 * a failing API never stops dispatching, nor the other way round.  After
 * a reload that changes where or how it listens, it closes its sockets
 * and opens new ones.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_prelude.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>

#include "access/xlog.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "tcop/tcopprot.h"

#include "api/api.h"
#include "api/api_internal.h"
#include "settings.h"
#include "tables/lookup.h"
#include "worker_session.h"

PGDLLEXPORT void fairshare_api_main(Datum main_arg);

#define MAX_LISTEN 16
/* How long to wait before trying again to listen after a failure. */
#define LISTEN_RETRY_MS 5000

MemoryContext fairshare_api_request_context = NULL;

typedef struct Listener
{
	struct sockaddr_storage addr;
	bool		ipv6;
	bool		loopback;
	char		text[64];
	struct MHD_Daemon *daemon;
} Listener;

static Listener listeners[MAX_LISTEN];
static int	nlisteners = 0;
static char *tls_cert = NULL;
static char *tls_key = NULL;
static WaitEventSet *wait_set = NULL;

/* What the sockets were opened with: a reload that changes it reopens them. */
static char *listening_signature = NULL;

/* Parse one address into l; false if it is not one. */
static bool
parse_address(const char *a, Listener *l)
{
	struct sockaddr_in *in4 = (struct sockaddr_in *) &l->addr;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *) &l->addr;

	memset(l, 0, sizeof(*l));
	if (strcmp(a, "localhost") == 0)
		a = "127.0.0.1";
	else if (strcmp(a, "*") == 0)
		a = "0.0.0.0";
	strlcpy(l->text, a, sizeof(l->text));
	if (inet_pton(AF_INET, a, &in4->sin_addr) == 1)
	{
		in4->sin_family = AF_INET;
		l->loopback = (ntohl(in4->sin_addr.s_addr) >> 24) == 127;
		return true;
	}
	if (inet_pton(AF_INET6, a, &in6->sin6_addr) == 1)
	{
		in6->sin6_family = AF_INET6;
		l->ipv6 = true;
		l->loopback = IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr);
		return true;
	}
	return false;
}

/* Split the setting into listeners[]; returns why not, or NULL. */
static const char *
parse_addresses(const char *value, Listener *out, int *n)
{
	char		buf[1024];
	char	   *tok;
	char	   *save = NULL;

	*n = 0;
	if (strlen(value) >= sizeof(buf))
		return "the list is too long";
	strcpy(buf, value);
	for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save))
	{
		Listener	l;

		while (*tok == ' ' || *tok == '\t')
			tok++;
		for (char *e = tok + strlen(tok); e > tok && (e[-1] == ' ' || e[-1] == '\t');)
			*--e = '\0';
		if (*tok == '\0')
			continue;
		if (!parse_address(tok, &l))
			return "each address must be an IPv4 or IPv6 literal, localhost or *";
		if (*n >= MAX_LISTEN)
			return "at most 16 addresses";
		out[(*n)++] = l;
	}
	if (*n == 0)
		return "no address is given";
	return NULL;
}

const char *
fairshare_api_listen_addresses_problem(const char *value)
{
	Listener	tmp[MAX_LISTEN];
	int			n;

	return parse_addresses(value, tmp, &n);
}

int
fairshare_api_worker_count(void)
{
	long		cores;

	if (fairshare_api_workers > 0)
		return Min(fairshare_api_workers, FS_API_MAX_WORKERS);
	/*
	 * Two per core: a worker also waits (for its clients' next requests,
	 * for commits), and on a busy machine the kernel shares CPU per process.
	 * At most 4 by default: static background workers count against
	 * max_worker_processes (8 by default), which the dispatcher, pg_cron
	 * and parallel queries need too.
	 */
	cores = sysconf(_SC_NPROCESSORS_ONLN);
	return (int) Max(1, Min(cores * 2, 4));
}

void
fairshare_register_api_server(void)
{
	BackgroundWorker worker;
	int			n = fairshare_api_worker_count();

	fairshare_api_shared_init();
	for (int i = 0; i < n; i++)
	{
		memset(&worker, 0, sizeof(worker));
		worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
		/* On a hot standby too: it idles there until promoted. */
		worker.bgw_start_time = BgWorkerStart_ConsistentState;
		worker.bgw_restart_time = 1;
		worker.bgw_main_arg = Int32GetDatum(i);
		snprintf(worker.bgw_library_name, BGW_MAXLEN, "fairshare");
		snprintf(worker.bgw_function_name, BGW_MAXLEN, "fairshare_api_main");
		snprintf(worker.bgw_name, BGW_MAXLEN, "fairshare api %d", i + 1);
		snprintf(worker.bgw_type, BGW_MAXLEN, "fairshare api");
		RegisterBackgroundWorker(&worker);
	}
}

/* libmicrohttpd's own complaints (a TLS handshake gone wrong, ...). */
static void
mhd_logger(void *cls, const char *fm, va_list ap)
{
	char		buf[512];

	vsnprintf(buf, sizeof(buf), fm, ap);
	elog(DEBUG1, "fairshare api (libmicrohttpd): %s", buf);
}

static char *
read_pem(const char *path, const char *setting)
{
	FILE	   *f = AllocateFile(path, "r");
	StringInfoData buf;
	char		chunk[4096];
	size_t		n;
	char	   *out;

	if (f == NULL)
	{
		ereport(WARNING,
				(errcode_for_file_access(),
				 errmsg("fairshare api: could not read %s \"%s\": %m", setting, path),
				 errhint("The API is not served until the file is readable by the server's user; reload after fixing it.")));
		return NULL;
	}
	initStringInfo(&buf);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		appendBinaryStringInfo(&buf, chunk, n);
	FreeFile(f);
	out = strdup(buf.data);
	explicit_bzero(buf.data, buf.len);
	pfree(buf.data);
	return out;
}

static void
free_pem(char **p)
{
	if (*p != NULL)
	{
		explicit_bzero(*p, strlen(*p));
		free(*p);
		*p = NULL;
	}
}

static void
stop_listening(void)
{
	for (int i = 0; i < nlisteners; i++)
		if (listeners[i].daemon != NULL)
			MHD_stop_daemon(listeners[i].daemon);
	nlisteners = 0;
	free_pem(&tls_cert);
	free_pem(&tls_key);
	if (wait_set != NULL)
		FreeWaitEventSet(wait_set);
	wait_set = NULL;
}

static char *
current_signature(void)
{
	return psprintf("%d|%s|%s|%s|%d|%d|%d", fairshare_api_port, fairshare_api_listen_addresses,
					fairshare_api_tls_cert_file, fairshare_api_tls_key_file,
					fairshare_api_max_header_size, fairshare_api_max_connections,
					fairshare_api_idle_timeout_s);
}

/*
 * What every daemon is started with, plain or TLS, whatever its address
 * (each passes its own MHD_OPTION_SOCK_ADDR beside these).  libmicrohttpd
 * reads the array when a daemon starts; tls_key and tls_cert must live
 * until the daemons stop.  Integers go in value, pointers in ptr_value, a
 * callback in value with its cls in ptr_value (MHD_OPTION_ARRAY).
 */
static struct MHD_OptionItem daemon_options[8 + 2 + 1];	/* every daemon's, TLS's, the end */

static void
build_daemon_options(bool tls)
{
	int			n = 0;

#define OPTION(o, v, p) (daemon_options[n++] = (struct MHD_OptionItem) {(o), (intptr_t) (v), (p)})
	OPTION(MHD_OPTION_LISTENING_ADDRESS_REUSE, 1, NULL);
	OPTION(MHD_OPTION_CONNECTION_LIMIT, fairshare_api_max_connections + 16, NULL);
	OPTION(MHD_OPTION_CONNECTION_TIMEOUT, fairshare_api_idle_timeout_s, NULL);
	/*
	 * Room for headers four times fairshare.api_max_header_size, so that
	 * the access handler sees headers above the setting and answers them
	 * as AWS does; libmicrohttpd answers beyond that by itself.
	 */
	OPTION(MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t) fairshare_api_max_header_size * 4 + 8192, NULL);
	OPTION(MHD_OPTION_NOTIFY_COMPLETED, fairshare_api_request_completed, NULL);
	OPTION(MHD_OPTION_NOTIFY_CONNECTION, fairshare_api_connection_notify, NULL);
	OPTION(MHD_OPTION_UNESCAPE_CALLBACK, fairshare_api_unescape_nothing, NULL);
	OPTION(MHD_OPTION_EXTERNAL_LOGGER, mhd_logger, NULL);
	if (tls)
	{
		OPTION(MHD_OPTION_HTTPS_MEM_KEY, 0, tls_key);
		OPTION(MHD_OPTION_HTTPS_MEM_CERT, 0, tls_cert);
	}
	OPTION(MHD_OPTION_END, 0, NULL);
#undef OPTION
}

/*
 * Open every listening socket.  Returns false when the settings forbid it
 * (logged once per setting change) or a socket could not be opened (then
 * nothing listens and the caller tries again later).
 */
static bool
start_listening(bool *refused)
{
	const char *why;
	bool		tls = fairshare_api_tls_cert_file[0] != '\0' || fairshare_api_tls_key_file[0] != '\0';
	int			n;

	*refused = false;
	why = parse_addresses(fairshare_api_listen_addresses, listeners, &n);
	if (why != NULL)
	{
		*refused = true;
		ereport(WARNING, (errmsg("fairshare api: not serving: fairshare.api_listen_addresses: %s", why)));
		return false;
	}
	if (tls && (fairshare_api_tls_cert_file[0] == '\0' || fairshare_api_tls_key_file[0] == '\0'))
	{
		*refused = true;
		ereport(WARNING,
				(errmsg("fairshare api: not serving: HTTPS needs both fairshare.api_tls_cert_file and fairshare.api_tls_key_file"),
				 errhint("Set both, or neither to serve plain HTTP on loopback addresses only.")));
		return false;
	}
	for (int i = 0; i < n; i++)
	{
		if (!listeners[i].loopback && !tls)
		{
			*refused = true;
			ereport(WARNING,
					(errmsg("fairshare api: refusing to serve the AWS Batch API on %s without TLS: "
							"API keys and requests would cross the network in clear text",
							listeners[i].text),
					 errhint("Set fairshare.api_tls_cert_file and fairshare.api_tls_key_file for HTTPS, "
							 "or listen on loopback addresses only (127.0.0.1, ::1).")));
			return false;
		}
	}
	if (tls)
	{
		tls_cert = read_pem(fairshare_api_tls_cert_file, "fairshare.api_tls_cert_file");
		tls_key = read_pem(fairshare_api_tls_key_file, "fairshare.api_tls_key_file");
		if (tls_cert == NULL || tls_key == NULL)
		{
			free_pem(&tls_cert);
			free_pem(&tls_key);
			*refused = true;
			return false;
		}
	}
	build_daemon_options(tls);
	nlisteners = n;
	for (int i = 0; i < n; i++)
	{
		Listener   *l = &listeners[i];
		unsigned int flags = MHD_USE_EPOLL | MHD_USE_ERROR_LOG;

		if (l->ipv6)
		{
			flags |= MHD_USE_IPv6;
			((struct sockaddr_in6 *) &l->addr)->sin6_port = htons(fairshare_api_port);
		}
		else
			((struct sockaddr_in *) &l->addr)->sin_port = htons(fairshare_api_port);
		if (tls)
			flags |= MHD_USE_TLS;
		/* The access handler's cls tells it the daemon serves HTTPS. */
		l->daemon = MHD_start_daemon(flags, fairshare_api_port, NULL, NULL,
									 fairshare_api_access_handler, tls ? (void *) l : NULL,
									 MHD_OPTION_SOCK_ADDR, (struct sockaddr *) &l->addr,
									 MHD_OPTION_ARRAY, daemon_options,
									 MHD_OPTION_END);
		if (l->daemon == NULL)
		{
			ereport(WARNING,
					(errmsg("fairshare api: could not listen on %s port %d", l->text, fairshare_api_port),
					 errhint("Another process may hold the port, or the address is not this machine's; "
							 "retrying every %d seconds.", LISTEN_RETRY_MS / 1000)));
			stop_listening();
			return false;
		}
	}
	wait_set = CreateWaitEventSet(TopMemoryContext, nlisteners + 2);
	AddWaitEventToSet(wait_set, WL_LATCH_SET, PGINVALID_SOCKET, MyLatch, NULL);
	AddWaitEventToSet(wait_set, WL_EXIT_ON_PM_DEATH, PGINVALID_SOCKET, NULL, NULL);
	for (int i = 0; i < nlisteners; i++)
	{
		const union MHD_DaemonInfo *info = MHD_get_daemon_info(listeners[i].daemon, MHD_DAEMON_INFO_EPOLL_FD);

		if (info == NULL)
			elog(ERROR, "libmicrohttpd gave no epoll descriptor");
		AddWaitEventToSet(wait_set, WL_SOCKET_READABLE, info->epoll_fd, NULL, NULL);
	}
	ereport(LOG,
			(errmsg("fairshare api: serving the AWS Batch API over %s on %s port %d",
					tls ? "HTTPS" : "HTTP", fairshare_api_listen_addresses, fairshare_api_port)));
	return true;
}

/*
 * A query cancel (pg_cancel_backend) that comes between requests has
 * nothing to cancel: drop it, as a backend does while it reads its next
 * command.  Left pending, the next CHECK_FOR_INTERRUPTS here raised it
 * outside any request, and the worker ended with an error (the postmaster
 * restarted it, dropping its clients' connections).  A cancel during a
 * request is taken there: the request fails, or (during its commit's wait
 * for the synchronous standby) is answered 500 (api_call.c).
 */
static void
check_for_interrupts_between_requests(void)
{
	QueryCancelPending = false;
	CHECK_FOR_INTERRUPTS();
}

/* Wait for the latch or a socket, then let libmicrohttpd do its work. */
static void
serve_once(long max_wait_ms)
{
	WaitEvent	events[MAX_LISTEN + 2];
	long		timeout = max_wait_ms;

	for (int i = 0; i < nlisteners; i++)
	{
		MHD_UNSIGNED_LONG_LONG t;

		if (MHD_get_timeout(listeners[i].daemon, &t) == MHD_YES && (long) t < timeout)
			timeout = (long) t;
	}
	(void) WaitEventSetWait(wait_set, timeout, events, lengthof(events), PG_WAIT_EXTENSION);
	ResetLatch(MyLatch);
	check_for_interrupts_between_requests();
	for (int i = 0; i < nlisteners; i++)
		MHD_run(listeners[i].daemon);
}

static void
wait_latch(long ms)
{
	int			rc = WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, ms, PG_WAIT_EXTENSION);

	if (rc & WL_LATCH_SET)
		ResetLatch(MyLatch);
	check_for_interrupts_between_requests();
}

/* Whether this worker (0-based) has nothing to serve under the settings. */
static bool
worker_off(int me)
{
	return fairshare_api_port == 0 || me >= fairshare_api_worker_count();
}

void
fairshare_api_main(Datum main_arg)
{
	char	   *database;
	bool		refused = false;
	TimestampTz retry_at = 0;
	int			me = DatumGetInt32(main_arg);

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	pqsignal(SIGINT, fairshare_api_cancel_handler);
	pqsignal(SIGPIPE, SIG_IGN);
	BackgroundWorkerUnblockSignals();

	/*
	 * Take this worker's slot of the shared connection count first: a
	 * worker retired by a lower fairshare.api_workers exits with its
	 * connections counted, and its restarted successor waits below, off;
	 * left as it was, that count would hold every client at 429.
	 */
	fairshare_api_shared_attach(me);

	/*
	 * Off (no port, or fairshare.api_workers lowered below this worker):
	 * wait for a reload, without holding a database connection.
	 */
	while (worker_off(me))
	{
		wait_latch(60 * 1000);
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
	}

	database = pstrdup(fairshare_database);
	/*
	 * This session is the superuser's: resolve names to ours and
	 * PostgreSQL's only, and keep the server's synchronous_commit and
	 * timeouts whatever the database's owner set.
	 */
	fairshare_worker_connect(database, FAIRSHARE_SAFE_SEARCH_PATH, "fairshare api worker");
	/* A request never waits long for a lock: it fails and the client retries. */
	SetConfigOption("lock_timeout", "2000", PGC_SUSET, PGC_S_OVERRIDE);
	fairshare_api_request_context = AllocSetContextCreate(TopMemoryContext, "fairshare api request",
														  ALLOCSET_DEFAULT_SIZES);
	pgstat_report_activity(STATE_IDLE, NULL);

	for (;;)
	{
		check_for_interrupts_between_requests();
		if (ConfigReloadPending)
		{
			char	   *sig;

			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
			if (strcmp(database, fairshare_database) != 0 || worker_off(me))
			{
				ereport(LOG, (errmsg("fairshare api: restarting for new settings (fairshare.database, fairshare.api_port or fairshare.api_workers)")));
				proc_exit(1);
			}
			sig = current_signature();
			if (listening_signature == NULL || strcmp(sig, listening_signature) != 0)
			{
				stop_listening();
				refused = false;
				retry_at = 0;
			}
			pfree(sig);
		}

		/* A standby serves nothing; it waits to be promoted. */
		if (RecoveryInProgress())
		{
			if (nlisteners > 0)
				stop_listening();
			pgstat_report_activity(STATE_IDLE, "waiting for promotion");
			wait_latch(1000);
			continue;
		}

		if (nlisteners == 0)
		{
			if (refused || GetCurrentTimestamp() < retry_at)
			{
				wait_latch(1000);
				continue;
			}
			if (listening_signature != NULL)
				pfree(listening_signature);
			listening_signature = MemoryContextStrdup(TopMemoryContext, current_signature());
			if (!start_listening(&refused))
			{
				retry_at = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), LISTEN_RETRY_MS);
				continue;
			}
			pgstat_report_activity(STATE_IDLE, NULL);
		}
		serve_once(1000);
	}
}
