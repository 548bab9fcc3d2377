# A package's scripts can turn any directory of the tree into a symlink, absolute or relative,
# towards paths that exist on the host. mkimage's own accesses after they ran - the build-trace
# clean-up (/var/log/dpkg.log, alternatives.log, apt logs, /var/cache/ldconfig/aux-cache), the copy
# of an inside hook after /var/tmp became a link, the guards, the dpkg status read - resolve
# inside the tree:
# the host's files at those paths are untouched and nothing is written there (issue 13, H1).
# As root and as an ordinary user with a subordinate range.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-native.sh"

# The host's side: real files where the links point, each with a known content.
HOST=$T/host
mkdir -p "$HOST/log/apt" "$HOST/tmp" "$HOST/cache/ldconfig"
for f in log/dpkg.log log/alternatives.log log/apt/history.log log/apt/term.log \
	cache/ldconfig/aux-cache; do
	echo "host file $f" >"$HOST/$f"
done
snapshot() { (cd "$HOST" && find . -printf '%p %y %s %m\n' | sort && cat $(find . -type f | sort)); }
snapshot >"$T/host.before"

# A postinst that relinks the trace directories (absolute links to the host paths) and usr/sbin's
# policy-rc.d (a relative link climbing far above the root); an inside hook relinks /var/tmp.
d=$(deb_new relinker 1.0 all)
cat >"$d/DEBIAN/postinst" <<P
#!/bin/sh
set -e
# the same paths inside the tree, so the packages configured after this one still work
mkdir -p $HOST/log/apt $HOST/cache/ldconfig
rm -rf /var/log /var/cache/ldconfig
ln -s $HOST/log /var/log
mkdir -p /var/cache && ln -s $HOST/cache/ldconfig /var/cache/ldconfig
echo "postinst ran" >/relinker-ran
P
chmod 755 "$d/DEBIAN/postinst"
deb_build "$d" "$T/repo/pool/main" >/dev/null
native_repo
mkdir -p "$T/r/hooks"
cat >"$T/r/hooks/relink-tmp.sh" <<H
#!/bin/sh
mkdir -p $HOST/tmp && rm -rf /var/tmp && ln -s ../../../../../../..$HOST/tmp /var/tmp
H
printf '#!/bin/sh\necho second hook ran >/second-hook-ran\n' >"$T/r/hooks/second.sh"
chmod -R a+rX "$T/r" && chmod 755 "$T/r/hooks/"*.sh
native_recipe "$T/r/t.cfg" t ', "relinker"' \
	'{ name = "relink"; script = "hooks/relink-tmp.sh"; where = "inside"; },
	 { name = "second"; script = "hooks/second.sh"; where = "inside"; }'

# check WHO IMAGE: the build succeeded, the host's side is as it was, the image has what ran.
check() {
	snapshot >"$T/host.after"
	diff -u "$T/host.before" "$T/host.after" >&2 || fail "$1: the host's files changed"
	[ "$(debugfs -R "cat /relinker-ran" "$2" 2>/dev/null)" = "postinst ran" ] ||
		fail "$1: the postinst did not run"
	[ "$(debugfs -R "cat /second-hook-ran" "$2" 2>/dev/null)" = "second hook ran" ] ||
		fail "$1: the hook after /var/tmp became a link did not run"
	debugfs -R "stat /var/log" "$2" 2>/dev/null | grep -q 'Type: symlink' ||
		fail "$1: /var/log is not the script's link in the image"
	debugfs -R "ls -l /" "$2" 2>/dev/null | grep -q mkimage-hook && fail "$1: a hook's copy is in the image"
	true
}

mkdir -p "$T/img" "$T/tmp"
TMPDIR=$T/tmp expect_ok "$MKIMAGE" --cache-dir "$T/cache" -o "$T/img/t.ext4" "$T/r/t.cfg"
check root "$T/img/t.ext4"
note "root: host files untouched, hooks ran"

if [ "$(id -u)" = 0 ]; then
	test_user mki58user
	chmod 755 "$T"
	chmod -R a+rX "$T/r" "$T/keys"
	chmod -R a+rwX "$HOST"
	snapshot >"$T/host.before"
	mkdir -p "$T/u/tmp" "$T/u/cache" "$T/u/img"
	chown -R mki58user "$T/u"
	TMPDIR=$T/u/tmp expect_ok as_user mki58user "$MKIMAGE" --cache-dir "$T/u/cache" \
		-o "$T/u/img/t.ext4" "$T/r/t.cfg"
	check user "$T/u/img/t.ext4"
	note "ordinary user: host files untouched, hooks ran"
else
	skip_part "not root: the ordinary-user run needs a throwaway user"
fi
