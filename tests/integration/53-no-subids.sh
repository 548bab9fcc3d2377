# Without a subordinate id range the sandbox refuses up front and says how to fix it, unless the
# user accepts a single-id build.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-hooks.sh"
[ "$(id -u)" = 0 ] || skip "needs root to create a throwaway user"

test_user mkihooks53 nosubids
chmod 755 "$T"
mkdir -p "$T/tree/var/lib/dpkg" "$T/tree/usr/bin"
echo armhf >"$T/tree/var/lib/dpkg/arch"
: >"$T/tree/var/lib/dpkg/status"
chown -R mkihooks53 "$T/tree"

expect_fail 7 "user 'mkihooks53' has no subordinate id range in /etc/subuid and /etc/subgid.*usermod --add-subuids 100000-165535 --add-subgids 100000-165535 mkihooks53.*--single-id" \
	as_user mkihooks53 "$CONFIGURE" "$T/tree"

# asked for: it goes on with one id, says so, and fails later only for the missing dpkg
expect_fail 1 "configuring a tree without the target's dpkg is not yet supported" \
	as_user mkihooks53 "$CONFIGURE" --single-id "$T/tree"
grep -q "building with a single id" "$T/err" || fail "no warning about the single-id build"
true
