# optional-apt.sh: sourced by the ensure-*.sh scripts of optional test and
# benchmark tools (Chromium, Scrapy). optional_apt NAME HAVE LATER PKG...
# returns when HAVE (a command) succeeds; else, as root on Debian/Ubuntu, it
# installs PKG... with apt-get and checks HAVE again. Outside CI a failure
# only warns, saying LATER (what happens without the tool); in CI
# (CI=true) it exits 1.
optional_apt() {
	local name=$1 have=$2 later=$3
	shift 3
	"$have" && return 0
	if [[ $(id -u) -ne 0 ]]; then
		optional_apt_fail "$name" "$later" "$* not installed; install it (Debian: sudo apt-get install $*) or rerun as root"
	fi
	if ! command -v apt-get >/dev/null; then
		optional_apt_fail "$name" "$later" "$* not installed and apt-get is not available; install it with this system's package manager"
	fi
	echo "$name: installing $* with apt-get..." >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q >/dev/null
	apt-get install -y -q --no-install-recommends \
		-o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
		"$@" >/dev/null
	"$have" || optional_apt_fail "$name" "$later" "$* installed but not usable"
	echo "$name: installed" >&2
}

optional_apt_fail() {
	echo "$1: $3" >&2
	if [[ ${CI:-} == true ]]; then
		exit 1
	fi
	echo "$1: $2 (it fails in CI)" >&2
	exit 0
}
