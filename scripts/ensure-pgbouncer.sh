#!/usr/bin/env bash
# ensure-pgbouncer.sh: make sure the pgbouncer binary that testkit/pgbouncer
# starts (the crawl through PgBouncer in transaction pooling mode) is
# installed: /usr/sbin/pgbouncer or in PATH. If it is missing and we are
# root on Debian/Ubuntu, installs the distribution's pgbouncer package and
# keeps its own service stopped (tests start their own). Idempotent; quiet
# on success.
set -euo pipefail
NAME=ensure-pgbouncer
source "$(dirname "$0")/ensure-lib.sh"

have_binary() {
	[[ -x /usr/sbin/pgbouncer ]] || command -v pgbouncer >/dev/null
}

have_binary && exit 0

apt_ready "pgbouncer not found in /usr/sbin or PATH" "install it (Debian/Ubuntu: sudo apt-get install pgbouncer)"
# The package's own service is not wanted: keep invoke-rc.d from starting it.
policy=/usr/sbin/policy-rc.d
created_policy=
if [[ ! -e $policy ]]; then
	printf '#!/bin/sh\nexit 101\n' >"$policy"
	chmod +x "$policy"
	created_policy=1
fi
apt_install pgbouncer
if [[ -n $created_policy ]]; then
	rm -f "$policy"
fi

have_binary || fail "pgbouncer installed but still not found"
say "installed $(/usr/sbin/pgbouncer --version 2>/dev/null | head -n1)"
