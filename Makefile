# fairshare — PGXS build.
#
# Sources are picked up by directory so that each part of the extension
# (src/scheduler, src/aws, src/worker, ...) lives in its own folder without
# editing this file.  The install script of the current version is assembled
# from sql/parts/ in name order, so each part owns its own SQL file.  Released
# versions keep their install script as a static file (sql/fairshare--0.1.0.sql)
# and every later catalog change ships as an upgrade script
# sql/fairshare--FROM--TO.sql; docs/upgrading.md says how.

EXTENSION   = fairshare
EXTVERSION  = 0.2.0
MODULE_big  = fairshare

SRCS        = $(sort $(wildcard src/*.c src/*/*.c))
OBJS        = $(SRCS:.c=.o)

DATA_built  = sql/$(EXTENSION)--$(EXTVERSION).sql
DATA        = sql/$(EXTENSION)--0.1.0.sql $(wildcard sql/$(EXTENSION)--*--*.sql)
SQL_PARTS   = $(sort $(wildcard sql/parts/*.sql))

REGRESS      = $(sort $(notdir $(basename $(wildcard test/regress/sql/*.sql))))
REGRESS_OPTS = --inputdir=test/regress --load-extension=plpgsql

ISOLATION      = $(sort $(notdir $(basename $(wildcard test/isolation/specs/*.spec))))
ISOLATION_OPTS = --inputdir=test/isolation

PG_CONFIG  ?= pg_config
# The library knows which catalog version it works with (src/tables/catalog_version.h).
PG_CPPFLAGS = -I$(srcdir)/src -DFAIRSHARE_VERSION='"$(EXTVERSION)"'
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

# ---------------------------------------------------------------------------
# Releases (docs/installing.md).  Both take the tracked files of this tree
# (git ls-files, as they are now), never build products or local files.

DIST_NAME = $(EXTENSION)-$(EXTVERSION)
DEB_NAME  = postgresql-15-$(EXTENSION)_$(EXTVERSION)-1_$(shell dpkg --print-architecture 2>/dev/null || echo amd64).deb

.PHONY: dist deb

# The PGXN distribution: $(DIST_NAME).tar.gz, which builds with
# `make && make install` wherever it is unpacked; it lands in DIST_OUT.
DIST_OUT ?= .
dist:
	@test "$$(sed -n 's/^\t"version": "\(.*\)",$$/\1/p' META.json | head -1)" = "$(EXTVERSION)" || \
		{ echo "META.json's version is not $(EXTVERSION)" >&2; exit 1; }
	@rm -f $(DIST_OUT)/$(DIST_NAME).tar.gz
	@git ls-files -z | tar --null -T - --transform 's,^,$(DIST_NAME)/,' -czf $(DIST_OUT)/$(DIST_NAME).tar.gz
	@echo "made $(DIST_OUT)/$(DIST_NAME).tar.gz"

# The Debian package, built from a clean copy of the tracked files with
# dpkg-buildpackage and pg_buildext (debian/); the .deb lands in DEB_OUT.
DEB_OUT ?= .
deb:
	@test "$$(dpkg-parsechangelog -l debian/changelog -S Version)" = "$(EXTVERSION)-1" || \
		{ echo "debian/changelog's version is not $(EXTVERSION)-1" >&2; exit 1; }
	@set -e; tmp=$$(mktemp -d /tmp/fairshare-deb.XXXXXX); \
	mkdir "$$tmp/$(DIST_NAME)"; \
	git ls-files -z | tar --null -T - -cf - | tar -xf - -C "$$tmp/$(DIST_NAME)"; \
	if (cd "$$tmp/$(DIST_NAME)" && dpkg-buildpackage -us -uc -b) > "$$tmp/build.log" 2>&1; then \
		cp "$$tmp/$(DEB_NAME)" "$(DEB_OUT)/"; rm -rf "$$tmp"; echo "made $(DEB_OUT)/$(DEB_NAME)"; \
	else \
		tail -n 40 "$$tmp/build.log" >&2; rm -rf "$$tmp"; exit 1; \
	fi
