# Helpers for the update tests (121, 129): a vendor's keys, a bundle with one byte flipped, and
# the second disk a booted machine installs from.
# Source after lib.sh.

# rauc_keys DIR: a CA (DIR/ca.key, DIR/ca.cert.pem) and a signing certificate it issued
# (DIR/signer.cert.pem, DIR/signer.key.pem), made with openssl.
rauc_keys() {
	mkdir -p "$1"
	openssl req -x509 -newkey rsa:2048 -nodes -keyout "$1/ca.key" -out "$1/ca.cert.pem" \
		-days 3650 -subj "/O=mkimage tests/CN=update CA" \
		-addext basicConstraints=critical,CA:TRUE \
		-addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null || fail "openssl: CA"
	openssl req -newkey rsa:2048 -nodes -keyout "$1/signer.key.pem" \
		-subj "/O=mkimage tests/CN=signer" -out "$1/signer.csr" 2>/dev/null ||
		fail "openssl: signer"
	printf 'keyUsage=critical,digitalSignature\nbasicConstraints=CA:FALSE\n' >"$1/ext"
	openssl x509 -req -in "$1/signer.csr" -CA "$1/ca.cert.pem" -CAkey "$1/ca.key" \
		-set_serial 1 -days 3650 -extfile "$1/ext" -out "$1/signer.cert.pem" 2>/dev/null ||
		fail "openssl: cert"
}

# rauc_flip FROM TO OFFSET: TO is FROM with the byte at OFFSET (from the end if negative) inverted.
rauc_flip() {
	cp "$1" "$2"
	python3 -c 'import sys
f = open(sys.argv[1], "r+b"); f.seek(int(sys.argv[2]), 0 if int(sys.argv[2]) >= 0 else 2)
b = f.read(1); f.seek(-1, 1); f.write(bytes([b[0] ^ 0xff]))' "$2" "$3"
}

# rauc_steps_disk DIR IMG: an ext4 disk labelled "steps" holding DIR's files, each root's (RAUC
# wants bundles owned by root, whoever runs the test).
rauc_steps_disk() {
	local size f
	chmod 644 "$1"/*
	size=$(du -sm "$1" | cut -f1)
	mkfs.ext4 -q -L steps -E root_owner=0:0 -d "$1" "$2" "$((size + 64))M" ||
		fail "mkfs.ext4: steps disk"
	for f in "$1"/*; do
		debugfs -w -R "set_inode_field /${f##*/} uid 0" "$2" >/dev/null 2>&1
		debugfs -w -R "set_inode_field /${f##*/} gid 0" "$2" >/dev/null 2>&1
	done
}
