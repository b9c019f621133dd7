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

# The tests of the AWS Batch API use boto3 as the real client, and need one
# whose model has AWS Batch's service-job operations (SubmitServiceJob:
# botocore 1.39 and later).  Debian 12's python3-boto3 is older.  So the
# first Python of FS_BOTO_PYTHON, python3 on PATH and Debian's that has
# such a boto3 is used; failing that, as root, a virtual environment in
# FS_BOTO_VENV gets a current boto3 from PyPI (when PyPI can be reached).
FS_BOTO_VENV=/var/cache/fairshare-test/boto3
fs_has_service_jobs() {	# fs_has_service_jobs PYTHON
	command -v "$1" > /dev/null 2>&1 &&
		"$1" -c 'import boto3; c = boto3.client("batch", region_name="us-east-1"); c.submit_service_job' \
			> /dev/null 2>&1
}
fs_find_boto_python() {	# exports FS_BOTO_PYTHON, or fails saying why
	local py
	for py in ${FS_BOTO_PYTHON:-} python3 /usr/bin/python3 "$FS_BOTO_VENV/bin/python3"; do
		if fs_has_service_jobs "$py"; then
			export FS_BOTO_PYTHON=$py
			return 0
		fi
	done
	if [ "$(id -u)" = 0 ]; then
		echo "no boto3 with AWS Batch service jobs; installing one from PyPI into $FS_BOTO_VENV"
		fs_ensure_packages python3-venv &&
			/usr/bin/python3 -m venv "$FS_BOTO_VENV" &&
			timeout 600 "$FS_BOTO_VENV/bin/pip" install -q 'boto3>=1.39' > /dev/null 2>&1
		if fs_has_service_jobs "$FS_BOTO_VENV/bin/python3"; then
			export FS_BOTO_PYTHON=$FS_BOTO_VENV/bin/python3
			return 0
		fi
	fi
	echo "no Python has a boto3 with AWS Batch service jobs (boto3 1.39 or later; Debian 12's" \
		"python3-boto3 is older, and none could be installed from PyPI): the API tests cannot run." \
		"Set FS_BOTO_PYTHON to a Python that has one." >&2
	return 1
}

fs_setup() {	# fs_setup TOP [extra packages...]
	local top=$1; shift
	fs_ensure_packages "$@" || return 1
	export PATH="$(pg_config --bindir):$PATH"
	fs_build_install "$top"
}
