# Every recipe error exits 2 and names FILE:LINE and what is wrong.
. "$(dirname "$0")/lib.sh"

recipe() { cat >"$T/r.cfg"; }
check_err() { expect_fail 2 "$1" "$MKIMAGE" --check "$T/r.cfg"; }

recipe <<'R'
name = "t";
architecture = "armhf";
sute = "bookworm";
packages = { install = [ "hello" ]; };
R
check_err "r.cfg:3: unknown key 'sute' in the recipe \(did you mean 'suite'\?\)"

recipe <<'R'
name = "t";
architecture = "armhf";
packages = {
  install = [ "hello" ];
  recomends = true;
};
R
check_err "r.cfg:5: unknown key 'recomends' in 'packages' \(did you mean 'recommends'\?\)"

recipe <<'R'
name = "t";
architecture = [ "armhf" ];
packages = { install = [ "hello" ]; };
R
check_err "r.cfg:2: 'architecture' must be a string"

recipe <<'R'
name = "t";
architecture = "armhf";
merged_usr = "yes";
packages = { install = [ "hello" ]; };
R
check_err "r.cfg:3: 'merged_usr' must be true or false"

# Since trixie, packages ship /bin, /sbin and /lib under /usr only.
recipe <<'R'
name = "t";
architecture = "armhf";
suite = "trixie";
merged_usr = false;
packages = { install = [ "hello" ]; };
R
check_err "r.cfg:4: merged_usr = false: suite 'trixie' requires merged /usr \(its packages ship /bin, /sbin and /lib under /usr only\); drop the key, or build bookworm"

recipe <<'R'
name = "t";
architecture = "armhf";
script_timeout = -5;
packages = { install = [ "hello" ]; };
R
check_err "r.cfg:3: 'script_timeout' must be between 0 and 86400, not -5"

recipe <<'R'
name = "t";
architecture = "armhf";
script_timeout = "10m";
packages = { install = [ "hello" ]; };
R
check_err "r.cfg:3: 'script_timeout' must be an integer"

recipe <<'R'
name = "t";
architecture = "amrhf";
packages = { install = [ "hello" ]; };
R
check_err "r.cfg:2: unknown architecture 'amrhf' \(did you mean 'armhf'\?\)"

recipe <<'R'
name = "t";
architecture = "armhf";
auxiliary_architectures = [ "armel", "sparc99" ];
packages = { install = [ "hello" ]; };
R
check_err "r.cfg:3: unknown architecture 'sparc99'"

recipe <<'R'
name = "t";
architecture = "armhf";
packages = { install = [ "hello:arm64" ]; };
R
check_err "r.cfg:3: package 'hello:arm64' asks for architecture 'arm64'"

recipe <<'R'
name = "t";
architecture = "armhf";
packages = { install = [ "hello" ]; };
hooks = (
  { name = "x"; script = "hooks/missing.sh"; }
);
R
check_err "r.cfg:5: hook script 'hooks/missing.sh' not found"

recipe <<'R'
name = "t";
architecture = "armhf";
packages = { install = [ "hello" ]; };
sources = ( { uri = "http://127.0.0.1:1/debian"; keyring = "nokey.gpg"; } );
R
check_err "r.cfg:4: keyring 'nokey.gpg' not found"

recipe <<'R'
name = "t";
architecture = "armhf";
packages = { install = [ "hello" ]; local = [ "vendor/missing.deb" ]; };
R
check_err "r.cfg:3: local package 'vendor/missing.deb' not found"

recipe <<'R'
name = "t";
architecture = "armhf";
packages = { install = [ "hello" ]; };
image = { size = "lots"; };
R
check_err "r.cfg:4: image 'size' must be \"auto\" or a size"

recipe <<'R'
name = "t";
architecture = "armhf";
packages = { install = [ "hello" ]
R
check_err "r.cfg:[0-9]+: syntax error"

recipe <<'R'
name = "t";
architecture = "armhf";
packages = { install = [ "hello" ]; };
sources = ( { uri = "http://127.0.0.1:1/debian"; } );
R
check_err "r.cfg:4: source 'http://127.0.0.1:1/debian' has no 'keyring'"

# trusted = true is accepted but warns loudly.
recipe <<'R'
name = "t";
architecture = "armhf";
packages = { install = [ "hello" ]; };
sources = ( { uri = "http://127.0.0.1:1/debian"; trusted = true; } );
R
expect_ok "$MKIMAGE" --check "$T/r.cfg"
grep -q "warning: .*r.cfg:4: source 'http://127.0.0.1:1/debian' is marked trusted" "$T/err" ||
	fail "trusted source gives no warning"

# libconfig's traps: adjacent strings joined silently, [ ] and { } where the other is meant.
recipe <<'R'
name = "t";
architecture = "armhf";
packages = { install = [ "hello",
  "systemd-sysv" # the init
  "busybox" ]; };
R
check_err "r.cfg:5: missing comma between \"systemd-sysv\" and \"busybox\"\?"

mkdir -p "$T/inc"
printf 'packages = { install = [ "hello" /* two */ "dash" ]; };\n' >"$T/inc/pkgs.cfg"
recipe <<'R'
name = "t";
architecture = "armhf";
@include "inc/pkgs.cfg"
R
check_err "inc/pkgs.cfg:1: missing comma between \"hello\" and \"dash\"\?"

recipe <<'R'
name = "t";
architecture = "armhf";
packages = { install = [ "hello" ]; };
disk = {
  partitions = [
    { name = "root"; type = "root"; }
  ];
};
R
check_err "r.cfg:5: 'partitions' is a list of groups: write \( \{ \.\.\. \}, \{ \.\.\. \} \), not \[ \.\.\. \]"

recipe <<'R'
name = "t";
architecture = "armhf";
packages = { install = { "hello" }; };
R
check_err "r.cfg:3: 'install' is a list of strings: write \[ \"a\", \"b\" \], not \{ \.\.\. \}"

recipe <<'R'
name = "t";
architecture = "armhf";
packages = { install = ( { name = "hello"; } ); };
R
check_err "r.cfg:3: 'install' is a list of strings: write \[ \"a\", \"b\" \], not \( \{ \.\.\. \} \)"

recipe <<'R'
name = "t";
architecture = "armhf";
packages = { install = [ "hello" ]; };
hooks = { name = "x"; script = "true"; };
R
check_err "r.cfg:4: 'hooks' must be a list of groups"

# Other tools' architecture names: the Debian name as a note, still an error.
for pair in armv7:armhf armv7l:armhf armv7hl:armhf arm-linux-gnueabihf:armhf armv5tel:armel \
	arm-linux-gnueabi:armel aarch64:arm64 arm64-v8a:arm64 aarch64-linux-gnu:arm64 \
	x86_64:amd64 x86-64:amd64 x86_64-linux-gnu:amd64 i686:i386 i686-linux-gnu:i386 \
	riscv64-linux-gnu:riscv64; do
	printf 'name = "t";\narchitecture = "%s";\npackages = { install = [ "hello" ]; };\n' \
		"${pair%%:*}" >"$T/r.cfg"
	check_err "r.cfg:2: '${pair%%:*}' is not a Debian architecture name: Debian calls it '${pair#*:}'"
	grep -q "did you mean" "$T/err" && fail "${pair%%:*}: a 'did you mean' beside the Debian name"
done
recipe <<'R'
name = "t";
architecture = "armhf";
auxiliary_architectures = [ "aarch64" ];
packages = { install = [ "hello" ]; };
R
check_err "r.cfg:3: 'aarch64' is not a Debian architecture name: Debian calls it 'arm64'"
recipe <<'R'
name = "t";
architecture = "armhf";
packages = { install = [ "hello:armv5tel" ]; };
R
check_err "r.cfg:3: package 'hello:armv5tel': 'armv5tel' is not a Debian architecture name: Debian calls it 'armel'"
