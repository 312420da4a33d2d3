#!/usr/bin/env bash
# ensure-pgbouncer.sh: make sure the pgbouncer binary that testkit/pgbouncer
# starts (the crawl through PgBouncer in transaction pooling mode) is
# installed: /usr/sbin/pgbouncer or in PATH. If it is missing and we are
# root on Debian/Ubuntu, installs the distribution's pgbouncer package and
# keeps its own service stopped (tests start their own). Idempotent; quiet
# on success.
set -euo pipefail

have_binary() {
	[[ -x /usr/sbin/pgbouncer ]] || command -v pgbouncer >/dev/null
}

have_binary && exit 0

if [[ $(id -u) -ne 0 ]]; then
	echo "ensure-pgbouncer: pgbouncer not found in /usr/sbin or PATH." >&2
	echo "ensure-pgbouncer: install it (Debian/Ubuntu: sudo apt-get install pgbouncer) or rerun this script as root." >&2
	exit 1
fi
if ! command -v apt-get >/dev/null; then
	echo "ensure-pgbouncer: pgbouncer not found and apt-get is not available;" \
		"install PgBouncer with this system's package manager." >&2
	exit 1
fi

echo "ensure-pgbouncer: installing pgbouncer with apt-get..." >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
# The package's own service is not wanted: keep invoke-rc.d from starting it.
policy=/usr/sbin/policy-rc.d
created_policy=
if [[ ! -e $policy ]]; then
	printf '#!/bin/sh\nexit 101\n' >"$policy"
	chmod +x "$policy"
	created_policy=1
fi
apt-get install -y -q --no-install-recommends \
	-o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold pgbouncer >/dev/null
if [[ -n $created_policy ]]; then
	rm -f "$policy"
fi

if ! have_binary; then
	echo "ensure-pgbouncer: pgbouncer installed but still not found" >&2
	exit 1
fi
echo "ensure-pgbouncer: installed $(/usr/sbin/pgbouncer --version 2>/dev/null | head -n1)" >&2
