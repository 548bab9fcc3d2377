/*
 * The board profiles: one row a board, what its boot ROM and Debian's build of its boot loader
 * need of a disk (board.h). The offsets are the ROMs' and the loaders' (CONFIG_SYS_MMCSD_RAW_MODE_
 * U_BOOT_SECTOR of Debian's builds), as each package's README.Debian installs them with dd.
 */
#include "board.h"

#include <string.h>

#include "lib/str.h"

#define KIB 1024ull
#define MIB (1024 * 1024ull)

#define SUNXI_RULE "the Allwinner boot ROM reads the SPL (its eGON.BT0 header) from byte 8192 of " \
		   "the card, and U-Boot follows it in the first MiB"
#define SUNXI_SPL(dir) { "spl", "usr/lib/u-boot/" dir "/u-boot-sunxi-with-spl.bin", 8 * KIB, \
			 MIB - 8 * KIB }

static const struct board boards[] = {
	{ "orangepi-pc", "Allwinner H3", "armhf", "u-boot-sunxi",
	  /* Debian builds no orangepi_pc; QEMU's own test boots orangepi_plus's on this machine */
	  { SUNXI_SPL("orangepi_plus") }, BOARD_GPT | BOARD_MBR, BOARD_TABLE_GPT, "ttyS0", "115200",
	  "sun8i-h3-orangepi-pc.dtb", BOARD_ROUND_POW2,
	  SUNXI_RULE "; the card's size is a power of two (QEMU's SD card model, -M orangepi-pc)",
	  NULL, { 0 } },
	{ "cubieboard2", "Allwinner A20", "armhf", "u-boot-sunxi", { SUNXI_SPL("Cubieboard2") },
	  BOARD_GPT | BOARD_MBR, BOARD_TABLE_GPT, "ttyS0", "115200", "sun7i-a20-cubieboard2.dtb",
	  BOARD_ROUND_MIB, SUNXI_RULE, NULL, { 0 } },
	{ "a20-olinuxino-lime2", "Allwinner A20", "armhf", "u-boot-sunxi",
	  { SUNXI_SPL("A20-OLinuXino-Lime2") }, BOARD_GPT | BOARD_MBR, BOARD_TABLE_GPT, "ttyS0", "115200",
	  "sun7i-a20-olinuxino-lime2.dtb", BOARD_ROUND_MIB, SUNXI_RULE, NULL, { 0 } },
	{ "firefly-rk3288", "Rockchip RK3288", "armhf", "u-boot-rockchip",
	  { { "idbloader", "usr/lib/u-boot/firefly-rk3288/idbloader.img", 32 * KIB, 8 * MIB - 32 * KIB },
	    { "u-boot", "usr/lib/u-boot/firefly-rk3288/u-boot.img", 8 * MIB, 8 * MIB } },
	  BOARD_GPT | BOARD_MBR, BOARD_TABLE_GPT, "ttyS2", "115200", "rk3288-firefly.dtb", BOARD_ROUND_MIB,
	  "the Rockchip boot ROM reads the ID block (idbloader.img) from sector 64, whose SPL loads "
	  "U-Boot (u-boot.img) from sector 16384; the partitions start at 16 MiB", NULL, { 0 } },
	{ "beaglebone-black", "TI AM335x", "armhf", "u-boot-omap",
	  { { "mlo", "usr/lib/u-boot/am335x_evm/MLO", 128 * KIB, 128 * KIB },
	    { "u-boot", "usr/lib/u-boot/am335x_evm/u-boot.img", 384 * KIB, 4 * MIB - 384 * KIB } },
	  BOARD_MBR, BOARD_TABLE_MBR, "ttyS0", "115200", "am335x-boneblack.dtb", BOARD_ROUND_MIB,
	  "the AM335x boot ROM reads MLO raw (its CHSETTINGS table of contents) from byte 131072 of "
	  "the card and at most 128 KiB of it, MLO loads u-boot.img from sector 768, the "
	  "partitions start at 4 MiB and the table is an MBR", NULL, { 0 } },
	/* Pi 3 and 4 (64-bit): raspi-firmware's hooks copy the firmware, the newest kernel, its
	   initrd and its device trees into /boot/firmware and write config.txt and cmdline.txt */
	{ "raspberry-pi", "Broadcom BCM2711/BCM2837", "arm64", "raspi-firmware", { { 0 } }, BOARD_MBR,
	  BOARD_TABLE_MBR, "ttyS1", "115200", NULL, BOARD_ROUND_MIB,
	  "the VideoCore firmware reads bootcode.bin, start*.elf, config.txt, cmdline.txt, the "
	  "kernel, its initrd and the device trees from the first partition of an MBR, a FAT one, "
	  "which raspi-firmware fills from /boot/firmware; no U-Boot", NULL,
	  { "boot/firmware", { "bootcode.bin", "start.elf", "fixup.dat", "start4.elf", "fixup4.dat",
	    "bcm2837-rpi-3-b.dtb", "bcm2711-rpi-4-b.dtb", "config.txt", "cmdline.txt" },
	    "config.txt", "cmdline.txt", "etc/default/raspi-firmware",
	    "etc/default/raspi-extra-cmdline" } },
};

#define N_BOARDS (sizeof(boards) / sizeof(*boards))

const struct board *board_get(const char *name)
{
	size_t i;

	for (i = 0; name && i < N_BOARDS; i++)
		if (!strcmp(boards[i].name, name))
			return &boards[i];
	return NULL;
}

const char *board_suggest(const char *name)
{
	const char *best = NULL;
	unsigned d, min = 4; /* a few characters off; further is another board */
	size_t i;

	for (i = 0; i < N_BOARDS; i++) {
		d = str_distance(name, boards[i].name);
		if (d < min) {
			min = d;
			best = boards[i].name;
		}
	}
	/* "orangepi", "beaglebone": the start of a name */
	for (i = 0; !best && strlen(name) >= 4 && i < N_BOARDS; i++)
		if (str_starts_with(boards[i].name, name))
			best = boards[i].name;
	return best;
}

void board_list(struct buf *out)
{
	size_t i;

	for (i = 0; i < N_BOARDS; i++)
		buf_addf(out, "%s\"%s\"", !i ? "" : i + 1 < N_BOARDS ? ", " : " or ",
			 boards[i].name);
}

size_t board_count(void)
{
	return N_BOARDS;
}

const struct board *board_at(size_t i)
{
	return i < N_BOARDS ? &boards[i] : NULL;
}

uint64_t board_round_size(enum board_size_round round, uint64_t size)
{
	uint64_t p = MIB;

	if (round == BOARD_ROUND_MIB)
		return (size + MIB - 1) / MIB * MIB;
	while (p < size && p < (UINT64_C(1) << 62))
		p <<= 1;
	return p;
}
