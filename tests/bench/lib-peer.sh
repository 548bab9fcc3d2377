# Sourced by the benches that run mmdebstrap beside mkimage (60-build.sh, 64-growth.sh).
# peer_serve DIR: serves the mirror DIR/repo on a free loopback port (sets URL), runs the armhf
# programs mmdebstrap starts through the host's qemu-arm (registered for this run only: flags
# PF, the -P wrapper expects argv[0] preserved), and on exit stops both and removes $W.
peer_serve() {
	local port
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	python3 -m http.server --bind 127.0.0.1 --directory "$1/repo" "$port" >/dev/null 2>&1 &
	PEER_SERVER=$!
	PEER_REGISTERED=
	trap peer_cleanup EXIT
	URL=http://127.0.0.1:$port
	if [ "$(id -u)" = 0 ] && ! ls /proc/sys/fs/binfmt_misc/ 2>/dev/null | grep -q arm; then
		mountpoint -q /proc/sys/fs/binfmt_misc ||
			mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
		sed -n 's/^:qemu-arm:\(.*\):[A-Z]*$/:mkimage-bench-arm:\1:PF/p' \
			/usr/lib/binfmt.d/qemu-arm.conf >/proc/sys/fs/binfmt_misc/register
		PEER_REGISTERED=1
	fi
	sleep 0.5
}

peer_cleanup() {
	kill "$PEER_SERVER" 2>/dev/null || true
	[ -z "$PEER_REGISTERED" ] || echo -1 >/proc/sys/fs/binfmt_misc/mkimage-bench-arm 2>/dev/null || true
	rm -rf "$W"
}
