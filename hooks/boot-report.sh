#!/bin/sh
# Runs inside the target: a boot-time unit that proves the appliance works. Once the system is up
# it runs the secondary-architecture program and writes, on the console, its output and the units
# that failed; `make boot` (tests/bootvm.sh) waits for these lines.
set -eu
cat > /usr/local/sbin/boot-report <<'SCRIPT'
#!/bin/sh
# Written by the recipe's boot-report hook: what the boot test reads on the console.
hello=$(/usr/bin/hello 2>&1) || hello="failed ($?): $hello"
echo "boot-report: hello ($(dpkg-query -W -f='${Architecture}' hello)): $hello"
# Type=simple: this unit does not hold up start-up, so the wait ends.
state=$(systemctl is-system-running --wait 2>&1) || true
systemctl --failed --no-legend --plain 2>&1 | sed 's/^/boot-report: failed: /'
echo "boot-report: system $state, $(systemctl --failed --no-legend | wc -l) failed units"
SCRIPT
chmod 0755 /usr/local/sbin/boot-report
mkdir -p /etc/systemd/system/multi-user.target.wants
cat > /etc/systemd/system/boot-report.service <<'UNIT'
[Unit]
Description=Boot report on the console (secondary-architecture program, failed units)

[Service]
Type=simple
ExecStart=/usr/local/sbin/boot-report
StandardOutput=tty
StandardError=inherit
TTYPath=/dev/console

[Install]
WantedBy=multi-user.target
UNIT
ln -sf /etc/systemd/system/boot-report.service /etc/systemd/system/multi-user.target.wants/
