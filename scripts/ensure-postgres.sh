#!/usr/bin/env bash
# ensure-postgres.sh: make sure the PostgreSQL server binaries (initdb, pg_ctl,
# postgres) that testkit/pgtmp needs are installed. Looks where pgtmp looks:
# /usr/lib/postgresql/*/bin (highest version), then PATH. If they are missing
# and we are root on Debian/Ubuntu, installs the distribution's postgresql
# package without creating or starting its default cluster. Idempotent; quiet
# on success.
set -euo pipefail
NAME=ensure-postgres
source "$(dirname "$0")/ensure-lib.sh"

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

apt_ready "PostgreSQL server binaries (initdb, pg_ctl, postgres) not found under /usr/lib/postgresql/*/bin or in PATH" \
	"install them (Debian/Ubuntu: sudo apt-get install postgresql), set DATABASE_URL for tests that only need a database,"
# Tests start their own clusters: keep the package from creating and starting
# a default one on port 5432 (as the official Docker image does).
apt_install postgresql-common
if [[ -f /etc/postgresql-common/createcluster.conf ]]; then
	sed -ri 's/^#?\s*create_main_cluster\s*=.*/create_main_cluster = false/' /etc/postgresql-common/createcluster.conf
fi
apt_install postgresql

have_binaries || fail "postgresql installed but initdb/pg_ctl/postgres still not found"
say "installed $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -rV | head -n1)"
