/*
 * The boot configuration step on a real tree: which packages the plan must hold, which
 * partition gets the legacy-boot attribute, extlinux and systemd-boot written where the boot
 * loaders read them (root's, 0644, the epoch as time, in the manifest), a symlink a package put
 * in the way refused, a tree without a kernel refused.
 */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "configure/bootcfg.h"
#include "lib/err.h"
#include "lib/fsutil.h"
#include "lib/log.h"
#include "recipe/partuuid.h"

#include "bootcfg_fixture.h"

START_TEST(check_plan)
{
	struct plan_entry v[2] = { { .name = n_root }, { .name = n_boot } };
	struct plan p = { .v = v, .n = 2 };
	static char menu[] = "u-boot-menu", kernel[] = "linux-image-armmp";

	log_set_level(LOG_QUIET);
	setup(DISK_BOOT_EXTLINUX, 0, 0);
	ck_assert_int_eq(bootcfg_check_plan(&p, &rec), -MKI_E_IMAGE);
	v[0].name = menu;
	ck_assert_int_eq(bootcfg_check_plan(&p, &rec), -MKI_E_IMAGE); /* no kernel */
	v[1].name = kernel;
	ck_assert_int_eq(bootcfg_check_plan(&p, &rec), 0);
	rec.disk.bootloader = DISK_BOOT_SYSTEMD_BOOT;
	ck_assert_int_eq(bootcfg_check_plan(&p, &rec), -MKI_E_IMAGE);
	rec.disk.bootloader = DISK_BOOT_NONE;
	ck_assert_int_eq(bootcfg_check_plan(&p, &rec), 0);
	teardown();
}
END_TEST

/*
 * A board's device tree: the plan must hold its loader package; U_BOOT_FDT and the `fdt` line
 * name it for each kernel that ships it, as u-boot-update writes them (the others keep fdtdir);
 * a kernel without it is refused right after unpacking.
 */
START_TEST(board_fdt)
{
	struct plan_entry v[3] = { { .name = n_root }, { .name = n_boot }, { .name = n_esp } };
	struct plan p = { .v = v, .n = 3 };
	static char menu[] = "u-boot-menu", kernel[] = "linux-image-armmp", loader[] = "u-boot-sunxi",
		    board[] = "orangepi-pc";
	struct staging s = { 0 };
	char *text;

	log_set_level(LOG_QUIET);
	setup(DISK_BOOT_EXTLINUX, 0, 0);
	rec.board = board;
	v[0].name = menu;
	v[1].name = kernel;
	ck_assert_int_eq(bootcfg_check_plan(&p, &rec), -MKI_E_IMAGE); /* no u-boot-sunxi */
	v[2].name = loader;
	ck_assert_int_eq(bootcfg_check_plan(&p, &rec), 0);

	put("usr/lib/linux-image-6.1.0-13-amd64/sun8i-h3-orangepi-pc.dtb", "the board's tree");
	put("usr/lib/linux-image-6.1.0-9-amd64/sun8i-h3-orangepi-plus.dtb", "another board's");
	s.root = dir;
	ck_assert_int_eq(bootcfg_check_kernels(&s, &rec), -MKI_E_IMAGE);
	ck_assert_int_eq(run(&s), 0);
	text = get("boot/extlinux/extlinux.conf");
	ck_assert_msg(strstr(text, "\tinitrd /boot/initrd.img-6.1.0-13-amd64\n\tfdt /usr/lib/"
				   "linux-image-6.1.0-13-amd64/sun8i-h3-orangepi-pc.dtb\n"), "%s", text);
	ck_assert_msg(strstr(text, "\tfdtdir /usr/lib/linux-image-6.1.0-9-amd64/\n"), "%s", text);
	free(text);
	text = get("etc/default/u-boot");
	ck_assert_msg(strstr(text, "\nU_BOOT_FDT=\"sun8i-h3-orangepi-pc.dtb\"\n"), "%s", text);
	free(text);
	put("usr/lib/linux-image-6.1.0-9-amd64/sun8i-h3-orangepi-pc.dtb", "now it has it");
	ck_assert_int_eq(bootcfg_check_kernels(&s, &rec), 0);
	manifest_release(&s.manifest);
	teardown();
}
END_TEST

/*
 * A firmware's FAT partition (board raspberry-pi): the plan holds raspi-firmware and a kernel;
 * after configuring, the files its hooks put into /boot/firmware are checked, cmdline.txt and
 * /etc/default/raspi-firmware get the disk's root and console.
 */
START_TEST(board_fat)
{
	struct plan_entry v[2] = { { .name = n_root }, { .name = n_boot } };
	struct plan p = { .v = v, .n = 2 };
	static char fw[] = "raspi-firmware", kernel[] = "linux-image-arm64", board[] = "raspberry-pi",
		    con1[] = "ttyS1,115200", fat[] = "boot/firmware";
	static const char *const files[] = { "bootcode.bin", "start.elf", "fixup.dat",
		"start4.elf", "fixup4.dat", "bcm2837-rpi-3-b.dtb", "bcm2711-rpi-4-b.dtb",
		"vmlinuz-6.1.0-13-amd64", "initrd.img-6.1.0-13-amd64" };
	struct staging s = { 0 };
	char *text, want[300], id[37];
	size_t i;

	log_set_level(LOG_QUIET);
	setup(DISK_BOOT_NONE, 1, 0);
	parts[0].path = fat; /* the first partition: FAT, /boot/firmware */
	parts[0].format = PART_FS_VFAT;
	rec.board = board;
	rec.disk.console = con1;
	ck_assert_int_eq(bootcfg_check_plan(&p, &rec), -MKI_E_IMAGE); /* no raspi-firmware */
	v[0].name = fw;
	ck_assert_int_eq(bootcfg_check_plan(&p, &rec), -MKI_E_IMAGE); /* no kernel */
	v[1].name = kernel;
	ck_assert_int_eq(bootcfg_check_plan(&p, &rec), 0);

	ck_assert_int_eq(run(&s), -MKI_E_IMAGE); /* the hooks put nothing there */
	for (i = 0; i < sizeof(files) / sizeof(*files); i++) {
		text = xasprintf("boot/firmware/%s", files[i]);
		put(text, "x");
		free(text);
	}
	put("boot/firmware/config.txt", "arm_64bit=1\nkernel=vmlinuz-6.1.0-13-amd64\n"
	    "initramfs initrd.img-6.1.0-14-amd64\n");
	put("boot/firmware/cmdline.txt", "console=tty0 root=tmpfs rw fsck.repair=yes "
	    "net.ifnames=0 cma=64M rootwait \n");
	put("etc/default/raspi-firmware", "# settings\n#ROOTPART=/dev/mmcblk0p2\n#CONSOLES=\"auto\"\n");
	ck_assert_int_eq(run(&s), -MKI_E_IMAGE); /* config.txt names an initrd not there */
	put("boot/firmware/config.txt", "arm_64bit=1\nkernel=vmlinuz-6.1.0-13-amd64\n"
	    "initramfs initrd.img-6.1.0-13-amd64\n");
	ck_assert_int_eq(run(&s), 0);
	partuuid_partition(&rec, 1700000000, 1, id);
	text = get("boot/firmware/cmdline.txt");
	snprintf(want, sizeof(want), " console=ttyS1,115200 root=PARTUUID=%s rw fsck.repair=yes "
		 "net.ifnames=0 cma=64M rootwait \n", id);
	ck_assert_str_eq(text, want);
	free(text);
	text = get("etc/default/raspi-firmware");
	snprintf(want, sizeof(want), "# settings\nROOTPART=\"PARTUUID=%s\"\n"
		 "CONSOLES=\"ttyS1,115200\"\n", id);
	ck_assert_str_eq(text, want);
	free(text);
	text = xasprintf("%s/boot/extlinux", dir);
	ck_assert_int_ne(access(text, F_OK), 0); /* no boot loader */
	free(text);
	manifest_release(&s.manifest);
	teardown();
}
END_TEST

START_TEST(legacy_boot)
{
	setup(DISK_BOOT_EXTLINUX, 1, 0);
	bootcfg_mark_legacy_boot(&rec);
	ck_assert(parts[0].legacy_boot && !parts[1].legacy_boot); /* /boot's partition */
	teardown();
	setup(DISK_BOOT_EXTLINUX, 0, 0);
	bootcfg_mark_legacy_boot(&rec);
	ck_assert(parts[0].legacy_boot); /* the root */
	teardown();
	setup(DISK_BOOT_EXTLINUX, 1, 0);
	parts[1].legacy_boot = 1;
	bootcfg_mark_legacy_boot(&rec);
	ck_assert(!parts[0].legacy_boot); /* one marked by the recipe: left alone */
	teardown();
}
END_TEST

START_TEST(extlinux)
{
	struct staging s = { 0 };
	struct manifest_entry *e;
	char *text, want[400], id[37];
	struct stat sb;

	setup(DISK_BOOT_EXTLINUX, 1, 0);
	ck_assert_int_eq(run(&s), 0);
	text = get("boot/extlinux/extlinux.conf");
	partuuid_partition(&rec, 1700000000, 1, id);
	snprintf(want, sizeof(want), "\n\nlabel l0\n\tmenu label Debian GNU/Linux 12 (bookworm) "
		 "6.1.0-13-amd64\n\tlinux /vmlinuz-6.1.0-13-amd64\n\tinitrd /initrd.img-6.1.0-13-"
		 "amd64\n\t\n\t\n\tappend root=PARTUUID=%s console=ttyS0,115200 ro rootwait\n", id);
	ck_assert_msg(strstr(text, want), "%s", text);
	ck_assert_ptr_nonnull(strstr(text, "\n\nlabel l1\n\tmenu label Debian GNU/Linux 12 "
					   "(bookworm) 6.1.0-9-amd64\n"));
	free(text);
	text = get("etc/default/u-boot");
	snprintf(want, sizeof(want), "U_BOOT_ROOT=\"root=PARTUUID=%s\"\nU_BOOT_PARAMETERS=\""
		 "console=ttyS0,115200 ro rootwait\"\n", id);
	ck_assert_str_eq(strchr(text, '\n') + 1, want);
	free(text);
	e = manifest_get(&s.manifest, "boot/extlinux/extlinux.conf");
	ck_assert(e && e->mode == 0644 && e->uid == 0 && e->mtime == 1700000000);
	ck_assert_ptr_nonnull(manifest_get(&s.manifest, "boot/extlinux"));
	text = xasprintf("%s/boot/extlinux/extlinux.conf", dir);
	ck_assert_int_eq(stat(text, &sb), 0);
	ck_assert_int_eq(sb.st_mtime, 1700000000);
	ck_assert_int_eq(sb.st_mode & 07777, 0644);
	free(text);
	manifest_release(&s.manifest);
	teardown();
}
END_TEST

START_TEST(image_kernel)
{
	static char older[] = "6.1.0-9-amd64", none[] = "5.10";
	struct staging s = { 0 };
	char *text;

	log_set_level(LOG_QUIET);
	setup(DISK_BOOT_EXTLINUX, 0, 0);
	rec.image.kernel = older;
	ck_assert_int_eq(run(&s), 0);
	text = get("boot/extlinux/extlinux.conf");
	ck_assert_ptr_nonnull(strstr(text, "\ndefault l1\n"));
	ck_assert_ptr_nonnull(strstr(text, "\tlinux /boot/vmlinuz-6.1.0-9-amd64\n"));
	free(text);
	text = get("etc/default/u-boot");
	ck_assert_ptr_nonnull(strstr(text, "\nU_BOOT_DEFAULT=\"l1\"\n"));
	free(text);
	rec.image.kernel = none;
	ck_assert_int_eq(run(&s), -MKI_E_IMAGE);
	manifest_release(&s.manifest);
	teardown();
}
END_TEST

/*
 * riscv64's kernels are uncompressed, /boot/vmlinux-RELEASE: listed with the vmlinuz ones in
 * linux-version's order, as u-boot-update lists them, and booted by their own name.
 */
START_TEST(vmlinux)
{
	struct staging s = { 0 };
	char *text;

	setup(DISK_BOOT_EXTLINUX, 0, 0);
	put("boot/vmlinux-6.12.57+deb13-riscv64", "raw kernel");
	put("boot/vmlinux-6.12.57+deb13-riscv64.sig", "a signature is no kernel");
	put("boot/initrd.img-6.12.57+deb13-riscv64", "initrd");
	ck_assert_int_eq(run(&s), 0);
	text = get("boot/extlinux/extlinux.conf");
	ck_assert_msg(strstr(text, "\ndefault l0\n") && strstr(text, "\n\nlabel l0\n\tmenu label "
		      "Debian GNU/Linux 12 (bookworm) 6.12.57+deb13-riscv64\n\tlinux /boot/vmlinux-"
		      "6.12.57+deb13-riscv64\n\tinitrd /boot/initrd.img-6.12.57+deb13-riscv64\n"),
		      "%s", text);
	ck_assert_ptr_nonnull(strstr(text, "\n\nlabel l1\n\tmenu label Debian GNU/Linux 12 "
					   "(bookworm) 6.1.0-13-amd64\n\tlinux /boot/vmlinuz-"));
	ck_assert_ptr_nonnull(strstr(text, "\n\nlabel l2\n\tmenu label Debian GNU/Linux 12 "
					   "(bookworm) 6.1.0-9-amd64\n"));
	ck_assert_ptr_null(strstr(text, ".sig"));
	ck_assert_ptr_null(strstr(text, "label l3"));
	free(text);
	manifest_release(&s.manifest);
	teardown();
}
END_TEST

START_TEST(symlink_refused)
{
	struct staging s = { 0 };
	char *p;

	log_set_level(LOG_QUIET);
	setup(DISK_BOOT_EXTLINUX, 0, 0);
	p = xasprintf("%s/boot/extlinux", dir);
	ck_assert_int_eq(symlink("/etc", p), 0);
	ck_assert_int_eq(run(&s), -MKI_E_IMAGE);
	free(p);
	p = xasprintf("%s/etc/extlinux.conf", dir);
	ck_assert_int_ne(access(p, F_OK), 0); /* nothing written through the link */
	free(p);
	manifest_release(&s.manifest);
	teardown();
}
END_TEST

START_TEST(no_kernel)
{
	struct staging s = { 0 };
	char *p;

	log_set_level(LOG_QUIET);
	setup(DISK_BOOT_SYSTEMD_BOOT, 0, 1);
	p = xasprintf("%s/boot/vmlinuz-6.1.0-9-amd64", dir);
	unlink(p);
	free(p);
	p = xasprintf("%s/boot/vmlinuz-6.1.0-13-amd64", dir);
	unlink(p);
	free(p);
	ck_assert_int_eq(run(&s), -MKI_E_IMAGE);
	manifest_release(&s.manifest);
	teardown();
}
END_TEST

START_TEST(systemd_boot)
{
	struct staging s = { 0 };
	char *text, want[400], id[37];

	setup(DISK_BOOT_SYSTEMD_BOOT, 0, 1);
	ck_assert_int_eq(run(&s), 0);
	partuuid_partition(&rec, 1700000000, 1, id);
	text = get("boot/efi/EFI/BOOT/BOOTX64.EFI");
	ck_assert_str_eq(text, "MZ loader");
	free(text);
	text = get("boot/efi/EFI/systemd/systemd-bootx64.efi");
	ck_assert_str_eq(text, "MZ loader");
	free(text);
	text = get("boot/efi/debian/6.1.0-13-amd64/linux");
	ck_assert_str_eq(text, "kernel");
	free(text);
	text = get("boot/efi/debian/6.1.0-13-amd64/initrd.img-6.1.0-13-amd64");
	ck_assert_str_eq(text, "initrd");
	free(text);
	text = get("boot/efi/loader/loader.conf");
	ck_assert_str_eq(text, "timeout 0\ndefault debian-*\n");
	free(text);
	text = get("boot/efi/loader/entries/debian-6.1.0-13-amd64.conf");
	snprintf(want, sizeof(want), "title      Debian GNU/Linux 12 (bookworm)\n"
		 "version    6.1.0-13-amd64\nsort-key   debian\n"
		 "options    root=PARTUUID=%s console=ttyS0,115200 ro rootwait\n"
		 "linux      /debian/6.1.0-13-amd64/linux\n"
		 "initrd     /debian/6.1.0-13-amd64/initrd.img-6.1.0-13-amd64\n", id);
	ck_assert_str_eq(text, want);
	free(text);
	text = get("etc/kernel/cmdline");
	snprintf(want, sizeof(want), "root=PARTUUID=%s console=ttyS0,115200 ro rootwait\n", id);
	ck_assert_str_eq(text, want);
	free(text);
	text = get("etc/kernel/entry-token");
	ck_assert_str_eq(text, "debian\n");
	free(text);
	ck_assert_ptr_nonnull(manifest_get(&s.manifest, "boot/efi/debian/6.1.0-13-amd64/linux"));
	manifest_release(&s.manifest);
	teardown();
}
END_TEST

Suite *bootcfg_suite(void)
{
	Suite *s = suite_create("bootcfg");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, check_plan);
	tcase_add_test(tc, legacy_boot);
	tcase_add_test(tc, extlinux);
	tcase_add_test(tc, image_kernel);
	tcase_add_test(tc, vmlinux);
	tcase_add_test(tc, symlink_refused);
	tcase_add_test(tc, no_kernel);
	tcase_add_test(tc, systemd_boot);
	tcase_add_test(tc, board_fdt);
	tcase_add_test(tc, board_fat);
	suite_add_tcase(s, tc);
	return s;
}
