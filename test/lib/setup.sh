# test/lib/setup.sh — make a fresh Debian 12 machine able to build and test
# fairshare: install the apt packages that are missing, then build and
# install the extension.  Source it; call fs_setup.

FS_APT_PACKAGES="postgresql-15 postgresql-server-dev-15 postgresql-15-cron \
libcurl4-openssl-dev libssl-dev libmicrohttpd-dev libipc-run-perl python3-botocore make gcc"
# Only the tests need these: the HA tests' Patroni and etcd (test/ha/),
# what test/package/deb.test needs to build the Debian package, and git
# (the upgrade test builds 0.1.0 from its commit; make dist and make deb
# take the files git tracks).
FS_APT_TEST_PACKAGES="patroni etcd-server debhelper postgresql-server-dev-all git"

fs_ensure_packages() {	# fs_ensure_packages [extra packages...]
	local missing=""
	for p in $FS_APT_PACKAGES "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	if [ "$(id -u)" != 0 ]; then
		echo "missing packages:$missing (run as root to install them)" >&2
		return 1
	fi
	echo "installing:$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq > /dev/null && apt-get install -y -qq $missing > /dev/null || {
		echo "apt-get install failed" >&2; return 1; }
}

fs_build_install() {
	local top=$1
	make -C "$top" -s -j2 > "$top/build.log" 2>&1 || { cat "$top/build.log" >&2; return 1; }
	if grep -E 'warning:' "$top/build.log" >&2; then
		echo "the build printed warnings (see above)" >&2
		return 1
	fi
	make -C "$top" -s install > /dev/null || return 1
}

fs_setup() {	# fs_setup TOP [extra packages...]
	local top=$1; shift
	fs_ensure_packages "$@" || return 1
	export PATH="$(pg_config --bindir):$PATH"
	fs_build_install "$top"
}
