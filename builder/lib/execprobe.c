#include "execprobe.h"
#include "err.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "execprobe_internal.h"
#include "log.h"

#define LOAD_ADDR 0x08048000u
#define EHDR_SIZE 52u
#define PHDR_SIZE 32u
#define CODE_OFF (EHDR_SIZE + PHDR_SIZE)

/* mov eax, 1 (exit); xor ebx, ebx (status 0); int 0x80 */
static const unsigned char code[] = { 0xb8, 0x01, 0x00, 0x00, 0x00, 0x31, 0xdb, 0xcd, 0x80 };
static unsigned char image[CODE_OFF + sizeof(code)];

static void put16(unsigned char *p, uint16_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
}

static void put32(unsigned char *p, uint32_t v)
{
	put16(p, (uint16_t)v);
	put16(p + 2, (uint16_t)(v >> 16));
}

/* An ELF32 executable of one PT_LOAD segment (the whole file, R+X) whose entry is `code`. */
static void build_image(void)
{
	static const unsigned char ident[] = { 0x7f, 'E', 'L', 'F', 1, 1, 1, 0 };
	unsigned char *ph = image + EHDR_SIZE;

	memset(image, 0, sizeof(image));
	memcpy(image, ident, sizeof(ident));
	put16(image + 16, 2);			   /* ET_EXEC */
	put16(image + 18, 3);			   /* EM_386 */
	put32(image + 20, 1);			   /* EV_CURRENT */
	put32(image + 24, LOAD_ADDR + CODE_OFF);   /* e_entry */
	put32(image + 28, EHDR_SIZE);		   /* e_phoff */
	put16(image + 40, EHDR_SIZE);		   /* e_ehsize */
	put16(image + 42, PHDR_SIZE);		   /* e_phentsize */
	put16(image + 44, 1);			   /* e_phnum */
	put32(ph, 1);				   /* PT_LOAD */
	put32(ph + 8, LOAD_ADDR);		   /* p_vaddr */
	put32(ph + 12, LOAD_ADDR);		   /* p_paddr */
	put32(ph + 16, sizeof(image));		   /* p_filesz */
	put32(ph + 20, sizeof(image));		   /* p_memsz */
	put32(ph + 24, 5);			   /* PF_R | PF_X */
	put32(ph + 28, 0x1000);			   /* p_align */
	memcpy(image + CODE_OFF, code, sizeof(code));
}

const unsigned char *execprobe_ia32_image(unsigned *len)
{
	build_image();
	*len = sizeof(image);
	return image;
}

/* The child reports a failed exec by exiting with 200 + errno class: ENOEXEC or anything else. */
#define EXIT_ENOEXEC 201
#define EXIT_OTHER 202

static int run_probe(int fd)
{
	static char name[] = "mkimage-ia32-probe";
	char *const argv[] = { name, NULL };
	char *const envp[] = { NULL };
	int wst = 0;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		signal(SIGPIPE, SIG_DFL);
		fexecve(fd, argv, envp);
		_exit(errno == ENOEXEC ? EXIT_ENOEXEC : EXIT_OTHER);
	}
	while (waitpid(pid, &wst, 0) < 0) {
		if (errno != EINTR)
			return -errno;
		if (err_interrupted())
			kill(pid, SIGKILL); /* reaped by the next waitpid() */
	}
	if (WIFEXITED(wst) && WEXITSTATUS(wst) == 0)
		return 1;
	if (WIFEXITED(wst) && WEXITSTATUS(wst) == EXIT_OTHER)
		return -EACCES;
	return 0;
}

static int probe(void)
{
	unsigned len;
	const unsigned char *img = execprobe_ia32_image(&len);
	int fd = memfd_create("mkimage-ia32-probe", MFD_CLOEXEC), ret;

	if (fd < 0) {
		log_debug("ia32 probe: no memfd (%s); assuming the kernel runs i386", strerror(errno));
		return 1;
	}
	if (write(fd, img, len) != (ssize_t)len) {
		close(fd);
		return 1;
	}
	ret = run_probe(fd);
	close(fd);
	if (ret < 0) {
		log_debug("ia32 probe could not run (%s); assuming the kernel runs i386",
			  strerror(-ret));
		return 1;
	}
	return ret;
}

int execprobe_ia32(void)
{
	static int result = -1;

	if (result < 0) {
		result = probe();
		if (!result)
			log_info("this kernel does not execute 32-bit x86 programs (no IA32 "
				 "emulation): i386 runs through qemu-i386");
	}
	return result;
}
