# Helpers for the repository tests (10-19), sourced after lib.sh: the fault-injecting server and
# small fixtures. See faultserver.py for the rule syntax.

# fault_serve DIR: serve DIR with faultserver.py; sets SERVER_URL, RULES (rules file, initially
# empty) and SRVLOG (one line per request).
fault_serve() {
	local dir=$1 i
	RULES=$T/rules SRVLOG=$T/server.log
	: >"$RULES"
	: >"$SRVLOG"
	rm -f "$T/port"
	python3 "$TOP/tests/integration/faultserver.py" "$dir" "$T/port" "$RULES" "$SRVLOG" \
		2>"$T/faultserver.err" &
	_PIDS="$_PIDS $!"
	for i in $(seq 1 100); do
		[ -s "$T/port" ] && break
		sleep 0.1
	done
	[ -s "$T/port" ] || fail "fault server did not start: $(cat "$T/faultserver.err")"
	SERVER_URL=http://127.0.0.1:$(cat "$T/port")
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
