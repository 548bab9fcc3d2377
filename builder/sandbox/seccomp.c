#include "seccomp.h"

#include <errno.h>
#include <stddef.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Capabilities no package script needs, and that would let one reach the host or the kernel.
 * Kept: CHOWN, DAC_*, FOWNER, FSETID, KILL, SETUID/SETGID, SETPCAP, SETFCAP (setcap in
 * postinsts), MKNOD, NET_BIND_SERVICE, NET_RAW, AUDIT_WRITE, IPC_OWNER, LEASE, IPC_LOCK,
 * NET_BROADCAST and SYS_NICE: what dpkg, adduser, setcap and daemons' postinsts use.
 */
static const int dropped_caps[] = {
	CAP_SYS_ADMIN,	   /* mount, pivot_root, sethostname, ... */
	CAP_SYS_CHROOT,	   /* the double-chroot escape */
	CAP_SYS_MODULE,    CAP_SYS_RAWIO,  CAP_SYS_PTRACE, CAP_SYS_PACCT, CAP_SYS_BOOT,
	CAP_SYS_TIME,	   CAP_SYS_RESOURCE, CAP_SYS_TTY_CONFIG, CAP_MAC_OVERRIDE, CAP_MAC_ADMIN,
	CAP_SYSLOG,	   CAP_WAKE_ALARM, CAP_BLOCK_SUSPEND, CAP_AUDIT_CONTROL, CAP_AUDIT_READ,
	CAP_LINUX_IMMUTABLE, CAP_NET_ADMIN,
#ifdef CAP_PERFMON
	CAP_PERFMON,
#endif
#ifdef CAP_BPF
	CAP_BPF,
#endif
#ifdef CAP_CHECKPOINT_RESTORE
	CAP_CHECKPOINT_RESTORE,
#endif
};

/* Refused outright, on x86-64 (by <sys/syscall.h>) and i386 (numbers from its syscall table). */
static const unsigned denied_x86_64[] = {
	__NR_mount, __NR_umount2, __NR_pivot_root, __NR_chroot, __NR_setns, __NR_keyctl,
	__NR_add_key, __NR_request_key, __NR_bpf, __NR_perf_event_open, __NR_ptrace,
	__NR_process_vm_readv, __NR_process_vm_writev, __NR_init_module, __NR_finit_module,
	__NR_delete_module, __NR_kexec_load, __NR_kexec_file_load, __NR_reboot, __NR_swapon,
	__NR_swapoff, __NR_acct, __NR_quotactl, __NR_iopl, __NR_ioperm, __NR_userfaultfd,
	__NR_open_by_handle_at, __NR_lookup_dcookie, __NR_vhangup, __NR_syslog,
	428 /* open_tree */, 429 /* move_mount */, 430 /* fsopen */, 431 /* fsconfig */,
	432 /* fsmount */, 433 /* fspick */, 442 /* mount_setattr */, 425 /* io_uring_setup */,
	426 /* io_uring_enter */, 427 /* io_uring_register */, 443 /* quotactl_fd */,
	467 /* open_tree_attr (Linux 6.15) */,
};

static const unsigned denied_i386[] = {
	21 /* mount */, 22 /* umount */, 52 /* umount2 */, 217 /* pivot_root */, 61 /* chroot */,
	346 /* setns */, 288 /* keyctl */, 286 /* add_key */, 287 /* request_key */, 357 /* bpf */,
	336 /* perf_event_open */, 26 /* ptrace */, 347 /* process_vm_readv */,
	348 /* process_vm_writev */, 128 /* init_module */, 350 /* finit_module */,
	129 /* delete_module */, 283 /* kexec_load */, 88 /* reboot */, 87 /* swapon */,
	115 /* swapoff */, 51 /* acct */, 131 /* quotactl */, 110 /* iopl */, 101 /* ioperm */,
	374 /* userfaultfd */, 342 /* open_by_handle_at */, 253 /* lookup_dcookie */,
	111 /* vhangup */, 103 /* syslog */, 428, 429, 430, 431, 432, 433, 442, 425, 426, 427, 443,
	467,
};

/* Per-ABI numbers of the calls whose arguments are looked at. */
struct abi {
	unsigned arch, unshare, clone, clone3, ioctl, personality;
	const unsigned *denied;
	size_t n_denied;
};

static const struct abi abis[] = {
	{ AUDIT_ARCH_X86_64, __NR_unshare, __NR_clone, 435, __NR_ioctl, __NR_personality,
	  denied_x86_64, ARRAY_SIZE(denied_x86_64) },
	{ AUDIT_ARCH_I386, 310, 120, 435, 54, 136, denied_i386, ARRAY_SIZE(denied_i386) },
};

#define NEW_NAMESPACES                                                                   \
	(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWUTS |        \
	 CLONE_NEWIPC | CLONE_NEWCGROUP | 0x80 /* CLONE_NEWTIME */)
#define X32_BIT 0x40000000u
#define MAX_INSNS 256

#define LOAD(field) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, field))
#define ARG_LO(i) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[i]))
#define RET(v) BPF_STMT(BPF_RET | BPF_K, (v))
#define DENY SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)

struct prog {
	struct sock_filter v[MAX_INSNS];
	unsigned n;
};

static void emit(struct prog *p, struct sock_filter f)
{
	if (p->n < MAX_INSNS)
		p->v[p->n++] = f;
}

/* If the syscall number (in A) is `nr`, return `ret`; else fall through. */
static void deny_nr(struct prog *p, unsigned nr, unsigned ret)
{
	emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 1));
	emit(p, (struct sock_filter)RET(ret));
}

/* If the syscall is `nr` and (args[arg] & mask) != 0, EPERM; A holds the number again after. */
static void deny_flags(struct prog *p, unsigned nr, unsigned arg, unsigned mask)
{
	emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 3));
	emit(p, (struct sock_filter)ARG_LO(arg));
	emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, mask, 0, 1));
	emit(p, (struct sock_filter)RET(DENY));
	emit(p, (struct sock_filter)LOAD(nr));
}

/* ioctl(fd, TIOCSTI or TIOCLINUX): typing into or poking the controlling terminal. */
static void deny_tty(struct prog *p, unsigned nr)
{
	emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 5));
	emit(p, (struct sock_filter)ARG_LO(1));
	emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TIOCSTI, 1, 0));
	emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TIOCLINUX, 0, 1));
	emit(p, (struct sock_filter)RET(DENY));
	emit(p, (struct sock_filter)LOAD(nr));
}

/* personality(): only PER_LINUX, PER_LINUX32 and the query 0xffffffff (as flatpak). */
static void allow_personalities(struct prog *p, unsigned nr)
{
	emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 6));
	emit(p, (struct sock_filter)ARG_LO(0));
	emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 3, 0));
	emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 8, 2, 0));
	emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0xffffffffu, 1, 0));
	emit(p, (struct sock_filter)RET(DENY));
	emit(p, (struct sock_filter)LOAD(nr));
}

static void emit_abi(struct prog *p, const struct abi *a)
{
	size_t i;

	for (i = 0; i < a->n_denied; i++)
		deny_nr(p, a->denied[i], DENY);
	/* clone3 passes its flags in memory a filter cannot read: ENOSYS makes libc use clone. */
	deny_nr(p, a->clone3, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA));
	deny_flags(p, a->unshare, 0, NEW_NAMESPACES);
	deny_flags(p, a->clone, 0, CLONE_NEWUSER);
	deny_tty(p, a->ioctl);
	allow_personalities(p, a->personality);
	emit(p, (struct sock_filter)RET(SECCOMP_RET_ALLOW));
}

/*
 * The program: dispatch on the audit arch, then each ABI's rules. An unknown arch (x32 comes as
 * x86-64 with bit 30 set) is refused: ENOSYS, as if the kernel lacked it.
 */
static int build(struct prog *p)
{
	size_t i;

	p->n = 0;
	emit(p, (struct sock_filter)LOAD(arch));
	for (i = 0; i < ARRAY_SIZE(abis); i++) {
		struct prog body = { .n = 0 };

		emit_abi(&body, &abis[i]);
		if (body.n + 3 > 255 || p->n + body.n + 4 >= MAX_INSNS)
			return -E2BIG;
		/* Another arch: skip this block (A still holds the arch for the next test). */
		emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, abis[i].arch, 0,
						     (unsigned char)(body.n + 3)));
		emit(p, (struct sock_filter)LOAD(nr));
		emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, X32_BIT, 0, 1));
		emit(p, (struct sock_filter)RET(SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)));
		for (unsigned k = 0; k < body.n; k++)
			emit(p, body.v[k]);
	}
	emit(p, (struct sock_filter)RET(SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)));
	return p->n < MAX_INSNS ? 0 : -E2BIG;
}

static int drop_caps(void)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(dropped_caps); i++)
		if (prctl(PR_CAPBSET_DROP, dropped_caps[i], 0, 0, 0) < 0 && errno != EINVAL)
			return -errno;
	/* No ambient capabilities survive into what is exec'd. */
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return -errno;
	return 0;
}

int seccomp_lockdown(void)
{
#if defined(__x86_64__)
	static struct prog p; /* static: no allocation or large stack between fork and exec */
	struct sock_fprog fp;
	int ret = drop_caps();

	if (ret)
		return ret;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	ret = build(&p);
	if (ret)
		return ret;
	fp.len = (unsigned short)p.n;
	fp.filter = p.v;
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp, 0, 0) < 0)
		return -errno;
	return 0;
#else
	return -ENOTSUP;
#endif
}
