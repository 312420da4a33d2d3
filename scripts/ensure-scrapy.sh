#!/usr/bin/env bash
# ensure-scrapy.sh: make sure Debian's python3-scrapy is installed for the
# benchmark workload that compares the crawler with Scrapy (testkit/bench
# scrapy.go, run by /usr/bin/python3; PyPI is not needed). If it is missing
# and we are root on Debian/Ubuntu, installs it with apt-get (make bench
# runs it; make test does not need Scrapy: the smoke test lets it be).
# Idempotent; quiet on success. Outside CI a failure here only warns: the
# workload reports Scrapy missing; in CI (CI=true) it fails.
set -euo pipefail
NAME=ensure-scrapy

fail() {
	say "$*"
	if [[ ${CI:-} == true ]]; then
		exit 1
	fi
	say "the Scrapy workload will report it missing (it fails in CI)"
	exit 0
}
source "$(dirname "$0")/ensure-lib.sh"

have_scrapy() { /usr/bin/python3 -c 'import scrapy' >/dev/null 2>&1; }

have_scrapy && exit 0

apt_ready "python3-scrapy not installed" "install it (Debian: sudo apt-get install python3-scrapy)"
apt_install python3-scrapy

have_scrapy || fail "python3-scrapy installed but /usr/bin/python3 cannot import scrapy"
say "installed"
