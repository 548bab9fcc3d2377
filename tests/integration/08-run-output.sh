# test-cost: idle (native builds, one with a 31 s script for the heartbeat)
# What a person and a CI log see of a build (issue 27): configure's progress from dpkg's
# --status-fd (package N of M and its name, a kernel's initramfs run named, triggers), on a
# terminal one bar repainted in place that never wraps at a narrow width, without one a line per
# package and a "still running" heartbeat past 30 s of silence; NAME.log with every line
# timestamped and every script's whole output; NAME.report.json on failure too (status, stage,
# exit code, the errors); a failing hook's first error-looking lines besides its last ones. As
# root, and as an ordinary user with a subordinate range.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-native.sh"
command -v script >/dev/null || skip "script (util-linux) missing (make deps)"

# Packages whose postinsts print and take a moment; a fake kernel and initramfs-tools.
for n in alpha beta gamma; do
	d=$(deb_new "slow-$n" 1.0 all)
	deb_file "$d" "usr/share/doc/slow-$n/README" "$n"
	deb_file "$d" DEBIAN/postinst "#!/bin/sh
echo \"setting up slow-$n: line one\"
i=0; while [ \$i -lt 200 ]; do echo \"slow-$n output line \$i\"; i=\$((i + 1)); done
sleep 0.3
" 0755
	deb_build "$d" "$T/repo/pool/main" >/dev/null
done
d=$(deb_new initramfs-tools 0.142 all)
deb_file "$d" usr/share/doc/initramfs-tools/README "fake"
deb_build "$d" "$T/repo/pool/main" >/dev/null
d=$(deb_new linux-image-6.1.0-99-amd64 6.1.0-99 amd64 "Depends: initramfs-tools")
deb_file "$d" usr/share/doc/linux-image-6.1.0-99-amd64/README "fake"
deb_file "$d" DEBIAN/postinst '#!/bin/sh
echo "update-initramfs: Generating /boot/initrd.img-6.1.0-99-amd64"
sleep 0.5
' 0755
deb_build "$d" "$T/repo/pool/main" >/dev/null
native_repo

mkdir -p "$T/r/hooks"
printf '#!/bin/sh\necho "useradd: unrecognized option '"'"'--sytem'"'"'"\ni=0\nwhile [ $i -lt 40 ]; do echo "Usage: useradd [options] LOGIN ($i)"; i=$((i + 1)); done\nexit 2\n' \
	>"$T/r/hooks/bad.sh"
printf '#!/bin/sh\necho quiet hook starts\ntouch /var/tmp/mki08-quiet\nsleep 31\necho quiet hook ends\n' \
	>"$T/r/hooks/quiet.sh"
chmod -R a+rX "$T/r"
chmod 755 "$T/r/hooks/"*.sh
PKGS=', "slow-alpha", "slow-beta", "slow-gamma", "linux-image-6.1.0-99-amd64"'
native_recipe "$T/r/good.cfg" good "$PKGS"
native_recipe "$T/r/bad.cfg" bad "" '{ name = "adduser"; script = "hooks/bad.sh"; where = "inside"; }'
printf '#!/bin/sh\nyes "a hook printing forever" | head -c 8M\n' >"$T/r/hooks/flood.sh"
native_recipe "$T/r/flood.cfg" flood "" '{ name = "flood"; script = "hooks/flood.sh"; where = "inside"; }'
native_recipe "$T/r/quiet.cfg" quiet "" '{ name = "quiet"; script = "hooks/quiet.sh"; where = "inside"; }'
chmod 644 "$T/r/"*.cfg

# widths FILE COLS: every piece of the terminal's output between carriage returns and newlines,
# its escape sequences taken out, fits COLS - 1 columns (a wrapped bar cannot be repainted).
widths() {
	python3 - "$1" "$2" <<'PY'
import re, sys
raw = open(sys.argv[1], 'rb').read().decode('utf-8', 'replace')
cols = int(sys.argv[2])
for piece in re.split(r'[\r\n]', raw):
    text = re.sub(r'\x1b\[[0-9;]*[A-Za-z]', '', piece)
    if len(text) > cols - 1 and not text.startswith('mkimage: '):
        sys.exit('wider than %d columns: %r' % (cols - 1, text))
PY
}

# run_all WHO DIR RUN...: the checks, building as RUN (mkimage itself, or through setpriv: RUN
# is also run by script's shell, where lib.sh's functions do not exist).
run_all() {
	local who=$1 dir=$2 raw
	shift 2
	mkdir -p "$dir/img" "$dir/tmp"
	chmod 777 "$dir" "$dir/img" "$dir/tmp"

	# A pipe: one line per package configured, with its name and N/M; the log and the report.
	expect_ok env TMPDIR="$dir/tmp" "$@" --cache-dir "$dir/cache" -o "$dir/img/good.ext4" "$T/r/good.cfg"
	NPKG=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["packages"]["total"])' \
		"$dir/img/good.report.json")
	grep -q "^mkimage: configure: $NPKG/$NPKG " "$T/err" || fail "$who: configure does not reach $NPKG/$NPKG"
	for n in alpha beta gamma; do
		grep -Eq "^mkimage: configure: [0-9]+/$NPKG slow-$n \([0-9.]+s\)$" "$T/err" ||
			{ cat "$T/err" >&2; fail "$who: no configure line for slow-$n"; }
	done
	grep -Eq "^mkimage: configure: [0-9]+/$NPKG linux-image-6.1.0-99-amd64: update-initramfs for 6.1.0-99-amd64 " "$T/err" ||
		{ cat "$T/err" >&2; fail "$who: the kernel's initramfs run is not named"; }
	grep -Eq "^mkimage: preinst: [0-9]+/$NPKG " "$T/err" || fail "$who: no preinst progress"
	grep -q $'\r' "$T/err" && fail "$who: carriage returns without a terminal"
	grep -q 'multiarch-lint' "$T/err" && fail "$who: an info line names the work directory's lint file"
	[ -s "$dir/img/good.log" ] || fail "$who: no build log"
	grep -Eq '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\.[0-9]{3}Z debug: ' "$dir/img/good.log" ||
		fail "$who: the log has no timestamped debug lines"
	grep -Ev '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\.[0-9]{3}Z (error|warning|info|debug|output): ' \
		"$dir/img/good.log" && fail "$who: a log line without its timestamp and level"
	# every script's whole output: 200 lines each, far past the 20 a failure shows
	for n in alpha beta gamma; do
		[ "$(grep -c "output: 'dpkg --configure -a' | slow-$n output line" "$dir/img/good.log")" = 200 ] ||
			fail "$who: the log lacks slow-$n's whole output"
	done
	grep -q 'debug: multiarch lint:' "$dir/img/good.log" || fail "$who: the multiarch lint is not in the log"
	python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["status"] == "ok", r' \
		"$dir/img/good.report.json" || fail "$who: the report does not say ok"
	ls "$dir/img" | grep -q 'tmp' && fail "$who: a temp file left: $(ls "$dir/img")"
	cp "$dir/img/good.ext4" "$dir/first.ext4"
	cp "$T/err" "$dir/good.err"

	# A terminal 40 columns wide: bars repainted in place, none wider than the terminal.
	rm -f "$dir/img/"*
	script -qfec "stty cols 40; env NO_COLOR=1 TMPDIR='$dir/tmp' $* --no-layer-cache --cache-dir '$dir/cache' -o '$dir/img/good.ext4' '$T/r/good.cfg'" \
		/dev/null >"$dir/pty.raw" </dev/null || { cat "$dir/pty.raw" >&2; fail "$who: the build on a terminal failed"; }
	widths "$dir/pty.raw" 40 || fail "$who: a bar wider than the 40-column terminal"
	raw=$(tr '\r' '\n' <"$dir/pty.raw" | sed 's/\x1b\[K//g')
	grep -Eq "^configure +\[[#.]+\] +[0-9]+% [0-9]+/$NPKG" <<<"$raw" || { cat -v "$dir/pty.raw" >&2; fail "$who: no configure bar"; }
	grep -q $'\r\033\[K' "$dir/pty.raw" || fail "$who: bars are not repainted in place"
	grep -q "image written to" <<<"$raw" || fail "$who: no final line on the terminal"
	cmp "$dir/img/good.ext4" "$dir/first.ext4" || fail "$who: the image differs with a terminal"

	# A failing hook: the cause (the first error-looking line) as well as the last lines; the
	# report says failed, the stage, the exit code and the messages; the log has it all.
	rm -f "$dir/img/"*
	expect_fail 7 "hook 'adduser' .* failed with exit status 2" \
		env TMPDIR="$dir/tmp" "$@" --cache-dir "$dir/cache" -o "$dir/img/bad.ext4" "$T/r/bad.cfg"
	grep -A2 "the first lines of its output that look like errors" "$T/err" |
		grep -q "unrecognized option '--sytem'" || { cat "$T/err" >&2; fail "$who: the hook's cause is not shown"; }
	python3 - "$dir/img/bad.report.json" "$dir/img/bad.log" <<'PY' || fail "$who: the failure report is wrong"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["status"] == "failed", r
assert r["stage"] == "configure", r
assert r["exit_code"] == 7, r
assert any("hook 'adduser'" in e and "exit status 2" in e for e in r["errors"]), r
assert r["log"] == sys.argv[2], r
PY
	[ "$(grep -c "output: hook 'adduser'.* | Usage: useradd" "$dir/img/bad.log")" = 40 ] ||
		fail "$who: the log lacks the hook's whole output"
	[ -z "$(ls "$dir/img" | grep -v '^bad\.\(report\.json\|log\)$')" ] ||
		fail "$who: more than the report and the log left: $(ls "$dir/img")"

	# Silence for 31 s without a terminal: a heartbeat names what runs.
	expect_ok env TMPDIR="$dir/tmp" "$@" --cache-dir "$dir/cache" -o "$dir/img/quiet.ext4" "$T/r/quiet.cfg"
	grep -Eq "^mkimage: run: still running: hook 'quiet' .* after 3[0-9] s$" "$T/err" ||
		{ cat "$T/err" >&2; fail "$who: no heartbeat during 31 s of silence"; }

	# Ctrl-C: the report says interrupted (stage, exit 130), the log is whole, nothing else.
	rm -f "$dir/img/"*
	env TMPDIR="$dir/tmp" "$@" --cache-dir "$dir/cache" -o "$dir/img/quiet.ext4" "$T/r/quiet.cfg" \
		>/dev/null 2>"$T/err" & pid=$!
	_PIDS="${_PIDS:-} $pid"
	for i in $(seq 1 1200); do
		compgen -G "$dir/tmp/*/root/var/tmp/mki08-quiet" >/dev/null && break
		kill -0 $pid 2>/dev/null || { cat "$T/err" >&2; fail "$who: the build ended before its hook"; }
		sleep 0.05
	done
	kill -INT $pid
	rc=0
	wait $pid || rc=$?
	[ "$rc" = 130 ] || { cat "$T/err" >&2; fail "$who: interrupted: exit $rc"; }
	python3 - "$dir/img/quiet.report.json" <<'PY' || fail "$who: the interrupted build's report is wrong"
import json, sys
r = json.load(open(sys.argv[1]))
assert (r["status"], r["stage"], r["exit_code"]) == ("interrupted", "configure", 130), r
assert any("interrupted by signal 2" in e for e in r["errors"]), r
PY
	grep -q "output: hook 'quiet'.* | quiet hook starts" "$dir/img/quiet.log" ||
		fail "$who: the interrupted build's log lacks the hook's output"
	[ "$(ls "$dir/img" | tr '\n' ' ')" = "quiet.log quiet.report.json " ] ||
		fail "$who: interrupted: left $(ls "$dir/img")"
	note "$who: $(grep -c '^mkimage: configure: ' "$dir/good.err") configure lines, log $(wc -l <"$dir/img/quiet.log") lines"
}

run_all root "$T/root" "$MKIMAGE"

# A script printing without end cannot fill the disk with the log: --limit log-size holds.
expect_ok env TMPDIR="$T/root/tmp" "$MKIMAGE" --limit log-size=1M --cache-dir "$T/root/cache" \
	-o "$T/root/img/flood.ext4" "$T/r/flood.cfg"
size=$(stat -c %s "$T/root/img/flood.log")
[ "$size" -le 1048576 ] || fail "the log has $size bytes, past --limit log-size=1M"
[ "$size" -ge 1000000 ] || fail "the log has $size bytes: the flood did not reach it"
tail -n 1 "$T/root/img/flood.log" | grep -q "^-- the log stops here: it reached its limit 'log-size'" ||
	fail "the log does not say it was cut: $(tail -n 1 "$T/root/img/flood.log")"
if [ "$(id -u)" = 0 ]; then
	test_user mki08user
	chmod 755 "$T"
	chmod -R a+rX "$T/keys" "$T/r"
	mkdir -p "$T/u"
	chown mki08user "$T/u"
	run_all user "$T/u" setpriv --reuid mki08user --regid mki08user --clear-groups \
		env HOME=/nonexistent "$MKIMAGE"
	cmp "$T/u/first.ext4" "$T/root/first.ext4" || fail "the ordinary user's image differs from root's"
else
	skip_part "not root: the ordinary-user run needs a throwaway user"
fi
