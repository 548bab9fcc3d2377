# test-cost: slow (about twenty native builds, each interrupted; nine as an ordinary user)
# SIGTERM and SIGINT end every kind of wait of a build (issue 30, deliverable 1): an index and a
# package download from a stalled loopback server, the cache lock another process holds, unpacking,
# a maintainer script running, dpkg stopped (SIGSTOP) between two scripts, an inside and an outside
# hook, and the image writer. One table, one row per wait: each build is started, the test waits
# for the row's marker (a request in the server's log, a message, a file in the tree or beside the
# image: no timing), signals mkimage and requires exit 130 with "interrupted" within 30 s, no work
# directory, nothing beside the image, no process of the build left (by root and working directory
# and by the markers' names), the host's Shmem back, only verified objects in the cache. SIGTERM
# and SIGINT (three of the waits: both signals take one handler) as root, SIGTERM as an ordinary
# user. The resolver is not a wait: it only computes.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-native.sh"

# mki92-lock: fetched by no build before its row, whose cache lock the test holds.
d=$(deb_new mki92-lock 1.0 all)
deb_file "$d" usr/share/doc/mki92-lock/README "locked"
deb_build "$d" "$T/repo/pool/main" >/dev/null
# mki92-big: 20 000 small files, so unpacking is caught in the middle.
d=$(deb_new mki92-big 1.0 all)
python3 - "$d" <<'P'
import os, sys
for i in range(20):
    top = os.path.join(sys.argv[1], "usr/share/mki92-big/d%02d" % i)
    os.makedirs(top)
    for j in range(1000):
        with open(os.path.join(top, "f%04d" % j), "w") as f:
            f.write("file %d %d\n" % (i, j))
P
deb_build "$d" "$T/repo/pool/main" >/dev/null
# mki92-script: a postinst that marks and sleeps; mki92-stop: one that stops dpkg and ends;
# mki92-blob: 128 MiB of random data in the tree, so that writing the image takes a while.
for p in script:'touch /var/tmp/mki92-script; exec sleep 9201' \
	stop:'touch /var/tmp/mki92-stop; kill -STOP $PPID; exit 0' \
	blob:'head -c 128M /dev/urandom >/var/lib/mki92-blob'; do
	d=$(deb_new "mki92-${p%%:*}" 1.0 all)
	deb_file "$d" DEBIAN/postinst "#!/bin/sh
${p#*:}
" 0755
	deb_build "$d" "$T/repo/pool/main" >/dev/null
done
native_repo
LOCK_SHA=$(sha256sum "$T"/repo/pool/main/mki92-lock_1.0_all.deb | cut -d' ' -f1)

mkdir -p "$T/r/hooks"
printf '#!/bin/sh\ntouch /var/tmp/mki92-inside\nsleep 9203\n' >"$T/r/hooks/inside.sh"
printf '#!/bin/sh\ncd "$MKIMAGE_ROOT"\ntouch var/tmp/mki92-outside\nsleep 9204\n' >"$T/r/hooks/outside.sh"
chmod 755 "$T/r/hooks/"*.sh
native_recipe "$T/r/base.cfg" t ""
for p in lock big script stop blob; do
	native_recipe "$T/r/$p.cfg" t ", \"mki92-$p\""
done
native_recipe "$T/r/inside.cfg" t "" '{ name = "sleeper"; script = "hooks/inside.sh"; where = "inside"; }'
native_recipe "$T/r/outside.cfg" t "" '{ name = "sleeper"; script = "hooks/outside.sh"; where = "outside"; }'
native_recipe "$T/r/warm.cfg" t ', "mki92-big", "mki92-script", "mki92-stop", "mki92-blob"'
chmod -R a+rX "$T/r"

# The waits. A row: NAME RECIPE CACHE RULE MARKER. CACHE "fresh" is an empty cache, "warm" one
# holding every package but mki92-lock. RULE is the server's fault ("-": none). MARKER is
# log:ERE (a request in the server's log), err:ERE (a message of mkimage), tree:PATH (a file in the
# staging tree) or stop:GLOB (a file under the build's directory; mkimage is stopped with
# SIGSTOP there, signalled and continued, so the stage cannot end in between).
WAITS=(
	"index     base    fresh */Packages*_stall_10 log:GET_.*/Packages"
	"download  base    fresh /pool/*_stall_100     log:GET_/pool/"
	"lock      lock    warm  -                     err:waiting_for_another_mkimage_process"
	"unpack    big     warm  -                     stop:tmp/*/root/usr/share/mki92-big/d00/f0000"
	"script    script  warm  -                     tree:var/tmp/mki92-script"
	"dpkg-stop stop    warm  -                     tree:var/tmp/mki92-stop"
	"inside    inside  warm  -                     tree:var/tmp/mki92-inside"
	"outside   outside warm  -                     tree:var/tmp/mki92-outside"
	"image     blob    warm  -                     stop:img/t.ext4.tmp-*"
)

# The host's shared memory in MiB, but for the files in /dev/shm: other tests' emulated armhf
# builds keep their trees there (builder/sandbox/workroot.h), which is no leak of this one's.
shmem() {
	echo $(($(awk '/^Shmem:/ { print int($2 / 1024) }' /proc/meminfo) - \
		$(df -m --output=used /dev/shm 2>/dev/null | tail -n 1 || echo 0)))
}

# marked MARKER DIR PID: whether MARKER is there yet.
marked() {
	local kind=${1%%:*} what=${1#*:}
	what=${what//_/ }
	case $kind in
	log) grep -Eq -- "$what" "$SRVLOG" ;;
	err) grep -Eq -- "$what" "$T/err" ;;
	tree) compgen -G "$2/tmp/*/root/$what" >/dev/null ;;
	stop) compgen -G "$2/$what" >/dev/null ;;
	esac
}

# interrupt WHO DIR SIG ROW [RUNNER...]: one row, signal SIG.
interrupt() {
	local who=$1 dir=$2 sig=$3 name recipe cache rule marker pid rc=0 i holder= before after
	read -r name recipe cache rule marker <<<"$4"
	shift 4
	if [ "$cache" = fresh ]; then
		cache=$dir/cache-fresh
		rm -rf "$cache"
	else
		cache=$dir/cache
	fi
	mkdir -p "$cache"
	[ -z "${U92:-}" ] || chown -R "$U92" "$cache"
	[ "$rule" = - ] && : >"$RULES" || echo "${rule//_/ }" >"$RULES"
	: >"$SRVLOG"
	if [ "$name" = lock ]; then
		mkdir -p "$cache/locks"
		: >"$cache/locks/$LOCK_SHA"
		[ -z "${U92:-}" ] || chown -R "$U92" "$cache/locks"
		# one process holds it (killing it frees the lock), before the build starts
		(exec 9>>"$cache/locks/$LOCK_SHA"; flock 9; exec sleep 9299) & holder=$!
		_PIDS="$_PIDS $holder"
		for i in $(seq 1 200); do flock -n "$cache/locks/$LOCK_SHA" true || break; sleep 0.05; done
		flock -n "$cache/locks/$LOCK_SHA" true && fail "$who $sig lock: the test could not take the lock"
	fi
	before=$(shmem)
	"$@" env TMPDIR="$dir/tmp" "$MKIMAGE" --cache-dir "$cache" -o "$dir/img/t.ext4" \
		"$T/r/$recipe.cfg" >/dev/null 2>"$T/err" & pid=$!
	_PIDS="$_PIDS $pid" # if the test fails, its exit trap stops this build
	for i in $(seq 1 1200); do
		marked "$marker" "$dir" && break
		kill -0 $pid 2>/dev/null || { cat "$T/err" >&2; fail "$who $sig $name: ended before its wait ($marker)"; }
		sleep 0.05
	done
	marked "$marker" "$dir" || fail "$who $sig $name: the wait never started ($marker)"
	if [ "${marker%%:*}" = stop ]; then
		kill -STOP $pid
		kill -"$sig" $pid
		kill -CONT $pid
	else
		kill -"$sig" $pid
	fi
	# bounded: every wait here is endless, a missed signal would hang
	for i in $(seq 1 300); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
	kill -0 $pid 2>/dev/null && { kill -9 $pid; fail "$who $sig $name: still running 30 s after the signal"; }
	wait $pid || rc=$?
	[ -z "$holder" ] || { kill $holder; wait $holder 2>/dev/null || true; }
	: >"$RULES"
	[ "$rc" = 130 ] || { cat "$T/err" >&2; fail "$who $sig $name: exit $rc, expected 130"; }
	grep -q "interrupted" "$T/err" || { cat "$T/err" >&2; fail "$who $sig $name: no 'interrupted' message"; }
	[ -z "$(ls -A "$dir/tmp")" ] || fail "$who $sig $name: work dir left: $(ls -A "$dir/tmp")"
	[ -z "$(left_beside "$dir/img")" ] || fail "$who $sig $name: left beside the image: $(left_beside "$dir/img")"
	no_process_under "$dir/tmp" "$who $sig $name"
	no_process 'sleep 92(0[1-4]|99)' "$who $sig $name"
	after=$(shmem)
	[ "$after" -le $((before + 64)) ] || fail "$who $sig $name: host Shmem $before MiB before, $after MiB after"
	no_temp_files "$cache"
	verify_cache "$cache" >/dev/null
	note "$who $sig $name: exit 130 ($(grep -m1 -o 'was stopped: interrupted\|interrupted by signal [A-Z0-9]*' "$T/err" || echo interrupted))"
}

# run_all WHO DIR SIGNALS [RUNNER...]: the table; $U92 names the runner's user (owns DIR).
run_all() {
	local who=$1 dir=$2 sigs=$3 sig row
	shift 3
	mkdir -p "$dir/tmp" "$dir/img" "$dir/cache"
	[ -z "${U92:-}" ] || chown -R "$U92" "$dir"
	TMPDIR=$dir/tmp expect_ok "$@" "$MKIMAGE" --until fetch --cache-dir "$dir/cache" "$T/r/warm.cfg"
	for sig in $sigs; do
		for row in "${WAITS[@]}"; do
			# SIGINT takes SIGTERM's path (one handler): three kinds of wait show it
			[ "$sig" = TERM ] || [[ " $INT_ROWS " = *" ${row%% *} "* ]] || continue
			interrupt "$who" "$dir" "$sig" "$row" "$@"
		done
	done
	# the cache the interrupted builds shared still builds
	TMPDIR=$dir/tmp expect_ok "$@" "$MKIMAGE" --cache-dir "$dir/cache" -o "$dir/img/t.ext4" "$T/r/lock.cfg"
	[ -z "$(ls -A "$dir/tmp")" ] || fail "$who: work dir left after a good build"
}

chmod 755 "$T"
INT_ROWS="download script image"
run_all root "$T/root" "TERM INT"
if [ "$(id -u)" = 0 ]; then
	test_user mkiwait92
	# setpriv, not as_user: the signalled pid must be mkimage's own (exec all the way)
	U92=mkiwait92 run_all user "$T/user" TERM setpriv --reuid mkiwait92 --regid mkiwait92 \
		--clear-groups env HOME=/nonexistent
else
	skip_part "not root: the ordinary user's builds need a throwaway user"
fi
