#!/usr/bin/env bash
# ensure-scrapy.sh: make sure Debian's python3-scrapy is installed for the
# benchmark workload that compares the crawler with Scrapy (testkit/bench
# scrapy.go, run by /usr/bin/python3; PyPI is not needed). If it is missing
# and we are root on Debian/Ubuntu, installs it with apt-get. Idempotent;
# quiet on success. Outside CI a failure here only warns: the workload
# reports Scrapy missing and the smoke test lets it be; in CI (CI=true) it
# fails.
set -euo pipefail
. "$(dirname "$0")/optional-apt.sh"

have_scrapy() { /usr/bin/python3 -c 'import scrapy' >/dev/null 2>&1; }

optional_apt ensure-scrapy have_scrapy "the Scrapy workload will report it missing" python3-scrapy
