/*
 * dpkg's native architecture for a twin (accel_internal.h). dpkg has its architecture built in:
 * ARCHITECTURE, one string literal in libdpkg's arch.c (the native entry of the architecture
 * list), and the release text --version prints, "VERSION (ARCH)". Nothing else in dpkg's source
 * names it, so a host build whose two strings name the target's architecture behaves as the
 * target's build of the same version: which packages are foreign, the names dpkg-query prints,
 * --print-architecture, the qualifiers in the database. dpkg 1.22.16's "arch-native" file does
 * the same for a --root tree only, not for dpkg run inside the tree as the scripts run it.
 *
 * The edit is made only where it is unambiguous: every occurrence of the host's name in the file
 * must be one of those two strings, whole, in read-only data.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "accel_internal.h"
#include "lib/x.h"

#define MAX_PROGRAM (64u << 20)

struct image {
	unsigned char *p;
	size_t n;
	const ElfW(Shdr) *sh; /* inside p, checked against n */
	size_t nsh;
};

static int load(int fd, struct image *im)
{
	struct stat sb;
	const ElfW(Ehdr) *eh;
	ssize_t r;

	if (fstat(fd, &sb) < 0)
		return -errno;
	if (!S_ISREG(sb.st_mode) || sb.st_size < (off_t)sizeof(*eh) || sb.st_size > MAX_PROGRAM)
		return -ENOEXEC;
	im->n = (size_t)sb.st_size;
	im->p = xmalloc(im->n);
	r = pread(fd, im->p, im->n, 0);
	if (r != (ssize_t)im->n)
		return r < 0 ? -errno : -EIO;
	eh = (const ElfW(Ehdr) *)im->p;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_shentsize != sizeof(ElfW(Shdr)) ||
	    eh->e_shoff > im->n || eh->e_shnum > (im->n - eh->e_shoff) / sizeof(ElfW(Shdr)))
		return -ENOEXEC;
	im->sh = (const ElfW(Shdr) *)(im->p + eh->e_shoff);
	im->nsh = eh->e_shnum;
	return 0;
}

/* Whether [off, off + len) lies in a section of constant data (.rodata), not code or variables. */
static int in_rodata(const struct image *im, size_t off, size_t len)
{
	for (size_t i = 0; i < im->nsh; i++) {
		const ElfW(Shdr) *s = &im->sh[i];

		if (s->sh_type == SHT_PROGBITS && (s->sh_flags & SHF_ALLOC) &&
		    !(s->sh_flags & (SHF_WRITE | SHF_EXECINSTR)) && off >= s->sh_offset &&
		    s->sh_offset <= im->n && off + len <= s->sh_offset + s->sh_size &&
		    s->sh_size <= im->n - s->sh_offset)
			return 1;
	}
	return 0;
}

enum kind { NOT_OURS, NATIVE, RELEASE };

/*
 * What the occurrence of the host's name at `off` is: the whole string "ARCH" (the native entry)
 * or the end of "VERSION (ARCH)" (the release text).
 */
static enum kind classify(const struct image *im, size_t off, size_t len)
{
	const unsigned char *p = im->p;

	if (!in_rodata(im, off, len) || off < 2 || off + len + 1 >= im->n)
		return NOT_OURS;
	if (p[off - 1] == 0 && p[off + len] == 0)
		return NATIVE;
	if (p[off - 2] == ' ' && p[off - 1] == '(' && p[off + len] == ')' && p[off + len + 1] == 0)
		return RELEASE;
	return NOT_OURS;
}

/* Each occurrence classified; at most one of each kind. 0 or -EILSEQ with `*why` set. */
static int find_all(const struct image *im, const char *host, size_t at[2], const char **why)
{
	size_t len = strlen(host), off = 0;
	const unsigned char *q;

	at[0] = at[1] = SIZE_MAX;
	while (off < im->n && (q = memmem(im->p + off, im->n - off, host, len))) {
		size_t o = (size_t)(q - im->p);
		enum kind k = classify(im, o, len);

		if (k == NOT_OURS) {
			*why = "names the host's architecture outside dpkg's two strings";
			return -EILSEQ;
		}
		if (at[k - 1] != SIZE_MAX) {
			*why = "names the host's architecture more than once";
			return -EILSEQ;
		}
		at[k - 1] = o;
		off = o + len;
	}
	return 0;
}

/*
 * Write `arch` over the host's name at `off`. The release text keeps its ")": "(armhf)" stays
 * "(armhf)", a shorter "(i386)" ends at a second NUL.
 */
static int rewrite(int fd, struct image *im, size_t off, size_t len, const char *arch,
		   enum kind k)
{
	size_t n = strlen(arch);
	unsigned char *p = im->p + off;

	memset(p, 0, len);
	memcpy(p, arch, n);
	if (k == RELEASE && n < len) {
		p[n] = ')';
		p[len] = 0;
	}
	return pwrite(fd, p, len + 1, (off_t)off) == (ssize_t)(len + 1) ? 0 : -EIO;
}

int accel_retarget(const char *path, const char *host, const char *arch, const char **why)
{
	int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC), ret, n = 0;
	struct image im = { 0 };
	size_t at[2], len = strlen(host);

	*why = NULL;
	if (strlen(arch) > len) {
		*why = "the target's architecture name is longer than the host's";
		ret = -ENAMETOOLONG;
	} else
		ret = fd < 0 ? -errno : load(fd, &im);
	if (!ret)
		ret = find_all(&im, host, at, why);
	for (enum kind k = NATIVE; !ret && k <= RELEASE; k++)
		if (at[k - 1] != SIZE_MAX) {
			ret = rewrite(fd, &im, at[k - 1], len, arch, k);
			n++;
		}
	if (fd >= 0)
		close(fd);
	free(im.p);
	if (ret && !*why)
		*why = strerror(-ret);
	return ret ? ret : n;
}
