# The whole bootable arm-board build (systemd, linux-image-armmp and its initramfs, all hooks)
# side by side with mmdebstrap + `mke2fs -d`, same packages, same mirror, warm cache: bench 60 on
# the whole recipe. Generating the initramfs under QEMU dominates both, so one run by default.
REPS=${REPS:-1} SET=bootable exec bash "$(dirname "$0")/60-build.sh"
