/*
 * Whether this kernel executes 32-bit x86 programs. An amd64 CPU can, but a kernel built or
 * booted without IA32 emulation (ia32_emulation=0, some hypervisors) answers ENOEXEC; such a
 * host must emulate i386 like any foreign architecture instead of failing at configure time.
 */
#ifndef MKI_EXECPROBE_H
#define MKI_EXECPROBE_H

/**
 * 1 when a minimal static i386 program (built in memory, run from a memfd) exits 0; 0 when the
 * kernel refuses it as an unknown format (ENOEXEC) or it does not run; 1 as well when the probe
 * itself cannot be made (no memfd, exec from memfd forbidden), so a kernel that runs i386 is never
 * needlessly emulated - the sandbox's libc probe then still fails loudly. Computed once.
 */
int execprobe_ia32(void);

#endif
