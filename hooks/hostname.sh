#!/bin/sh
# Runs inside the target: name the board and make the name resolve locally.
set -eu
name="${MKIMAGE_HOSTNAME:-${MKIMAGE_NAME:-debian}}"
echo "$name" > /etc/hostname
cat > /etc/hosts <<HOSTS
127.0.0.1	localhost
127.0.1.1	$name
::1		localhost ip6-localhost ip6-loopback
HOSTS
