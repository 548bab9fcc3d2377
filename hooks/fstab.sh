#!/bin/sh
# Runs inside the target: mount the root filesystem by label (the recipes label their image with
# their name), so the image boots from whichever disk or card it was written to.
set -eu
printf 'LABEL=%s\t/\text4\tdefaults,errors=remount-ro\t0\t1\n' "$MKIMAGE_NAME" > /etc/fstab
