/*
 * The last step before a command in the tree (a maintainer script, dpkg, an inside hook) is
 * exec'd: take away what no package needs and every kernel interface that could reach past the
 * build. Learnt from bubblewrap, flatpak and systemd-nspawn: capabilities over mounts, chroot,
 * modules, time, raw I/O and the like leave the bounding set; PR_SET_NO_NEW_PRIVS; and a seccomp
 * filter that answers EPERM (never kills: scripts that probe keep working) for mounting and
 * pivoting, new user namespaces, setns, the kernel keyring, bpf, perf, ptrace, module, kexec,
 * reboot and swap calls, open_by_handle_at, userfaultfd, io_uring, TIOCSTI/TIOCLINUX and odd
 * personalities. Both x86-64 and i386 entry points are filtered (a 32-bit program, or int 0x80
 * from a 64-bit one, cannot go around it); the x32 ABI is refused outright.
 */
#ifndef MKI_SECCOMP_H
#define MKI_SECCOMP_H

/**
 * Apply all of the above to the calling process (and what it execs). For the child between
 * fork and exec: no allocation, no locks. 0 or a negative errno; -ENOTSUP on a host
 * architecture without a filter (the caller must refuse to go on, not run unfiltered).
 */
int seccomp_lockdown(void);

#endif
