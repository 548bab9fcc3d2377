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
