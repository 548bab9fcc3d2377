#!/bin/sh
# Runs inside the target: the appliance's service account, owning its state directory.
set -eu
user=appsvc
home=/var/lib/$user
if ! getent passwd "$user" >/dev/null; then
	useradd --system --user-group --home-dir "$home" --shell /usr/sbin/nologin "$user"
fi
mkdir -p "$home"
chown "$user:$user" "$home"
chmod 0750 "$home"
