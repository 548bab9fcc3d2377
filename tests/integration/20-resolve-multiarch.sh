# Every multiarch rule of the resolver on a synthetic armhf+armel repository: our set must equal
# the expected set and apt-get -s's set, and pass the independent dependency checker.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/resolve.inc"

for a in armhf armel; do
	pkg libc 2.0 $a "Multi-Arch: same"
	pkg libc 1.0 $a "Multi-Arch: same"
	pkg hello 1.0 $a "Depends: libc (>= 1.5)"
	pkg interp 1.0 $a "Multi-Arch: foreign" "Depends: libc"
	pkg python 3.0 $a "Multi-Arch: allowed" "Depends: libc"
	pkg helper 1.0 $a "Depends: libc"
	pkg libabi 1.0 $a "Multi-Arch: same" "Provides: abi-virt" "Conflicts: abi-virt"
	pkg ess 1.0 $a "Essential: yes" "Priority: required" "Depends: libc"
done
pkg tool 1.0 armel "Depends: interp"
pkg script 1.0 armel "Depends: python:any"
pkg nat 1.0 armel "Depends: helper:native"
pkg docs 1.0 all "Depends: hello"
pkg prov-old 1.0 armhf "Provides: virt (= 1)"
pkg prov-new 1.0 armhf "Provides: virt (= 2)"
pkg wantsvirt 1.0 armhf "Depends: virt (>= 2)"
pkg zeta 1.0 armhf
pkg alpha 1.0 armhf
pkg choosy 1.0 armhf "Depends: zeta | alpha"
pkg early 1.0 armhf
pkg late 1.0 armhf "Pre-Depends: early" "Depends: hello"
pkg rec 1.0 armhf "Recommends: alpha"
pkg breaker 1.0 armhf "Breaks: bb"
pkg bb 1.0 armhf
pkg cc 1.0 armhf
pkg needsbc 1.0 armhf "Depends: bb | cc"
pkg req 1.0 armhf "Priority: required"
pkg mta 1.0 armhf "Multi-Arch: foreign" "Provides: mail-transport-agent"
pkg mailer 1.0 armel "Depends: mail-transport-agent"
pkg plainpy 1.0 armel "Depends: python"
pkg imp 1.0 all "Priority: important"
pkg newest 1.0 armhf
pkg newest 1.10 armhf
pkg newest 1.9 armhf
repo_make armhf armel

scenario same-arch armhf armel "hello:armel=1.0 libc:armhf=2.0 libc:armel=2.0" \
	hello:armel libc
scenario foreign armhf armel "tool:armel=1.0 interp:armhf=1.0 libc:armhf=2.0" tool:armel
scenario allowed-any armhf armel "script:armel=1.0 python:armhf=3.0 libc:armhf=2.0" script:armel
scenario native armhf armel "nat:armel=1.0 helper:armhf=1.0 libc:armhf=2.0" nat:armel
scenario arch-all armhf armel "docs:all=1.0 hello:armhf=1.0 libc:armhf=2.0" docs
scenario versioned-provides armhf armel "wantsvirt:armhf=1.0 prov-new:armhf=1.0" wantsvirt
scenario first-alternative armhf armel "choosy:armhf=1.0 zeta:armhf=1.0" choosy
scenario same-own-provides armhf armel "libabi:armhf=1.0 libabi:armel=1.0" libabi libabi:armel
scenario breaks-alternative armhf armel "breaker:armhf=1.0 needsbc:armhf=1.0 cc:armhf=1.0" \
	breaker needsbc
scenario foreign-provides armhf armel "mailer:armel=1.0 mta:armhf=1.0" mailer:armel
scenario allowed-plain armhf armel "plainpy:armel=1.0 python:armel=3.0 libc:armel=2.0" plainpy:armel
scenario newest armhf armel "newest:armhf=1.10" newest
scenario pinned armhf armel "newest:armhf=1.9" newest=1.9
scenario primary-armel armel armhf "hello:armel=1.0 libc:armel=2.0 docs:all=1.0" docs
OUR_EXTRA=--recommends APT_RECOMMENDS=1 scenario recommends armhf armel \
	"rec:armhf=1.0 alpha:armhf=1.0" rec
scenario no-recommends armhf armel "rec:armhf=1.0" rec

# Pre-Depends and dependencies come first in the plan
ours "$T/order" armhf armel --install late
grep -n . "$T/order.plan" >"$T/order.n"
pos() { grep ":$1:" "$T/order.n" | cut -d: -f1; }
sed -i 's/^\([0-9]*\):/\1::/' "$T/order.n"
[ "$(pos early)" -lt "$(pos late)" ] || fail "early (Pre-Depends target) is not before late"
[ "$(pos libc)" -lt "$(pos hello)" ] || fail "libc is not before hello"
[ "$(pos hello)" -lt "$(pos late)" ] || fail "hello is not before late"

# base sets: essential / required / important of the primary arch (apt gets the same names)
ours "$T/base-ess" armhf armel --base essential
expect_set "$T/base-ess" "ess:armhf=1.0 libc:armhf=2.0" "base essential"
ours "$T/base-req" armhf armel --base required
expect_set "$T/base-req" "ess:armhf=1.0 libc:armhf=2.0 req:armhf=1.0" "base required"
ours "$T/base-imp" armhf armel --base important
expect_set "$T/base-imp" "ess:armhf=1.0 libc:armhf=2.0 req:armhf=1.0 imp:all=1.0" "base important"
apt_set "$T/base-imp.apt" armhf "armhf armel" ess req imp || fail "apt failed on the base set"
same_set "$T/base-imp" "$T/base-imp.apt" "base important (ours vs apt)"
check_deps "$T/base-imp" armhf

# excludes keep a package out; recommends of it are simply dropped
ours "$T/excl" armhf armel --recommends --install rec --exclude alpha
expect_set "$T/excl" "rec:armhf=1.0" "exclude"
# allow_older with a pin below the newest is reported
"$RESOLVE" --primary armhf $(our_args | tr '\n' ' ') --allow-older --install newest=1.0 \
	>"$T/older" 2>"$T/older.err" || fail "allow-older failed"
grep -q "newest:armhf=1.0" "$T/older" || fail "allow-older did not keep the pin"
grep -q "'newest:armhf' 1.0 is not the newest version" "$T/older.err" ||
	fail "allow-older did not report the older choice"
