# A real caching proxy between the builders and the archive, as a build farm has: apt-cacher-ng
# (its own configuration, cache and log directories, on 127.0.0.1 only, started and stopped by
# this test) in front of the local signed mirror. Two builds with empty, separate mkimage caches
# go through it (http_proxy): the first fills the proxy, the second is served from it (the
# proxy's log shows the hits, the mirror's log each .deb fetched once), and the images are
# identical.
. "$(dirname "$0")/lib.sh"
ACNG=$(command -v apt-cacher-ng || echo /usr/sbin/apt-cacher-ng)
[ -x "$ACNG" ] || skip "apt-cacher-ng not installed"
. "$(dirname "$0")/lib-native.sh"

# apt-cacher-ng 3.7 can neither listen on nor connect to a port above 32767 (it mangles the
# number), so the proxy and the mirror get free ports below the kernel's ephemeral range.
low_port() {
	python3 - <<'PY'
import random, socket
for port in random.sample(range(20000, 32768), 500):
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            continue
    print(port)
    break
PY
}

FAULT_PORT=$(low_port)
native_repo
native_recipe "$T/r.cfg" proxied ""
MIRROR_PORT=${SERVER_URL##*:}
[ "$MIRROR_PORT" = "$FAULT_PORT" ] || fail "the mirror did not take port $FAULT_PORT"

# The proxy: everything under $T/acng, nothing of the system's instance (/etc/apt-cacher-ng, its
# cache, its log, its socket in /run) is read or touched. No Remap rules: the builders name the
# mirror's URL and the proxy fetches it as given, which AllowUserPorts permits for the mirror's
# port only. Logs unbuffered, so each line is there when a request ends.
A=$T/acng
mkdir -p "$A/conf" "$A/cache" "$A/log"
ACNG_PORT=$(low_port)
cat >"$A/conf/acng.conf" <<C
CacheDir: $A/cache
LogDir: $A/log
SupportDir: /usr/lib/apt-cacher-ng
SocketPath: $A/socket
Port: $ACNG_PORT
BindAddress: 127.0.0.1
ForeGround: 1
AllowUserPorts: $MIRROR_PORT
UnbufferLogs: 1
VerboseLog: 1
C
"$ACNG" -c "$A/conf" >"$A/stdout" 2>&1 &
_PIDS="$_PIDS $!"
listening() {
	python3 -c "import socket; socket.create_connection(('127.0.0.1', $1), 1)" 2>/dev/null
}
for _ in $(seq 1 100); do
	listening "$ACNG_PORT" && break
	sleep 0.1
done
listening "$ACNG_PORT" || fail "apt-cacher-ng does not listen on port $ACNG_PORT:" \
	"$(cat "$A/stdout" "$A/log/apt-cacher.err")"
ACNG_LOG=$A/log/apt-cacher.log

unset https_proxy HTTPS_PROXY all_proxy ALL_PROXY no_proxy NO_PROXY
export SOURCE_DATE_EPOCH=1700000000
build() { # build N: an empty cache of its own, every download through the proxy
	mkdir -p "$T/out$1"
	expect_ok env http_proxy="http://127.0.0.1:$ACNG_PORT" "$MKIMAGE" --cache-dir "$T/cache$1" \
		--output "$T/out$1/proxied.ext4" "$T/r.cfg"
}
# Requests for .debs: the mirror logs "GET /pool/...", apt-cacher-ng "TIME|I|..." for what it
# fetched from the mirror and "TIME|O|..." for what it sent a client (a hit: an O without an I).
mirror_debs() { grep -o '^GET /pool/[^ ]*\.deb' "$SRVLOG" | sort; }
proxy_debs() { grep -c "|$1|[0-9]*|127.0.0.1|127.0.0.1/pool/.*\.deb$" "$ACNG_LOG"; }
# proxy_logged KIND N: whether the proxy's log comes to show N lines of KIND within 20 s. It
# writes a transfer's line when its job ends, which can be after the client has the last byte
# and mkimage has exited (seen on a loaded machine).
proxy_logged() {
	local i
	for i in $(seq 1 100); do
		[ "$(proxy_debs "$1")" = "$2" ] && return 0
		sleep 0.2
	done
	return 1
}

build 1
n=$(mirror_debs | wc -l)
[ "$n" -ge 20 ] || fail "the first build fetched only $n .debs from the mirror"
proxy_logged I "$n" || fail "the proxy did not fetch the $n .debs: $(cat "$ACNG_LOG")"
proxy_logged O "$n" || fail "the proxy did not serve the $n .debs: $(cat "$ACNG_LOG")"
grep -q '"files": '"$n"',' "$T/out1/proxied.report.json" ||
	fail "the first build did not download $n files: $(cat "$T/out1/proxied.report.json")"

: >"$ACNG_LOG"
build 2
[ "$(mirror_debs | wc -l)" = "$n" ] || fail "the second build reached the mirror for .debs"
[ -z "$(mirror_debs | uniq -d)" ] || fail "a .deb was fetched from the mirror twice"
proxy_logged O "$n" || fail "the proxy did not serve the $n .debs from its cache: $(cat "$ACNG_LOG")"
[ "$(proxy_debs I)" = 0 ] || fail "the proxy fetched .debs again: $(grep '|I|' "$ACNG_LOG")"
grep -q '"files": '"$n"',' "$T/out2/proxied.report.json" ||
	fail "the second build's cache was not empty: $(cat "$T/out2/proxied.report.json")"
cmp -s "$T/out1/proxied.ext4" "$T/out2/proxied.ext4" || fail "the two images differ"
cmp -s "$T/out1/proxied.lock" "$T/out2/proxied.lock" || fail "the two locks differ"
note "$n .debs: fetched once from the mirror, the second build served by apt-cacher-ng"
