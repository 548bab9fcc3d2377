# Helpers for the repository tests (10-19), sourced after lib.sh: the fault-injecting server and
# small fixtures. See faultserver.py for the rule syntax.

# fault_serve DIR [NAME]: serve DIR with faultserver.py; sets SERVER_URL, RULES (rules file,
# initially empty) and SRVLOG (one line per request). NAME tells several servers apart. The port
# is a free one, or $FAULT_PORT when set.
fault_serve() {
	local dir=$1 name=${2:-server} i
	RULES=$T/$name.rules SRVLOG=$T/$name.log
	: >"$RULES"
	: >"$SRVLOG"
	rm -f "$T/$name.port"
	python3 "$TOP/tests/integration/faultserver.py" "$dir" "$T/$name.port" "$RULES" "$SRVLOG" \
		${FAULT_PORT:-0} 2>"$T/$name.err" &
	_PIDS="$_PIDS $!"
	for i in $(seq 1 100); do
		[ -s "$T/$name.port" ] && break
		sleep 0.1
	done
	[ -s "$T/$name.port" ] || fail "fault server did not start: $(cat "$T/$name.err")"
	SERVER_URL=http://127.0.0.1:$(cat "$T/$name.port")
}

# debs_list DIR URL: "URL SIZE SHA256" for every .deb under DIR (sorted), for fetchdebs.
debs_list() {
	local dir=$1 url=$2 f
	(cd "$dir" && find . -name '*.deb' | sort) | while read -r f; do
		f=${f#./}
		echo "$url/$f $(stat -c %s "$dir/$f") $(sha256sum "$dir/$f" | cut -d' ' -f1)"
	done
}

# no_temp_files DIR: fail if DIR holds a temp file (a dot-file left by an unfinished write).
no_temp_files() {
	local left
	left=$(find "$1" -name '.*' -type f 2>/dev/null | head -n 5)
	[ -z "$left" ] || fail "temp files left behind in $1: $left"
}

FETCHDEBS=${FETCHDEBS:-$TOP/build/tools/fetchdebs}

# make_repo [ARCH...]: a signed repository in $T/repo (suite bookworm, component main; default
# arches armhf armel) with a few real packages, served by fault_serve. Sets KEYRING, SERVER_URL.
make_repo() {
	local archs=${*:-armhf armel} a d
	for a in $archs; do
		d=$(deb_new hello-test 1.0-1 "$a" "Multi-Arch: same")
		deb_file "$d" usr/share/doc/hello-test/README "hello $a"
		deb_build "$d" "$T/repo/pool/main" >/dev/null
	done
	d=$(deb_new data-test 1.0-1 all)
	deb_file "$d" usr/share/data-test/data "data"
	deb_build "$d" "$T/repo/pool/main" >/dev/null
	gpg_key repo
	# shellcheck disable=SC2086
	repo_index "$T/repo" bookworm main $archs
	repo_sign "$T/repo" bookworm
	fault_serve "$T/repo"
}

# write_recipe URI KEYRING [EXTRA-SOURCE-FIELDS]: $T/r.cfg, armhf + armel, one source.
write_recipe() {
	cat >"$T/r.cfg" <<R
name = "t";
architecture = "armhf";
auxiliary_architectures = [ "armel" ];
sources = ( { uri = "$1"; keyring = "$2"; ${3:-} } );
packages = { install = [ "hello-test" ]; };
R
}

# until_indexes ARGS...: mkimage --until indexes with a private cache.
until_indexes() {
	"$MKIMAGE" --until indexes --cache-dir "$T/cache" "$@" "$T/r.cfg"
}

# requests PATTERN: how many requests the server logged whose line matches PATTERN (grep -E).
requests() {
	grep -Ec -- "$1" "$SRVLOG" || true
}

# resign REPO SUITE: repo_sign, at least one second after the previous signing. mkimage asks for
# InRelease with If-Modified-Since, whose resolution is one second: a file re-signed within the
# same second as the cached copy would be (correctly, per HTTP) reported unchanged.
resign() {
	sleep 1
	repo_sign "$1" "$2"
}
