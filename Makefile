# fairshare — PGXS build.
#
# Sources are picked up by directory so that each part of the extension
# (src/scheduler, src/aws, src/worker, ...) lives in its own folder without
# editing this file.  The install script is assembled from sql/parts/ in
# name order, so each part owns its own SQL file.

EXTENSION   = fairshare
EXTVERSION  = 0.1.0
MODULE_big  = fairshare

SRCS        = $(sort $(wildcard src/*.c src/*/*.c))
OBJS        = $(SRCS:.c=.o)

DATA_built  = sql/$(EXTENSION)--$(EXTVERSION).sql
SQL_PARTS   = $(sort $(wildcard sql/parts/*.sql))

REGRESS      = $(sort $(notdir $(basename $(wildcard test/regress/sql/*.sql))))
REGRESS_OPTS = --inputdir=test/regress --load-extension=plpgsql

ISOLATION      = $(sort $(notdir $(basename $(wildcard test/isolation/specs/*.spec))))
ISOLATION_OPTS = --inputdir=test/isolation

PG_CONFIG  ?= pg_config
PG_CPPFLAGS = -I$(srcdir)/src
PG_CFLAGS   = -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers \
              -Wno-sign-compare -Werror=implicit-function-declaration
SHLIB_LINK  = -lcurl -lcrypto -lmicrohttpd

EXTRA_CLEAN = $(DATA_built)

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# PGXS does not track header dependencies; rebuild everything when any
# header changes rather than risk objects built against an old struct.
$(OBJS): $(wildcard src/*.h src/*/*.h)

$(DATA_built): $(SQL_PARTS) Makefile
	@{ printf '%s\n' '-- Generated from sql/parts/*.sql by make; edit the parts.' \
	     '\echo Use "CREATE EXTENSION $(EXTENSION)" to load this file. \quit'; \
	   for f in $(SQL_PARTS); do printf '\n-- ==== %s\n' "$$f"; cat "$$f"; done; } > $@
