#!/usr/bin/env bash
# ensure-chromium.sh: make sure a headless-capable Chromium is installed for
# the run report's browser test (cmd/crawler TestReportInBrowser). Looks for
# chromium, then chromium-browser, in PATH (or $CHROMIUM). If none is found
# and we are root on Debian/Ubuntu, installs Debian's chromium package.
# Idempotent; quiet on success. Outside CI a failure here only warns: the
# browser test skips without a browser there, and fails in CI (CI=true).
set -euo pipefail

have_chromium() {
	[[ -n ${CHROMIUM:-} && -x ${CHROMIUM} ]] && return 0
	command -v chromium >/dev/null || command -v chromium-browser >/dev/null
}

have_chromium && exit 0

fail() {
	echo "ensure-chromium: $*" >&2
	if [[ ${CI:-} == true ]]; then
		exit 1
	fi
	echo "ensure-chromium: the browser test will skip (it fails in CI)" >&2
	exit 0
}

if [[ $(id -u) -ne 0 ]]; then
	fail "chromium not found in PATH; install it (Debian: sudo apt-get install chromium) or rerun as root"
fi
if ! command -v apt-get >/dev/null; then
	fail "chromium not found and apt-get is not available; install Chromium with this system's package manager"
fi

echo "ensure-chromium: installing chromium with apt-get..." >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
apt-get install -y -q --no-install-recommends \
	-o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
	chromium fonts-dejavu-core >/dev/null

have_chromium || fail "chromium installed but not found in PATH"
echo "ensure-chromium: installed $(command -v chromium || command -v chromium-browser)" >&2
