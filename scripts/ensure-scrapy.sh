#!/usr/bin/env bash
# ensure-scrapy.sh: make sure Debian's python3-scrapy is installed for the
# benchmark workload that compares the crawler with Scrapy (testkit/bench
# scrapy.go, run by /usr/bin/python3; PyPI is not needed). If it is missing
# and we are root on Debian/Ubuntu, installs it with apt-get. Idempotent;
# quiet on success. Outside CI a failure here only warns: the workload
# reports Scrapy missing and the smoke test lets it be; in CI (CI=true) it
# fails.
set -euo pipefail

have_scrapy() { /usr/bin/python3 -c 'import scrapy' >/dev/null 2>&1; }

have_scrapy && exit 0

fail() {
	echo "ensure-scrapy: $*" >&2
	if [[ ${CI:-} == true ]]; then
		exit 1
	fi
	echo "ensure-scrapy: the Scrapy workload will report it missing (it fails in CI)" >&2
	exit 0
}

if [[ $(id -u) -ne 0 ]]; then
	fail "python3-scrapy not installed; install it (Debian: sudo apt-get install python3-scrapy) or rerun as root"
fi
if ! command -v apt-get >/dev/null; then
	fail "python3-scrapy not installed and apt-get is not available"
fi

echo "ensure-scrapy: installing python3-scrapy with apt-get..." >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
apt-get install -y -q --no-install-recommends \
	-o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
	python3-scrapy >/dev/null

have_scrapy || fail "python3-scrapy installed but /usr/bin/python3 cannot import scrapy"
echo "ensure-scrapy: installed" >&2
