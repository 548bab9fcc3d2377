# Every way a request can fail: a clear message in the user's names and exit status 4 (resolve),
# or 3 for a malformed index (with file:line).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/resolve.inc"

for a in armhf armel; do
	pkg libc 2.0 $a "Multi-Arch: same"
	pkg hello 1.0 $a "Depends: libc"
	pkg single 1.0 $a
done
pkg libskew 1.0 armhf "Multi-Arch: same"
pkg libskew 2.0 armel "Multi-Arch: same"
pkg broken 1.0 armhf "Depends: libmissing (>= 3)"
pkg libold 2.0 armhf
pkg wantsnew 1.0 armhf "Depends: libold (>= 3)"
pkg awk-one 1.0 armhf "Provides: awk"
pkg awk-two 1.0 armhf "Provides: awk"
pkg xconf 1.0 armhf "Conflicts: yconf"
pkg yconf 1.0 armel
pkg armelonly 1.0 armel
pkg anyconf 1.0 armhf "Conflicts: single:any"
# every provider of a virtual package failing the same way (php's phpapi-N): one line
pkg php-common 1.0 armhf
for s in cli cgi fpm; do
	pkg php-$s 1.0 armhf "Provides: phpapi-1" "Depends: php-common (= 2)"
done
pkg php-ext 1.0 armhf "Depends: phpapi-1"
for i in $(seq 1 10); do
	pkg api-$i 1.0 armhf "Provides: bigapi" "Depends: nolib"
done
pkg big-ext 1.0 armhf "Depends: bigapi"
pkg libnew 3.0 armhf
pkg wantsold 1.0 armhf "Depends: libnew (<= 2)"
repo_make armhf armel
mapfile -t PK < <(our_args)
R=("$RESOLVE" --primary armhf --arch armel "${PK[@]}")

expect_fail 4 "unknown package 'helo' \(recipe line 1\).*did you mean 'hello'" "${R[@]}" --install helo
expect_fail 4 "unknown package 'zzzzzzzzzz'.*check the name" "${R[@]}" --install zzzzzzzzzz
expect_fail 4 "unknown architecture 'mips' in 'hello:mips'.*armhf, armel" "${R[@]}" --install hello:mips
expect_fail 4 "'armelonly' is not available for armhf.*write 'armelonly:armel'" "${R[@]}" \
	--install armelonly
expect_fail 4 "'broken:armhf=1.0' depends on 'libmissing \(>= 3\)', which no candidate package provides" \
	"${R[@]}" --install broken
grep -q ':armhf (>=' "$T/err" && fail "the message shows an internal rewritten name"
grep -q "there is only" "$T/err" && fail "a version hint for a name no package has"
expect_fail 4 "'wantsnew:armhf=1.0' depends on 'libold \(>= 3\)', which no candidate package provides \(there is only 'libold:armhf=2.0'\)" \
	"${R[@]}" --install wantsnew
expect_fail 4 "'wantsold:armhf=1.0' depends on 'libnew \(<= 2\)', which no candidate package provides \(there is only 'libnew:armhf=3.0'\)" \
	"${R[@]}" --install wantsold
expect_fail 4 "problem 1: each of 'php-cli:armhf=1.0', 'php-cgi:armhf=1.0', 'php-fpm:armhf=1.0' depends on 'php-common \(= 2\)', which no candidate package provides \(there is only 'php-common:armhf=1.0'\)" \
	"${R[@]}" --install php-ext
[ "$(grep -c "php-common (= 2)" "$T/err")" = 1 ] || { cat "$T/err" >&2; fail "one line per provider"; }
expect_fail 4 "each of 'api-1:armhf=1.0', .*'api-8:armhf=1.0' and 2 more depends on 'nolib', which no candidate package provides" \
	"${R[@]}" --install big-ext
[ "$(wc -l <"$T/err")" -le 5 ] || { cat "$T/err" >&2; fail "10 providers took more than one line"; }
expect_fail 4 "'awk' \(recipe line 1\) is a virtual package provided by 2 packages: write one of: awk-one, awk-two" \
	"${R[@]}" --install awk
expect_fail 4 "conflicting pins: 'hello=1.0' \(line 1\) and 'hello=0.9' \(line 2\)" "${R[@]}" \
	--install hello=1.0 --install hello=0.9
expect_fail 4 "version '0.5' of 'hello' is not available for armhf \(available: 1.0\)" "${R[@]}" \
	--install hello=0.5
expect_fail 4 "'libskew:arm[a-z]*=[12].0' and 'libskew:arm[a-z]*=[12].0' are Multi-Arch: same and must have the same version.*version skew" \
	"${R[@]}" --install libskew --install libskew:armel
grep -q '#same' "$T/err" && fail "the message shows the internal :#same name"
expect_fail 4 "'xconf:armhf=1.0' conflicts with or breaks 'yconf:armel=1.0' \('yconf'\)" "${R[@]}" \
	--install xconf --install yconf:armel
expect_fail 4 "'anyconf:armhf=1.0' conflicts with or breaks 'single:armel=1.0' \('single'\)" \
	"${R[@]}" --install anyconf --install single:armel
# (apt 2.6 lets this through: its ':any' on Conflicts only matches Multi-Arch: allowed packages;
# dpkg applies 'Conflicts: x:any' to every arch and would refuse the pair, so we follow dpkg)
expect_fail 4 "'single:armel=1.0' and 'single:armhf=1.0' cannot both be installed" "${R[@]}" \
	--install single --install single:armel
expect_fail 4 "'hello' is both requested \(recipe line 1\) and excluded" "${R[@]}" --install hello \
	--exclude hello
expect_fail 4 "the recipe excludes 'libc'" "${R[@]}" --install hello --exclude libc

# apt agrees that these cannot be installed
apt_set "$T/apt-skew" armhf "armhf armel" libskew libskew:armel && fail "apt solved the skew"
apt_set "$T/apt-conf" armhf "armhf armel" xconf yconf:armel && fail "apt solved the conflict"
apt_set "$T/apt-broken" armhf "armhf armel" broken && fail "apt solved the missing dependency"

# malformed indexes: file and line, exit 3
printf 'Package: a\nVersion: 1\nArchitecture: armhf\n\nPackage b\n' >"$T/bad1"
expect_fail 3 "bad1:5: malformed line" "$RESOLVE" --primary armhf --packages armhf="$T/bad1"
printf 'Package: a\nVersion: 1\n' >"$T/bad2"
expect_fail 3 "bad2:1: stanza lacks a valid Package, Version or Architecture" "$RESOLVE" \
	--primary armhf --packages armhf="$T/bad2"
printf 'Package: a\nVersion: 1\nArchitecture: armhf\nDepends: b (>= \n' >"$T/bad3"
expect_fail 3 "bad3:1: malformed Depends of 'a'" "$RESOLVE" --primary armhf --packages armhf="$T/bad3"
printf ' leading continuation\n' >"$T/bad4"
expect_fail 3 "bad4:1: continuation line without a field" "$RESOLVE" --primary armhf \
	--packages armhf="$T/bad4"
printf 'Package: a\nPackage: b\n' >"$T/bad5"
expect_fail 3 "bad5:2: duplicate field" "$RESOLVE" --primary armhf --packages armhf="$T/bad5"
expect_fail 1 "cannot read index '$T/nonexistent'" "$RESOLVE" --primary armhf \
	--packages armhf="$T/nonexistent"
