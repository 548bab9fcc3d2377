/*
 * The boot configuration's texts, in the exact bytes the Debian tools that own them on the device
 * write: u-boot-menu 4.2's u-boot-update (extlinux.conf), systemd 252's kernel-install
 * (90-loaderentry.install: the BLS entry) and bootctl (loader.conf). Were ours to differ, the
 * first kernel upgrade on the device would silently rewrite the boot menu differently.
 */
#include "bootcfg.h"

#include <stdlib.h>
#include <string.h>

#include "envfile.h"
#include "recipe/fstype.h"
#include "recipe/partuuid.h"

static size_t root_index(const struct recipe *r)
{
	size_t i;

	for (i = 0; i < r->disk.n_partitions; i++)
		if (r->disk.partitions[i].contents == PART_ROOT)
			return i;
	return 0; /* the recipe makes sure there is one */
}

int bootcfg_verity_root(const struct recipe *r)
{
	return recipe_disk_root_verity(r);
}

void bootcfg_root(const struct recipe *r, int64_t sde, const char *roothash, struct buf *out)
{
	int v = bootcfg_verity_root(r);
	char id[37];

	partuuid_partition(r, sde, root_index(r), id);
	if (v < 0) {
		buf_addf(out, "PARTUUID=%s", id);
		return;
	}
	buf_addf(out, "/dev/mapper/root rootfstype=%s mkimage.verity_data=PARTUUID=%s",
		 fstype_get(r->disk.partitions[root_index(r)].format)->name, id);
	partuuid_partition(r, sde, (size_t)v, id);
	buf_addf(out, " mkimage.verity_hash=PARTUUID=%s", id);
	if (roothash)
		buf_addf(out, " mkimage.roothash=%s", roothash);
}

void bootcfg_parameters(const struct recipe *r, struct buf *out)
{
	const char *cmdline = r->disk.cmdline ? r->disk.cmdline : "";

	buf_adds(out, "");
	if (r->disk.console)
		buf_addf(out, "console=%s%s", r->disk.console, *cmdline ? " " : "");
	buf_adds(out, cmdline);
}

/*
 * fstab(5)'s octal escapes (libmount reads back any \ooo) for the characters that would split a
 * field and for every control byte, so that mount reads exactly the recipe's path.
 */
static void fstab_field(struct buf *out, const char *s)
{
	for (; *s; s++) {
		if ((unsigned char)*s <= ' ' || *s == '\\' || *s == 0x7f)
			buf_addf(out, "\\%03o", (unsigned char)*s);
		else
			buf_add(out, s, 1);
	}
}

static int by_path(const void *a, const void *b)
{
	const struct recipe_partition *pa = *(const struct recipe_partition *const *)a;
	const struct recipe_partition *pb = *(const struct recipe_partition *const *)b;

	return strcmp(pa->path, pb->path); /* "boot" < "boot/efi": a parent before its children */
}

void bootcfg_fstab(const struct recipe *r, int64_t sde, struct buf *out)
{
	const struct recipe_partition **sub = xcalloc(r->disk.n_partitions + 1, sizeof(*sub));
	enum partition_format rf = r->disk.partitions[root_index(r)].format;
	const struct fstype *root = fstype_get(rf), *fs;
	size_t i, n = 0;
	char id[37];
	int tmp = 0;

	buf_adds(out, "# /etc/fstab: static file system information (written by mkimage).\n"
		      "# <file system>\t<mount point>\t<type>\t<options>\t<dump>\t<pass>\n");
	partuuid_partition(r, sde, root_index(r), id);
	if (bootcfg_verity_root(r) >= 0)
		buf_adds(out, "/dev/mapper/root");
	else if (recipe_update_boots(r))
		buf_adds(out, "/dev/root"); /* whichever slot booted: root= names it */
	else
		buf_addf(out, "PARTUUID=%s", id);
	buf_addf(out, "\t/\t%s\t%s\t0\t%d\n", root->name, root->fstab_root, fstype_pass(rf, 1));
	for (i = 0; i < r->disk.n_partitions; i++)
		if (r->disk.partitions[i].contents == PART_SUBTREE &&
		    fstype_get(r->disk.partitions[i].format)->tree)
			sub[n++] = &r->disk.partitions[i];
	qsort(sub, n, sizeof(*sub), by_path);
	for (i = 0; i < n; i++)
		tmp |= !strcmp(sub[i]->path, "tmp");
	for (i = 0; i < n; i++) {
		fs = fstype_get(sub[i]->format);
		partuuid_partition(r, sde, (size_t)(sub[i] - r->disk.partitions), id);
		if (bootcfg_abv_is_slot_boot(r, (size_t)(sub[i] - r->disk.partitions)))
			bootcfg_abv_fstab_device(out);
		else
			buf_addf(out, "PARTUUID=%s", id);
		buf_adds(out, "\t/");
		fstab_field(out, sub[i]->path);
		buf_addf(out, "\t%s\t%s\t0\t%d\n", fs->name, fs->fstab,
			 fstype_pass(sub[i]->format, 0));
	}
	/* a read-only root has no writable /tmp of its own (Debian does not mount one) */
	if (root->read_only && !tmp)
		buf_adds(out, "tmpfs\t/tmp\ttmpfs\tmode=1777,nosuid,nodev\t0\t0\n");
	free(sub);
}

/* The recovery entry's parameters: u-boot-update's `sed -e 's| quiet||'` (the first only). */
static void without_quiet(const char *params, struct buf *out)
{
	const char *q = strstr(params, " quiet");

	if (!q) {
		buf_adds(out, params);
		return;
	}
	buf_add(out, params, (size_t)(q - params));
	buf_adds(out, q + 6);
}

static void extlinux_label(const struct bootcfg_extlinux *x, size_t i, int rescue, struct buf *out)
{
	const struct bootcfg_kernel *k = &x->kernels[i];
	const char *params = *x->params ? x->params : "ro quiet";

	buf_addf(out, "\n\nlabel l%zu%s\n\tmenu label %s %s%s\n\tlinux %s/%s\n\t", i,
		 rescue ? "r" : "", x->menu_label, k->version, rescue ? " (rescue target)" : "",
		 x->boot_dir, k->image);
	if (k->initrd)
		buf_addf(out, "initrd %s/%s", x->boot_dir, k->initrd);
	buf_addf(out, "\n\t%s\n\t", k->fdt ? k->fdt : "");
	if (!rescue) {
		/* its fdtoverlays line is there, empty or not, in the default entry only */
		if (x->overlays)
			buf_addf(out, "fdtoverlays %s", x->overlays);
		buf_addf(out, "\n\tappend %s %s", x->root, params);
		return;
	}
	buf_addf(out, "append %s ", x->root);
	without_quiet(params, out);
	buf_adds(out, " single\n\t");
}

void bootcfg_extlinux_conf(const struct bootcfg_extlinux *x, struct buf *out)
{
	size_t i;

	buf_addf(out, "## /boot/extlinux/extlinux.conf\n##\n## IMPORTANT WARNING\n##\n"
		      "## The configuration of this file is generated automatically.\n"
		      "## Do not edit this file manually, use: u-boot-update\n\n"
		      "default %s\nmenu title U-Boot menu\nprompt 0\ntimeout 50\n", x->def);
	for (i = 0; i < x->n_kernels; i++) {
		extlinux_label(x, i, 0, out);
		extlinux_label(x, i, 1, out);
	}
	buf_adds(out, "\n"); /* the echo that writes it */
}

int bootcfg_default_u_boot(const char *old, size_t len, const char *const *kv, struct buf *out)
{
	return envfile_set(old, len, "/etc/default/u-boot",
			   "## /etc/default/u-boot - configuration file for u-boot-update(8)\n", kv,
			   out);
}

int bootcfg_fat_cmdline(const char *old, const char *root, const char *console, struct buf *out)
{
	const char *p = old, *end;

	while (*p && (strncmp(p, "root=", 5) || (p > old && p[-1] != ' ')))
		p++;
	if (!*p)
		return -1;
	end = p + strcspn(p, " \n");
	buf_adds(out, "");
	if (console)
		buf_addf(out, " console=%s", console);
	buf_addf(out, " root=%s%s", root, end);
	return 0;
}

int bootcfg_fat_defaults(const char *old, size_t len, const char *file, const char *const *kv,
			 struct buf *out)
{
	char *name = xasprintf("/%s", file), *head = xasprintf("# %s (written by mkimage)\n", name);
	int ret = envfile_set(old, len, name, head, kv, out);

	free(name);
	free(head);
	return ret;
}

/*
 * linux-base's version_split: a run of digits, or an optional '-' and what follows up to the
 * next digit or '-'; the string ends with one empty part (Perl's last empty match), which both
 * sides share. Returns the part's length; *num says it is digits.
 */
static size_t version_part(const char *s, int *num)
{
	size_t n = 0;

	*num = *s >= '0' && *s <= '9';
	if (*num) {
		while (s[n] >= '0' && s[n] <= '9')
			n++;
		return n;
	}
	if (s[n] == '-')
		n++;
	while (s[n] && s[n] != '-' && !(s[n] >= '0' && s[n] <= '9'))
		n++;
	return n;
}

static int is_pre(const char *s, size_t n)
{
	return (n == 3 && !strncmp(s, "-rc", 3)) || (n == 6 && !strncmp(s, "-trunk", 6));
}

static int part_cmp(const char *a, size_t na, int numa, const char *b, size_t nb, int numb)
{
	int c;

	if (numa && numb) {
		while (na > 1 && *a == '0')
			a++, na--;
		while (nb > 1 && *b == '0')
			b++, nb--;
		if (na != nb)
			return na < nb ? -1 : 1;
		return strncmp(a, b, na);
	}
	c = strncmp(a, b, na < nb ? na : nb);
	return c ? c : (na > nb) - (na < nb);
}

int bootcfg_version_cmp(const char *a, const char *b)
{
	int ea = 0, eb = 0, numa, numb, c;
	size_t na, nb;

	for (;;) {
		/* past the final empty part, a side has no more ("end of string") */
		na = ea ? 0 : version_part(a, &numa);
		nb = eb ? 0 : version_part(b, &numb);
		if ((!ea && is_pre(a, na)) || (!eb && is_pre(b, nb))) {
			if (eb || !is_pre(b, nb))
				return -1;
			if (ea || !is_pre(a, na))
				return 1;
		}
		if (ea || eb)
			return ea && eb ? 0 : ea ? -1 : 1;
		c = part_cmp(a, na, numa, b, nb, numb);
		if (c)
			return c < 0 ? -1 : 1;
		ea = !*a && !na;
		eb = !*b && !nb;
		a += na;
		b += nb;
	}
}

void bootcfg_loader_conf(const char *token, struct buf *out)
{
	buf_addf(out, "timeout 0\ndefault %s-*\n", token);
}

void bootcfg_bls_entry(const struct bootcfg_entry *e, struct buf *out)
{
	const char *dir = e->dir ? e->dir : e->version;

	buf_adds(out, "title      ");
	if (e->title && *e->title)
		buf_adds(out, e->title);
	else
		buf_addf(out, "Linux %s", e->version);
	buf_addf(out, "\nversion    %s\n", e->version);
	if (e->sort_key && *e->sort_key)
		buf_addf(out, "sort-key   %s\n", e->sort_key);
	buf_addf(out, "options    %s\nlinux      /%s/%s/linux\n", e->options, e->token, dir);
	if (e->initrd)
		buf_addf(out, "initrd     /%s/%s/%s\n", e->token, dir, e->initrd);
}

void bootcfg_squeeze(const char *s, struct buf *out)
{
	int blank = 0;

	buf_adds(out, "");
	for (; *s; s++) {
		if (*s == ' ' || *s == '\t' || *s == '\n') {
			blank = 1;
			continue;
		}
		if (blank) /* a leading run too: tr -s keeps one blank there */
			buf_adds(out, " ");
		blank = 0;
		buf_add(out, s, 1);
	}
}
