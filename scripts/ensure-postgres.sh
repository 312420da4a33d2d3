#!/usr/bin/env bash
# ensure-postgres.sh: make sure the PostgreSQL server binaries (initdb, pg_ctl,
# postgres) that testkit/pgtmp needs are installed. Looks where pgtmp looks:
# /usr/lib/postgresql/*/bin (highest version), then PATH. If they are missing
# and we are root on Debian/Ubuntu, installs the distribution's postgresql
# package without creating or starting its default cluster. Idempotent; quiet
# on success.
set -euo pipefail

have_binaries() {
	local dir
	for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -rV); do
		if [[ -x $dir/initdb && -x $dir/pg_ctl && -x $dir/postgres ]]; then
			return 0
		fi
	done
	command -v initdb >/dev/null && command -v pg_ctl >/dev/null && command -v postgres >/dev/null
}

have_binaries && exit 0

if [[ $(id -u) -ne 0 ]]; then
	echo "ensure-postgres: PostgreSQL server binaries (initdb, pg_ctl, postgres) not found" \
		"under /usr/lib/postgresql/*/bin or in PATH." >&2
	echo "ensure-postgres: install them (Debian/Ubuntu: sudo apt-get install postgresql)," \
		"rerun this script as root, or set DATABASE_URL for tests that only need a database." >&2
	exit 1
fi
if ! command -v apt-get >/dev/null; then
	echo "ensure-postgres: PostgreSQL binaries not found and apt-get is not available;" \
		"install the PostgreSQL server with this system's package manager." >&2
	exit 1
fi

echo "ensure-postgres: installing PostgreSQL with apt-get..." >&2
export DEBIAN_FRONTEND=noninteractive
apt_install() {
	apt-get install -y -q --no-install-recommends \
		-o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "$@" >/dev/null
}
apt-get update -q >/dev/null
# Tests start their own clusters: keep the package from creating and starting
# a default one on port 5432 (as the official Docker image does).
apt_install postgresql-common
if [[ -f /etc/postgresql-common/createcluster.conf ]]; then
	sed -ri 's/^#?\s*create_main_cluster\s*=.*/create_main_cluster = false/' /etc/postgresql-common/createcluster.conf
fi
apt_install postgresql

if ! have_binaries; then
	echo "ensure-postgres: postgresql installed but initdb/pg_ctl/postgres still not found" >&2
	exit 1
fi
echo "ensure-postgres: installed $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -rV | head -n1)" >&2
