# Where mkimage deliberately differs from apt (mkimage(7), "How packages are chosen", "Deliberate
# differences"): each case is a real repository of dpkg-deb packages, signed and served on
# 127.0.0.1; `mkimage --lock` resolves it, `apt-get -s install` (signed-by the same key) shows
# what apt does on the same indexes, and both outcomes are asserted.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/resolve.inc"

debpkg() {
	local d
	d=$(deb_new "$@")
	deb_build "$d" "$T/repo/pool/main" >/dev/null
}

# 1. apt's problem resolver gives up where a valid set exists: 'app' marks x2 -> p2 -> pd2,
# 'tool' then wants z2 or w2, which both conflict with pd2; the set with q2 is never tried.
debpkg app 1.0 armhf "Depends: x2"
debpkg x2 1.0 armhf "Depends: p2 | q2"
debpkg p2 1.0 armhf "Depends: pd2"
debpkg pd2 1.0 armhf
debpkg q2 1.0 armhf
debpkg tool 1.0 armhf "Depends: z2 | w2"
debpkg z2 1.0 armhf "Conflicts: pd2"
debpkg w2 1.0 armhf "Conflicts: pd2"
# 2. apt keeps what nothing needs: it tries pdf-full first, marks fonts-big for it, drops
# pdf-full (its daemon conflicts with the request) but keeps fonts-big, which pdf-lite only
# suggests.
debpkg reporter 1.0 armhf "Depends: pdf-full | pdf-lite"
debpkg pdf-full 1.0 armhf "Depends: fonts-big, pdf-full-daemon"
debpkg pdf-full-daemon 1.0 armhf "Conflicts: reporter"
debpkg fonts-big 1.0 all
debpkg pdf-lite 1.0 armhf "Suggests: fonts-big"
# 3. 'Conflicts: x:any' holds against x of every architecture, as dpkg enforces it.
debpkg anyconf 1.0 armhf "Conflicts: single:any"
debpkg single 1.0 armel
# 4. Providers equal on every rule: apt takes the one its package cache created last, mkimage
# the first by name. 'a-notes' sorts first in the index and merely suggests term-z, which
# makes apt's cache create term-z first, so apt picks term-m.
debpkg a-notes 1.0 all "Suggests: term-z"
for t in term-a term-m term-z; do
	debpkg $t 1.0 armhf "Provides: x-term"
done
debpkg needs-term 1.0 all "Depends: x-term"
gpg_key repo
repo_index "$T/repo" bookworm main armhf armel
repo_sign "$T/repo" bookworm
serve "$T/repo"
APT_SOURCE="deb [signed-by=$KEYRING] $SERVER_URL bookworm main"

# lock NAME PKG...: mkimage --lock for a recipe installing PKG...; exit status returned, the set
# (name:arch=version, sorted) in $T/NAME.ours.
lock() {
	local name=$1 rc=0
	shift
	cat >"$T/$name.cfg" <<R
name = "$name";
architecture = "armhf";
auxiliary_architectures = [ "armel" ];
sources = ( { uri = "$SERVER_URL"; keyring = "$KEYRING"; } );
packages = { base = "none"; install = [ $(printf '"%s", ' "$@" | sed 's/, $//') ]; };
R
	"$MKIMAGE" --cache-dir "$T/cache" --lock="$T/$name.lock" "$T/$name.cfg" >"$T/out" 2>"$T/err" ||
		rc=$?
	sed -n 's/^package: \([^ ]*\) .*/\1/p' "$T/$name.lock" 2>/dev/null | sort >"$T/$name.ours"
	return $rc
}

# checked NAME: the independent checker passes mkimage's set.
checked() {
	python3 "$DEPCHECK" --native armhf \
		--packages "armhf=$T/repo/dists/bookworm/main/binary-armhf/Packages" \
		--packages "armel=$T/repo/dists/bookworm/main/binary-armel/Packages" \
		"$T/$1.ours" 2>"$T/depcheck.log" || { cat "$T/depcheck.log" >&2; fail "$1: depcheck"; }
}

# 1. apt gives up in either order; mkimage finds the valid set, tool's first alternative kept.
for order in "app tool" "tool app"; do
	# shellcheck disable=SC2086
	apt_set "$T/apt-gives-up" armhf "armhf armel" $order &&
		{ cat "$T/apt-gives-up" >&2; fail "apt solved '$order': case 1 is moot"; }
	grep -q "^E: .*held" "$T/apt/sim.log" ||
		{ cat "$T/apt/sim.log" >&2; fail "apt refused '$order' for another reason"; }
	# shellcheck disable=SC2086
	lock gives-up $order || { cat "$T/err" >&2; fail "mkimage refused '$order'"; }
	expect_set "$T/gives-up.ours" \
		"app:armhf=1.0 x2:armhf=1.0 q2:armhf=1.0 tool:armhf=1.0 z2:armhf=1.0" "mkimage, $order"
	checked gives-up
done
note "gives-up: apt's resolver gives up on 'app tool' in either order; mkimage installs a valid set"

# 2. leftovers: apt installs fonts-big, which nothing depends on; mkimage does not.
apt_set "$T/apt-rep" armhf "armhf armel" reporter || fail "apt did not solve 'reporter'"
expect_set "$T/apt-rep" "reporter:armhf=1.0 pdf-lite:armhf=1.0 fonts-big:all=1.0" "apt, reporter"
lock leftover reporter || { cat "$T/err" >&2; fail "mkimage refused 'reporter'"; }
expect_set "$T/leftover.ours" "reporter:armhf=1.0 pdf-lite:armhf=1.0" "mkimage, reporter"
checked leftover
note "leftover: apt keeps fonts-big (only suggested), mkimage leaves it out"

# 3. Conflicts: x:any - apt 2.6 installs both, mkimage refuses (exit 4) naming the conflict.
apt_set "$T/apt-any" armhf "armhf armel" anyconf single:armel || fail "apt refused anyconf"
expect_set "$T/apt-any" "anyconf:armhf=1.0 single:armel=1.0" "apt, anyconf single:armel"
rc=0
lock anyconf anyconf single:armel || rc=$?
[ $rc = 4 ] || { cat "$T/err" >&2; fail "mkimage exited $rc for anyconf + single:armel, expected 4"; }
grep -q "'anyconf:armhf=1.0' conflicts with or breaks 'single:armel=1.0'" "$T/err" ||
	{ cat "$T/err" >&2; fail "mkimage's refusal does not name the conflict"; }
note "conflicts-any: apt installs anyconf with single:armel, mkimage refuses as dpkg would"

# 4. provider ties: apt's choice follows its cache, mkimage's the name.
apt_set "$T/apt-term" armhf "armhf armel" needs-term || fail "apt did not solve 'needs-term'"
expect_set "$T/apt-term" "needs-term:all=1.0 term-m:armhf=1.0" "apt, needs-term"
lock tie needs-term || { cat "$T/err" >&2; fail "mkimage refused 'needs-term'"; }
expect_set "$T/tie.ours" "needs-term:all=1.0 term-a:armhf=1.0" "mkimage, needs-term"
note "provider-tie: apt takes term-m (cache order), mkimage term-a (name)"
