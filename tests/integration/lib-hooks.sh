# Fixtures for the hooks tests (5x): real bookworm .debs downloaded through the host's apt (with a
# private apt configuration: the host's architecture list and state are never changed) and
# unpacked the way mkimage's unpack stage leaves them - files in place, merged-/usr links, a dpkg
# database where every package is "install ok unpacked" with its info files and conffile md5s.
# Source after lib.sh. Downloads are cached in $MKI_TEST_DEBS (default /var/tmp/mkimage-hooks-debs)
# so reruns are fast; a fresh machine fills the cache on first use.

MKI_TEST_DEBS=${MKI_TEST_DEBS:-/var/tmp/mkimage-hooks-debs}
CONFIGURE=${CONFIGURE:-$TOP/build/tools/configure}
[ -x "$CONFIGURE" ] || fail "test driver $CONFIGURE missing: run make tools"

# fixture_debs SET PRIMARY "ARCHS" PACKAGE...: download the dependency closure of PACKAGE... for the
# architectures ARCHS (primary first) into $MKI_TEST_DEBS/SET/debs; the unpack order (apt's
# install order) is left in $MKI_TEST_DEBS/SET/order.
# Tests running at once (run.sh -j) download a set once: the first holds SET.lock, the others wait.
fixture_debs() {
	local lock rc=0
	mkdir -p "$MKI_TEST_DEBS"
	exec {lock}>"$MKI_TEST_DEBS/$1.lock"
	flock "$lock"
	fixture_debs_locked "$@" || rc=$?
	exec {lock}>&-
	return $rc
}

fixture_debs_locked() {
	local set=$1 primary=$2 archs=$3 d a
	shift 3
	d=$MKI_TEST_DEBS/$set
	[ -s "$d/order" ] && return 0
	mkdir -p "$d/apt/lists/partial" "$d/apt/cache/archives/partial" "$d/debs" "$d/apt/etc"
	: >"$d/apt/status"
	{
		echo "APT::Architecture \"$primary\";"
		echo "APT::Architectures {"; for a in $archs; do echo "\"$a\";"; done; echo "};"
		echo "Dir::State::Lists \"$d/apt/lists\";"
		echo "Dir::State::status \"$d/apt/status\";"
		echo "Dir::Cache \"$d/apt/cache\";"
		echo "Dir::Etc::Preferences \"$d/apt/etc/preferences\";"
		echo "Dir::Etc::PreferencesParts \"$d/apt/etc\";"
		echo "APT::Install-Recommends \"false\";"
		echo "Acquire::Languages \"none\";"
		echo "Debug::NoLocking \"true\";"
	} >"$d/apt/apt.conf"
	export APT_CONFIG=$d/apt/apt.conf
	# A mirror mid-sync fails one suite's index (security's, seen on the archive these machines
	# reach); apt then uses the others, and so does the fixture when the release's main is there.
	if ! apt-get -q update >"$d/update.log" 2>&1; then
		ls "$d/apt/lists/"*_dists_"$(. /etc/os-release && echo "$VERSION_CODENAME")"_main_binary-*_Packages* \
			>/dev/null 2>&1 || { cat "$d/update.log" >&2; fail "apt-get update for $set"; }
		note "apt-get update for $set: $(grep -m1 '^E: ' "$d/update.log"); went on without it, as apt does"
	fi
	# "Inst NAME[:ARCH] (VERSION ORIGIN [ARCH])" -> "NAME:ARCH VERSION"
	apt-get -s install "$@" 2>"$d/sim.err" | awk '/^Inst / { n = $2; sub(/:.*/, "", n);
		v = $3; sub(/^\(/, "", v); a = $0; sub(/\]\).*/, "", a); sub(/.*\[/, "", a);
		print n ":" a " " v }' >"$d/sim.txt"
	[ -s "$d/sim.txt" ] || { cat "$d/sim.err" >&2; fail "apt-get -s found nothing for $set"; }
	(cd "$d/debs" && awk '{ print $1 "=" $2 }' "$d/sim.txt" | xargs apt-get -q download \
		>"$d/download.log" 2>&1) || { cat "$d/download.log" >&2; fail "apt-get download for $set"; }
	awk '{ print $1 }' "$d/sim.txt" >"$d/order.tmp"
	mv "$d/order.tmp" "$d/order"
	unset APT_CONFIG
}

# fixture_tree SET TREE: unpack the set's debs (in apt's order) into TREE as mkimage's unpack stage
# leaves a tree: merged-/usr links, files with their package owners and modes (tar as root), and a
# dpkg database with every package "install ok unpacked", info files (list, md5sums, conffiles,
# maintainer scripts, triggers), conffile md5s in the status and the architectures (primary first).
# No maintainer script runs. Needs root (tar keeps the packages' owners). The owners are stored as
# a root build stores them: shifted to the commands' range (root_base).
fixture_tree() {
	local set=$1 tree=$2 d=$MKI_TEST_DEBS/$1 admin pkg deb c name arch ma dn f
	admin=$tree/var/lib/dpkg
	mkdir -p "$tree/usr/bin" "$tree/usr/sbin" "$tree/usr/lib" "$admin/info" "$admin/updates" \
		"$admin/triggers" "$admin/alternatives"
	for f in bin sbin lib; do ln -s "usr/$f" "$tree/$f"; done
	if grep -q ':amd64' "$d/order"; then mkdir -p "$tree/usr/lib64"; ln -s usr/lib64 "$tree/lib64"; fi
	: >"$admin/status"; : >"$admin/available"; : >"$admin/diversions"; : >"$admin/statoverride"
	awk '{ sub(/.*:/, "", $1); if ($1 != "all" && !seen[$1]++) print $1 }' "$d/order" >"$admin/arch"
	c=$(mktemp -d "$T/ctl.XXXXXX")
	while read -r pkg; do
		name=${pkg%%:*} arch=${pkg#*:}
		deb=$(ls "$d/debs/${name}_"*"_$arch.deb" "$d/debs/${name}_"*"_all.deb" 2>/dev/null | head -1)
		[ -n "$deb" ] || fail "fixture $set: no .deb for $pkg"
		rm -rf "$c"/*
		dpkg-deb -e "$deb" "$c"
		ma=$(sed -n 's/^Multi-Arch: //p' "$c/control")
		dn=$name; [ "$ma" = same ] && dn=$name:$arch
		dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tree" --keep-directory-symlink \
			--numeric-owner -p
		dpkg-deb --fsys-tarfile "$deb" | tar -t | sed 's|^\./|/|; s|/$||; s|^$|/.|' \
			>"$admin/info/$dn.list"
		for f in "$c"/*; do
			[ "$(basename "$f")" = control ] || cp -p "$f" "$admin/info/$dn.$(basename "$f")"
		done
		{
			sed -n '1p' "$c/control"
			echo "Status: install ok unpacked"
			sed '1d' "$c/control"
			if [ -s "$c/conffiles" ]; then
				echo "Conffiles:"
				while read -r f; do
					echo " $f $(md5sum <"$tree$f" | cut -d' ' -f1)"
				done <"$c/conffiles"
			fi
			echo
		} >>"$admin/status"
	done <"$d/order"
	rm -rf "$c"
	_reown "$tree" "$(root_base uid)" "$(root_base gid)" 0 0 0 0
}

# root_base uid|gid: where a root build stores its commands' id 0 (root's /etc/subuid or
# /etc/subgid entry, else the fixed range of mkimage(7), CONFIGURATION).
root_base() {
	local u g
	u=$(awk -F: '$1 == "root" || $1 == "0" { print $2; exit }' /etc/subuid)
	g=$(awk -F: '$1 == "root" || $1 == "0" { print $2; exit }' /etc/subgid)
	if [ -n "$u" ] && [ -n "$g" ]; then
		[ "$1" = uid ] && echo "$u" || echo "$g"
	else
		echo 2147352576
	fi
}

# _reown TREE UID0 GID0 USUB GSUB UFIRST GFIRST: give what a command sees as id 0 the on-disk id
# UID0/GID0 and id N >= UFIRST the id USUB + N - UFIRST (so UFIRST 0 shifts everything); the
# tree's current owners are read as root_base-shifted when they are in that range.
_reown() {
	python3 - "$@" "$(root_base uid)" "$(root_base gid)" <<'PY'
import os, sys
root = sys.argv[1]
u0, g0, us, gs, uf, gf, rbu, rbg = map(int, sys.argv[2:10])
def inside(i, rb):
    return i - rb if i >= rb else i
def shift(p):
    st = os.lstat(p)
    u, g = inside(st.st_uid, rbu), inside(st.st_gid, rbg)
    os.lchown(p, u0 + u if u < uf or uf == 0 else us + u - uf,
              g0 + g if g < gf or gf == 0 else gs + g - gf)
    if not os.path.islink(p):
        os.chmod(p, st.st_mode & 0o7777)
shift(root)
for d, dirs, files in os.walk(root):
    for n in dirs + files:
        shift(os.path.join(d, n))
PY
}

# fixture_shift TREE USER: re-own TREE as USER's build namespace sees it (id 0 = USER, id N =
# the Nth id of USER's subordinate range), as if USER's own build had unpacked it.
fixture_shift() {
	local tree=$1 user=$2 su sg
	su=$(awk -F: -v u="$user" '$1 == u { print $2; exit }' /etc/subuid)
	sg=$(awk -F: -v u="$user" '$1 == u { print $2; exit }' /etc/subgid)
	_reown "$tree" "$(id -u "$user")" "$(id -g "$user")" "$su" "$sg" 1 1
}

# test_user NAME [nosubids]: a throwaway system user (removed at exit) with a subordinate id
# range of 65536, or none.
test_user() {
	local name=$1
	userdel "$name" >/dev/null 2>&1 || true
	useradd -M -d /nonexistent -s /usr/sbin/nologin "$name" >/dev/null
	_USERS="${_USERS:-} $name"
	trap '_rc=$(_exit_status $?); _cleanup; for u in $_USERS; do userdel "$u" >/dev/null 2>&1 || true; done; exit $_rc' EXIT
	if [ "${2:-}" = nosubids ]; then
		sed -i "/^$name:/d" /etc/subuid /etc/subgid
	elif ! grep -q "^$name:" /etc/subuid; then
		usermod --add-subuids 300000-365535 --add-subgids 300000-365535 "$name"
	fi
}

# as_user NAME CMD...: run CMD as NAME with a clean, unprivileged credential set.
as_user() {
	local name=$1
	shift
	setpriv --reuid "$name" --regid "$name" --clear-groups env HOME=/nonexistent "$@"
}

# fixture_arm_board: the recipes/arm-board.cfg package set (Essential + Priority: required of
# armhf, busybox, hello:armel, libc6:armel) as set "arm-board"; about 100 packages.
fixture_arm_board() {
	local req
	fixture_debs arm armhf "armhf armel" base-passwd
	req=$(APT_CONFIG=$MKI_TEST_DEBS/arm/apt/apt.conf apt-cache dumpavail | awk 'BEGIN { RS = ""; FS = "\n" }
		/\nPriority: required/ || /\nEssential: yes/ { a = ""; p = "";
			for (i = 1; i <= NF; i++) {
				if ($i ~ /^Package: /) p = substr($i, 10)
				if ($i ~ /^Architecture: /) a = substr($i, 15)
			}
			if (a == "armhf" || a == "all") print p }' | sort -u)
	[ -n "$req" ] || fail "no required packages found in the arm lists"
	# shellcheck disable=SC2086
	fixture_debs arm-board armhf "armhf armel" $req busybox hello:armel libc6:armel
}
