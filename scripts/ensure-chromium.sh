#!/usr/bin/env bash
# ensure-chromium.sh: make sure a headless-capable Chromium is installed for
# the run report's browser test (cmd/crawler TestReportInBrowser). Looks for
# chromium, then chromium-browser, in PATH (or $CHROMIUM). If none is found
# and we are root on Debian/Ubuntu, installs Debian's chromium package.
# Idempotent; quiet on success. Outside CI a failure here only warns: the
# browser test skips without a browser there, and fails in CI (CI=true).
set -euo pipefail
. "$(dirname "$0")/optional-apt.sh"

have_chromium() {
	[[ -n ${CHROMIUM:-} && -x ${CHROMIUM} ]] && return 0
	command -v chromium >/dev/null || command -v chromium-browser >/dev/null
}

optional_apt ensure-chromium have_chromium "the browser test will skip" chromium fonts-dejavu-core
