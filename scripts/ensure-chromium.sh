#!/usr/bin/env bash
# ensure-chromium.sh: make sure a headless-capable Chromium is installed for
# the run report's browser test (cmd/crawler TestReportInBrowser). Looks for
# chromium, then chromium-browser, in PATH (or $CHROMIUM). If none is found
# and we are root on Debian/Ubuntu, installs Debian's chromium package.
# Idempotent; quiet on success. Outside CI a failure here only warns: the
# browser test skips without a browser there, and fails in CI (CI=true).
set -euo pipefail
NAME=ensure-chromium

fail() {
	say "$*"
	if [[ ${CI:-} == true ]]; then
		exit 1
	fi
	say "the browser test will skip (it fails in CI)"
	exit 0
}
source "$(dirname "$0")/ensure-lib.sh"

have_chromium() {
	[[ -n ${CHROMIUM:-} && -x ${CHROMIUM} ]] && return 0
	command -v chromium >/dev/null || command -v chromium-browser >/dev/null
}

have_chromium && exit 0

apt_ready "chromium not found in PATH" "install it (Debian: sudo apt-get install chromium)"
apt_install chromium fonts-dejavu-core

have_chromium || fail "chromium installed but not found in PATH"
say "installed $(command -v chromium || command -v chromium-browser)"
