/*
 * The A/B boot selection of an update-ready disk booted by systemd-boot (recipe_update_boots()
 * with disk.bootloader = "systemd-boot"). systemd-boot reads kernels only from the ESP, so the
 * ESP is where the selection lives, in systemd-boot's own terms (the Boot Loader Specification
 * and systemd's Automatic Boot Assessment):
 *
 * - one type #1 entry per slot, loader/entries/TOKEN-A.conf and TOKEN-B.conf, booting the
 *   slot's kernel and initrd from TOKEN/A/ and TOKEN/B/ with root=PARTUUID= of that slot and
 *   rauc.slot=A or B;
 * - a new slot's entry carries a boot counter in its name (TOKEN-B+3.conf): systemd-boot takes
 *   one try at each boot (TOKEN-B+2-1.conf) and sorts an entry with none left after all others,
 *   so loader.conf's `default TOKEN-*` then picks the other slot: the fallback needs nothing but
 *   the firmware and systemd-boot;
 * - which slot boots first is the entries' sort-key (TOKEN-ab-1 before TOKEN-ab-2), which
 *   systemd-boot compares before anything else but the counter;
 * - RAUC's custom backend (/usr/lib/mkimage/rauc-ab-boot, written here) maps RAUC's calls onto
 *   those files: set-primary copies the slot's newest /boot/vmlinuz-* and its initrd to the ESP
 *   and writes its entry with fresh tries; set-state good drops the counter (what
 *   systemd-bless-boot does); bad sets no tries left. The mark-good unit (bootcfg_ab.c) calls it
 *   once boot-complete.target is reached.
 *
 * The factory disk holds slot A's entry without a counter (a factory image has nothing to fall
 * back to) and no entry for the empty slot B.
 */
#include "bootcfg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/str.h"
#include "recipe/partuuid.h"

#define BACKEND "usr/lib/mkimage/rauc-ab-boot"
#define DROPIN "etc/systemd/system/mkimage-mark-good.service.d/systemd-boot.conf"

void bootcfg_ab_sdboot_options(const struct recipe *r, int64_t sde, size_t k, struct buf *out)
{
	const char *cmdline = r->disk.cmdline ? r->disk.cmdline : "";
	struct buf line = { 0 };
	size_t slot[2];
	char id[37];

	recipe_update_slots(r, slot, 2);
	partuuid_partition(r, sde, slot[k], id);
	buf_addf(&line, "root=PARTUUID=%s ", id);
	bootcfg_parameters(r, &line);
	buf_addf(&line, " rauc.slot=%c", (char)('A' + k));
	/* a kernel or initramfs panic reboots, so that systemd-boot counts the try */
	if (!strstr(cmdline, "panic="))
		buf_adds(&line, " panic=10");
	bootcfg_squeeze(line.p, out);
	buf_release(&line);
}

/* `s` in single quotes for sh. */
static void sh_quote(const char *s, struct buf *out)
{
	buf_adds(out, "'");
	for (; *s; s++)
		if (*s == '\'')
			buf_adds(out, "'\\''");
		else
			buf_add(out, s, 1);
	buf_adds(out, "'");
}

/*
 * The backend's body; its settings (esp, token, attempts, part_X, options_X) come first. An
 * entry's name is TOKEN-S.conf (good) or TOKEN-S+LEFT[-DONE].conf (systemd-boot's counter).
 */
static const char backend_body[] =
	"entries=$esp/loader/entries\n"
	"die() { echo \"rauc-ab-boot: $*\" >&2; exit 1; }\n"
	"slot() {\n"
	"\tcase ${1:-} in A | B) ;; *) die \"no slot '${1:-}': the bootnames are A and B\" ;; esac\n"
	"}\n"
	"# The entry of slot $1, or nothing.\n"
	"entry() {\n"
	"\tfor f in \"$entries/$token-$1.conf\" \"$entries/$token-$1+\"*.conf; do\n"
	"\t\tif [ -f \"$f\" ] && [ ! -L \"$f\" ]; then echo \"$f\"; return 0; fi\n"
	"\tdone\n"
	"}\n"
	"# good: an entry without a counter or with tries left; bad: none left, or no entry.\n"
	"state() {\n"
	"\te=$(entry \"$1\")\n"
	"\tn=${e##*/} n=${n%.conf}\n"
	"\tcase $n in\n"
	"\t'') echo bad ;;\n"
	"\t*+[1-9]*) echo good ;;\n"
	"\t*+*) echo bad ;;\n"
	"\t*) echo good ;;\n"
	"\tesac\n"
	"}\n"
	"# The rank in the entry's sort-key (TOKEN-ab-N): the lower boots first.\n"
	"rank() {\n"
	"\tk=$(sed -n 's/^sort-key[[:space:]]*//p' \"$1\" | tail -n 1)\n"
	"\tcase ${k##*-} in [1-9]) echo \"${k##*-}\" ;; *) echo 9 ;; esac\n"
	"}\n"
	"# FILE from stdin, through FILE.new, on disk before and after the rename.\n"
	"put() {\n"
	"\tcat >\"$1.new\"\n"
	"\tsync \"$1.new\"\n"
	"\tmv -f \"$1.new\" \"$1\"\n"
	"\tsync \"$entries\"\n"
	"}\n"
	"set_rank() {\n"
	"\te=$(entry \"$1\")\n"
	"\t[ -n \"$e\" ] || return 0\n"
	"\tsed \"s/^sort-key[[:space:]].*/sort-key   $token-ab-$2/\" \"$e\" | put \"$e\"\n"
	"}\n"
	"current() {\n"
	"\tfor w in $(cat /proc/cmdline); do\n"
	"\t\tcase $w in rauc.slot=A | rauc.slot=B) echo \"${w#rauc.slot=}\"; return 0 ;; esac\n"
	"\tdone\n"
	"\tdie \"the kernel command line names no rauc.slot\"\n"
	"}\n"
	"# os-release's PRETTY_NAME of the slot mounted at $1, printable ASCII only.\n"
	"pretty() {\n"
	"\tfor f in \"$1/etc/os-release\" \"$1/usr/lib/os-release\"; do\n"
	"\t\tif [ -f \"$f\" ] && [ ! -L \"$f\" ]; then\n"
	"\t\t\tsed -n 's/^PRETTY_NAME=//p' \"$f\" | head -n 1 | tr -cd ' -~' |\n"
	"\t\t\t\tsed \"s/^[\\\"']//; s/[\\\"']\\$//\" | cut -c 1-100\n"
	"\t\t\treturn 0\n"
	"\t\tfi\n"
	"\tdone\n"
	"}\n"
	"# The slot's newest kernel and its initrd onto the ESP, its entry first with fresh tries.\n"
	"set_primary() {\n"
	"\teval \"part=\\$part_$1 options=\\$options_$1\"\n"
	"\tother=A\n"
	"\t[ \"$1\" = B ] || other=B\n"
	"\troot=/\n"
	"\tif [ \"$(current 2>/dev/null || :)\" != \"$1\" ]; then\n"
	"\t\troot=$(mktemp -d /run/rauc-ab-boot.XXXXXX)\n"
	"\t\ttrap 'umount \"$root\" 2>/dev/null; rmdir \"$root\"' EXIT\n"
	"\t\tmount -o ro \"/dev/disk/by-partuuid/$part\" \"$root\" ||\n"
	"\t\t\tdie \"cannot mount slot $1 (/dev/disk/by-partuuid/$part)\"\n"
	"\tfi\n"
	"\t[ ! -L \"$root/boot\" ] || die \"slot $1: /boot is a symbolic link; no kernel is read\"\n"
	"\tver=$(ls \"$root/boot\" | sed -n 's/^vmlinuz-\\([A-Za-z0-9._+~-]*\\)$/\\1/p' | sort -V |\n"
	"\t\ttail -n 1)\n"
	"\tk=$root/boot/vmlinuz-$ver i=$root/boot/initrd.img-$ver\n"
	"\tif [ -z \"$ver\" ] || [ -L \"$k\" ] || [ ! -f \"$k\" ]; then\n"
	"\t\tdie \"slot $1 has no kernel /boot/vmlinuz-*: it cannot boot\"\n"
	"\tfi\n"
	"\tif [ -L \"$i\" ] || [ ! -f \"$i\" ]; then i=; fi\n"
	"\ttitle=$(pretty \"$root\")\n"
	"\td=$esp/$token/$1\n"
	"\trm -rf \"$d.new\"\n"
	"\tmkdir -p \"$d.new\"\n"
	"\tcp \"$k\" \"$d.new/linux\"\n"
	"\t[ -z \"$i\" ] || cp \"$i\" \"$d.new/initrd.img-$ver\"\n"
	"\tsync \"$d.new\"/*\n"
	"\tset_state \"$1\" bad\n"
	"\trm -rf \"$d\"\n"
	"\tmv \"$d.new\" \"$d\"\n"
	"\tset_rank \"$other\" 2\n"
	"\tfor f in \"$entries/$token-$1.conf\" \"$entries/$token-$1+\"*.conf; do\n"
	"\t\t[ ! -e \"$f\" ] || rm -f \"$f\"\n"
	"\tdone\n"
	"\t{\n"
	"\t\tprintf 'title      %s (slot %s)\\n' \"${title:-Linux $ver}\" \"$1\"\n"
	"\t\tprintf 'version    %s\\nsort-key   %s-ab-1\\n' \"$ver\" \"$token\"\n"
	"\t\tprintf 'options    %s\\nlinux      /%s/%s/linux\\n' \"$options\" \"$token\" \"$1\"\n"
	"\t\t[ -z \"$i\" ] || printf 'initrd     /%s/%s/initrd.img-%s\\n' \"$token\" \"$1\" \"$ver\"\n"
	"\t} | put \"$entries/$token-$1+$attempts.conf\"\n"
	"}\n"
	"set_state() {\n"
	"\te=$(entry \"$1\")\n"
	"\tcase $2 in\n"
	"\tgood)\n"
	"\t\t[ -n \"$e\" ] || die \"slot $1 has no boot entry on the ESP: it cannot be good\"\n"
	"\t\tcase ${e##*/} in *+*) mv -f \"$e\" \"$entries/$token-$1.conf\" && sync \"$entries\" ;; esac ;;\n"
	"\tbad)\n"
	"\t\tcase ${e##*/} in\n"
	"\t\t'' | \"$token-$1+0.conf\" | \"$token-$1+0-\"*) ;;\n"
	"\t\t*) mv -f \"$e\" \"$entries/$token-$1+0.conf\" && sync \"$entries\" ;;\n"
	"\t\tesac ;;\n"
	"\t*) die \"no state '$2': good or bad\" ;;\n"
	"\tesac\n"
	"}\n"
	"[ -d \"$entries\" ] || die \"no $entries: the ESP is not mounted at $esp\"\n"
	"case ${1:-} in\n"
	"get-primary)\n"
	"\tbest= best_rank=10\n"
	"\tfor s in A B; do\n"
	"\t\t[ \"$(state \"$s\")\" = good ] || continue\n"
	"\t\tr=$(rank \"$(entry \"$s\")\")\n"
	"\t\tif [ \"$r\" -lt \"$best_rank\" ]; then best=$s best_rank=$r; fi\n"
	"\tdone\n"
	"\t[ -n \"$best\" ] || die \"no slot has a boot entry with tries left\"\n"
	"\techo \"$best\" ;;\n"
	"set-primary) slot \"${2:-}\"; set_primary \"$2\" ;;\n"
	"get-state) slot \"${2:-}\"; state \"$2\" ;;\n"
	"set-state) slot \"${2:-}\"; set_state \"$2\" \"${3:-}\" ;;\n"
	"get-current) current ;;\n"
	"*) die \"usage: rauc-ab-boot get-primary | set-primary S | get-state S |\" \\\n"
	"\t\"set-state S good|bad | get-current\" ;;\n"
	"esac\n";

void bootcfg_ab_sdboot_backend(const struct recipe *r, int64_t sde, const char *esp,
			       const char *token, struct buf *out)
{
	struct buf opt = { 0 };
	size_t slot[2], k;
	char id[37];

	recipe_update_slots(r, slot, 2);
	buf_adds(out, "#!/bin/sh\n"
		      "# RAUC's custom boot loader backend, written by mkimage (mkimage(7), Updates):\n"
		      "# one systemd-boot entry per slot on the ESP, with systemd-boot's boot counting.\n"
		      "set -eu\n"
		      "esp=");
	buf_addf(out, "/%s\ntoken=%s\nattempts=%u\n", esp, token, r->update.boot_attempts);
	for (k = 0; k < 2; k++) {
		partuuid_partition(r, sde, slot[k], id);
		buf_addf(out, "part_%c=%s\noptions_%c=", (char)('A' + k), id, (char)('A' + k));
		bootcfg_ab_sdboot_options(r, sde, k, &opt);
		sh_quote(opt.p, out);
		buf_adds(out, "\n");
		buf_release(&opt);
	}
	buf_adds(out, backend_body);
}

/* The ESP is mounted before mark-good asks the backend; systemd-bless-boot, if the recipe
 * installs systemd-boot, drops the counter first, and the backend finds it done. */
static const char dropin_text[] =
	"# Written by mkimage (mkimage(7), Updates): the slots' entries are on the ESP.\n"
	"[Unit]\n"
	"RequiresMountsFor=/%s\n"
	"After=systemd-bless-boot.service\n";

int bootcfg_ab_sdboot_write(struct staging_writer *w, const struct recipe *r, int64_t sde,
			    const char *esp, const char *token)
{
	struct buf b = { 0 };
	int ret;

	bootcfg_ab_sdboot_backend(r, sde, esp, token, &b);
	ret = bootcfg_ab_put(w, BACKEND, &b, 0755);
	buf_release(&b);
	buf_addf(&b, dropin_text, esp);
	if (!ret)
		ret = bootcfg_ab_put(w, DROPIN, &b, 0644);
	buf_release(&b);
	return ret;
}
