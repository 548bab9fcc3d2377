# Connections: kept alive between files, at most --jobs at once, proxies from the environment
# (http_proxy, no_proxy) as curl and apt honour them.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/faultlib.sh"

for i in $(seq 1 10); do
	d=$(deb_new pkg$i 1.0 armhf)
	deb_file "$d" usr/share/pkg$i/blob "$(head -c 50000 /dev/urandom | base64)"
	deb_build "$d" "$T/repo/pool/main" >/dev/null
done
fault_serve "$T/repo" proxy
PROXY_URL=$SERVER_URL PROXY_LOG=$SRVLOG
fault_serve "$T/repo"
debs_list "$T/repo" "$SERVER_URL" >"$T/list"
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY no_proxy NO_PROXY

conns() { sed -n 's/.* conn=\([0-9]*\)$/\1/p' "$1" | sort -u | wc -l; }

# One job: every file over the same kept-alive connection.
expect_ok "$FETCHDEBS" --cache-dir "$T/c1" -j 1 <"$T/list"
[ "$(wc -l <"$SRVLOG")" = 10 ] || fail "expected 10 requests"
[ "$(conns "$SRVLOG")" = 1 ] || fail "connections were not reused: $(cat "$SRVLOG")"

# Four jobs: never more than four connections.
: >"$SRVLOG"
expect_ok "$FETCHDEBS" --cache-dir "$T/c2" -j 4 <"$T/list"
[ "$(conns "$SRVLOG")" -le 4 ] || fail "more than 4 connections: $(cat "$SRVLOG")"

# http_proxy: every request goes through the proxy, none to the server directly.
: >"$SRVLOG"
expect_ok env http_proxy="$PROXY_URL" "$FETCHDEBS" --cache-dir "$T/c3" <"$T/list"
[ ! -s "$SRVLOG" ] || fail "requests bypassed the proxy: $(cat "$SRVLOG")"
[ "$(grep -c "GET $SERVER_URL/pool/main/pkg" "$PROXY_LOG")" = 10 ] ||
	fail "the proxy did not see the requests: $(cat "$PROXY_LOG")"

# no_proxy: direct again.
: >"$PROXY_LOG"
expect_ok env http_proxy="$PROXY_URL" no_proxy=127.0.0.1 "$FETCHDEBS" --cache-dir "$T/c4" <"$T/list"
[ ! -s "$PROXY_LOG" ] || fail "no_proxy was ignored"
[ "$(wc -l <"$SRVLOG")" = 10 ] || fail "expected 10 direct requests"
