# test-cost: slow (openssh-server and ssl-cert configured twice, on trixie)
# Test 165 on Debian 13 "trixie": OpenSSH 10 and OpenSSL 3.5, whose default configuration names
# the built-in default provider: ssh-keygen and openssl still run natively, every file but the
# keys is byte-identical to the emulated build's, and the keys match in kind.
SUITE=trixie exec bash "$(dirname "$0")/165-key-twins.sh"
