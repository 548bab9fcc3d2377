# apt's choices, rule by rule (mkimage(7), "How packages are chosen"), on a synthetic armhf+armel
# repository: each scenario's set must equal the expected set and apt-get -s's, and pass
# depcheck. Then apt's refusal of an ambiguous virtual request.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/resolve.inc"

# first alternative per relation: 'zz' is the first alternative of another relation, which must
# not make it win where it comes second (the old global favour chose 'zz' for 'fonts')
pkg fonts 1.0 all "Depends: aa | zz"
pkg other 1.0 all "Depends: zz | aa"
pkg aa 1.0 all
pkg zz 1.0 all
# the real package of a name before its providers, unversioned and versioned
pkg libsys 1.0 armhf
pkg libsys-alt 1.0 armhf "Provides: libsys (= 1.0)"
pkg usesys 1.0 armhf "Depends: libsys"
pkg lsb 3.0 all
pkg initutils 1.0 armhf "Provides: lsb (= 11)"
pkg x11common 1.0 all "Depends: lsb (>= 3.0), initutils"
pkg x11late 1.0 all "Depends: initutils, lsb (>= 3.0)"
pkg onlyprov 1.0 all "Depends: lsb (>= 5)"
# a provider is chosen by apt's order when no package has the name: Essential, primary arch,
# Priority, then the name
pkg mta-b 1.0 armhf "Priority: important" "Provides: mta"
pkg mta-a 1.0 armhf "Priority: optional" "Provides: mta"
pkg mailer 1.0 all "Depends: mta"
# the primary arch for Multi-Arch: foreign and :any, even for a dependant of the other arch
for a in armhf armel; do
	pkg tool 1.0 $a "Multi-Arch: foreign"
	pkg interp 1.0 $a "Multi-Arch: allowed"
done
pkg eltool 1.0 armel "Depends: tool"
pkg script 1.0 armel "Depends: interp:any"
# Recommends: followed with recommends = true, the first alternative again
pkg rec 1.0 armhf "Recommends: aa | zz, missing-thing"
# a virtual name with several providers, requested
pkg awk-a 1.0 armhf "Provides: awk"
pkg awk-b 1.0 armhf "Provides: awk"
pkg one-virt-prov 1.0 armhf "Provides: onevirt"
# the first alternative 'bad' pulls 'hater', which conflicts with the request itself
pkg want 1.0 armhf "Depends: bad | good"
pkg bad 1.0 armhf "Depends: hater"
pkg hater 1.0 armhf "Conflicts: want"
pkg good 1.0 armhf
# a later choice's own Conflicts unmark an earlier one (h3), whose dependant takes its next
# alternative; Conflicts declared only by the earlier one (h2) pass the later candidate over
pkg w3 1.0 all "Depends: h3 | g3, b3 | o3"
pkg h3 1.0 armhf
pkg g3 1.0 armhf
pkg b3 1.0 armhf "Conflicts: h3"
pkg o3 1.0 armhf
pkg w2 1.0 all "Depends: h2 | g2, b2 | o2"
pkg h2 1.0 armhf "Conflicts: b2"
pkg g2 1.0 armhf
pkg b2 1.0 armhf
pkg o2 1.0 armhf
repo_make armhf armel

scenario first-alt armhf armel "fonts:all=1.0 aa:all=1.0" fonts
scenario first-alt-both armhf armel "fonts:all=1.0 other:all=1.0 aa:all=1.0" fonts other
scenario real-over-provider armhf armel "usesys:armhf=1.0 libsys:armhf=1.0" usesys
# 'lsb (>= 3.0)' met by the real lsb although initutils provides it too - unless initutils was
# chosen before the relation was reached: then it is left alone, as apt does
scenario versioned-real armhf armel "x11common:all=1.0 initutils:armhf=1.0 lsb:all=3.0" x11common
scenario versioned-satisfied armhf armel "x11late:all=1.0 initutils:armhf=1.0" x11late
scenario versioned-provider armhf armel "onlyprov:all=1.0 initutils:armhf=1.0" onlyprov
scenario provider-order armhf armel "mailer:all=1.0 mta-b:armhf=1.0" mailer
scenario foreign-primary armhf armel "eltool:armel=1.0 tool:armhf=1.0" eltool:armel
scenario any-primary armhf armel "script:armel=1.0 interp:armhf=1.0" script:armel
OUR_EXTRA=--recommends APT_RECOMMENDS=1 scenario recommends armhf armel \
	"rec:armhf=1.0 aa:all=1.0" rec
scenario one-provider armhf armel "one-virt-prov:armhf=1.0" onevirt

mapfile -t PKA < <(our_args)
expect_fail 4 "'awk' \(recipe line 1\) is a virtual package provided by 2 packages: write one of: awk-a, awk-b" \
	"$RESOLVE" --primary armhf --arch armel "${PKA[@]}" --install awk
apt_set "$T/awk.apt" armhf "armhf armel" awk && fail "apt installed the virtual 'awk'"
grep -q "virtual package provided by" "$T/apt/sim.log" || fail "apt refused 'awk' for another reason"

# a first alternative whose own dependencies clash with the request is passed over, as apt does
scenario passed-over armhf armel "want:armhf=1.0 good:armhf=1.0" want
scenario later-conflicts armhf armel "w3:all=1.0 b3:armhf=1.0 g3:armhf=1.0" w3
scenario earlier-conflicts armhf armel "w2:all=1.0 h2:armhf=1.0 o2:armhf=1.0" w2
