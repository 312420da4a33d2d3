# ensure-lib.sh: what the ensure-*.sh scripts share, sourced by each after
# it sets NAME (its name, which starts its messages). A script may define
# fail (how it gives up) before sourcing this file; the default exits 1.

# say prints its arguments as one message of the script, on stderr.
say() { echo "$NAME: $*" >&2; }

if ! declare -F fail >/dev/null; then
	fail() {
		say "$@"
		exit 1
	}
fi

# apt_ready MISSING HINT returns when this script may install packages with
# apt-get (as root, on a system that has it) and has refreshed the package
# lists; otherwise it gives up saying what is MISSING and, to a user who is
# not root, HINT: how to install it by hand.
apt_ready() {
	if [[ $(id -u) -ne 0 ]]; then
		fail "$1; $2 or rerun this script as root"
	fi
	if ! command -v apt-get >/dev/null; then
		fail "$1 and apt-get is not available; install it with this system's package manager"
	fi
	say "installing with apt-get..."
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q >/dev/null
}

# apt_install PACKAGE... installs quietly, without recommends, keeping the
# configuration files already there.
apt_install() {
	apt-get install -y -q --no-install-recommends \
		-o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "$@" >/dev/null
}
