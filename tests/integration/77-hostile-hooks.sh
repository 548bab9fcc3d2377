# Hooks that misbehave: one that starts daemons (setsid, a double fork, nohup holding the output
# pipe) and exits 0 builds, with a warning naming them, and none of them keeps running; one that
# kills its parent or signals mkimage cannot (its parent is its pid namespace's init, mkimage is
# outside that namespace): the build goes on and the hook's exit status decides; one that kills
# itself fails the build with exit 7, naming the hook and the signal. Nothing is left running, no
# work dir, no image after a failure.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-native.sh"

native_repo
mkdir -p "$T/r/hooks" "$T/tmp" "$T/img"
cat >"$T/r/hooks/daemons-in.sh" <<'H'
#!/bin/sh
setsid sleep 7701 >/dev/null 2>&1 </dev/null &
( (sleep 7702 >/dev/null 2>&1 &) & )
sleep 7703 &
echo started
exit 0
H
cat >"$T/r/hooks/daemons-out.sh" <<'H'
#!/bin/sh
nohup sleep 7704 &
setsid sleep 7705 &
touch "$MKIMAGE_ROOT/etc/mki77-outside-ran"
H
cat >"$T/r/hooks/kill-parent.sh" <<'H'
#!/bin/sh
parent=$PPID
kill -TERM "$parent"; kill -KILL "$parent"; kill -INT "$parent"
sleep 1
echo "parent $parent alive after SIGTERM, SIGKILL and SIGINT" >/etc/mki77-parent
H
# The test writes mkimage's pid here: a hook that knows it still cannot reach it.
cat >"$T/r/hooks/kill-mkimage.sh" <<H
#!/bin/sh
pid=\$(cat "$T/mkimage.pid")
if kill -TERM "\$pid" 2>/dev/null; then r=delivered; else r=refused; fi
echo "SIGTERM to mkimage (\$pid): \$r" >"\$MKIMAGE_ROOT/etc/mki77-mkimage"
H
printf '#!/bin/sh\necho "about to go"\nkill -9 $$\necho "not reached"\n' >"$T/r/hooks/kill-self.sh"
chmod +x "$T/r/hooks/"*.sh

hook() { echo "{ name = \"$1\"; script = \"hooks/$2.sh\"; where = \"$3\"; }"; }
native_recipe "$T/r/daemons.cfg" t "" "$(hook daemons-in daemons-in inside), $(hook daemons-out daemons-out outside)"
native_recipe "$T/r/parent.cfg" t "" "$(hook parent-in kill-parent inside), $(hook mkimage-out kill-mkimage outside)"
native_recipe "$T/r/self.cfg" t "" "$(hook suicide kill-self inside), $(hook never daemons-out outside)"

# build RECIPE: build in the background (its pid in $T/mkimage.pid), wait; sets RC.
build() {
	local pid
	RC=0
	TMPDIR=$T/tmp "$MKIMAGE" --cache-dir "$T/cache" -o "$T/img/t.ext4" "$T/r/$1.cfg" \
		>"$T/out" 2>"$T/err" & pid=$!
	echo $pid >"$T/mkimage.pid"
	wait $pid || RC=$?
	no_process 'sleep 770[0-9]' "after $1"
	no_process_under "$T/tmp" "after $1"
	[ -z "$(ls -A "$T/tmp")" ] || fail "$1: work dir left: $(ls -A "$T/tmp")"
}
dbg() { debugfs -R "cat $1" "$T/img/t.ext4" 2>/dev/null; }

# --- daemons: the build succeeds, warns about each hook's leftovers, and they are gone ---
build daemons
[ "$RC" = 0 ] || { cat "$T/err" >&2; fail "daemons: exit $RC"; }
# (which names: a daemon caught between fork and exec still has the hook's name)
grep -q "warning: hook 'daemons-in' (inside, .*) left .* running when it ended; killed" "$T/err" ||
	{ cat "$T/err" >&2; fail "no warning about the inside hook's daemons"; }
grep -q "warning: hook 'daemons-out' (outside, .*) left .* running when it ended; killed" "$T/err" ||
	{ cat "$T/err" >&2; fail "no warning about the outside hook's daemons"; }
dbg /etc/mki77-outside-ran >/dev/null || fail "the outside hook's file is not in the image"
note "daemons: exit 0; $(grep -m1 "warning: hook 'daemons-in'" "$T/err" | sed 's/(nothing may.*//')"
rm -f "$T/img"/*

# --- killing the parent, signalling mkimage: nothing happens to the build ---
build parent
[ "$RC" = 0 ] || { cat "$T/err" >&2; fail "parent: exit $RC"; }
dbg /etc/mki77-parent | grep -q "parent 1 alive after SIGTERM, SIGKILL and SIGINT" ||
	fail "the inside hook's parent is not its namespace's init: $(dbg /etc/mki77-parent)"
dbg /etc/mki77-mkimage | grep -q ": refused" || fail "a hook could signal mkimage: $(dbg /etc/mki77-mkimage)"
note "kill parent: $(dbg /etc/mki77-parent); $(dbg /etc/mki77-mkimage)"
rm -f "$T/img"/*

# --- a hook that kills itself: exit 7, the hook and the signal named, nothing written ---
build self
[ "$RC" = 7 ] || { cat "$T/err" >&2; fail "self: exit $RC, expected 7"; }
grep -q "hook 'suicide' (inside, .*) was killed by signal 9 (Killed)" "$T/err" ||
	{ cat "$T/err" >&2; fail "the hook killed by a signal is not named"; }
grep -q "about to go" "$T/err" || fail "the killed hook's output is not shown"
grep -q "hook 'never'" "$T/err" && fail "a hook after the failing one ran"
[ -z "$(left_beside "$T/img")" ] || fail "self: output left: $(left_beside "$T/img")"
note "kill self: exit 7, $(grep -m1 "was killed by signal" "$T/err" | sed 's/;.*//')"

# --- the daemons again, in an ordinary user's build (subordinate ids, no privilege) ---
if [ "$(id -u)" = 0 ]; then
	test_user mkihooks77
	chmod 755 "$T"
	chmod -R a+rX "$T/r" "$T/keys"
	mkdir -p "$T/u/tmp" "$T/u/cache" "$T/u/img"
	chown -R mkihooks77 "$T/u"
	TMPDIR=$T/u/tmp expect_ok as_user mkihooks77 "$MKIMAGE" --cache-dir "$T/u/cache" \
		-o "$T/u/img/t.ext4" "$T/r/daemons.cfg"
	grep -q "warning: hook 'daemons-out' (outside, .*) left .* running when it ended" "$T/err" ||
		{ cat "$T/err" >&2; fail "user: no warning about the outside hook's daemons"; }
	no_process 'sleep 770[0-9]' "after an ordinary user's build"
	[ -z "$(ls -A "$T/u/tmp")" ] || fail "user: work dir left"
	note "daemons in an ordinary user's build: exit 0, warned, none left"
else
	skip_part "not root: the ordinary-user run needs a throwaway user"
fi
