/* The recipe: libconfig file -> validated `struct recipe`, with file:line errors. */
#ifndef MKI_RECIPE_H
#define MKI_RECIPE_H

/*
 * Default script_timeout: a linux-image postinst (update-initramfs) emulated on a busy 2-core
 * machine takes 2-4 minutes; 600 s leaves room without letting a hung script wait half an hour.
 */
#define RECIPE_SCRIPT_TIMEOUT 600

/*
 * Default base of the SBOM's documentNamespace, as SPDX's own tools name theirs: an identifier,
 * never fetched; a team publishing SBOMs sets its own domain with the recipe's sbom_namespace.
 */
#define RECIPE_SBOM_NAMESPACE "https://spdx.org/spdxdocs/mkimage"

#include <stdint.h>

#include "fstype.h"
#include "lib/str.h"

enum base_set { BASE_NONE, BASE_ESSENTIAL, BASE_REQUIRED, BASE_IMPORTANT };
enum hook_where { HOOK_INSIDE, HOOK_OUTSIDE };

struct recipe_source {
	int host;               /* 1: the host's apt sources (uri/components/keyring unset) */
	char *uri;              /* http://, https:// or file:// */
	char *suite;            /* never NULL after parsing: defaults to the recipe's suite */
	struct strv components; /* default: main */
	struct strv archs;      /* empty: all of the recipe's architectures */
	char *keyring;          /* absolute path, or NULL (host: from Signed-By) */
	int trusted;            /* skip signature checks: only when the user wrote trusted = true */
	int line;
};

struct recipe_package {
	char *name;
	char *arch;    /* NULL: primary (or Architecture: all) */
	char *version; /* NULL: newest */
	int line;
};

struct recipe_hook {
	char *name;
	char *script; /* absolute path */
	enum hook_where where;
	unsigned timeout; /* seconds */
	int line;
};

struct recipe_device {
	char *path;
	char type; /* 'c' char, 'b' block, 'p' fifo */
	unsigned major, minor, mode, uid, gid;
	int line;
};

/* A directory beside the recipe copied into the tree after configuration (overlay.h). */
struct recipe_overlay {
	char *source;      /* absolute path of a directory */
	char *destination; /* where its root lands in the tree, normalized: "" is "/" */
	unsigned uid, gid; /* owner of everything it creates (default 0:0) */
	int replace;       /* it may replace files that packages own */
	int devices;       /* it may carry device nodes and FIFOs */
	char digest[65];   /* sha256 of its listing and contents (overlay_check) */
	int line;
};

struct recipe_image {
	char *format;          /* a format's name, which the image family knows; default "ext4" */
	int labelled;          /* its image has a label (recipe_format_fn): fstab's default */
	char *output;          /* NULL: images/NAME.FORMAT under the current directory */
	uint64_t size;         /* bytes; 0 = auto */
	unsigned margin;       /* percent of free space added when size is auto */
	char *label;
	unsigned reserved;     /* percent of blocks reserved for root */
	char *uuid;            /* NULL: derived from the lock digest */
	char *hash_seed;       /* NULL: derived from the lock digest */
	struct recipe_device *devices;
	size_t n_devices;
	int fstab;             /* write /etc/fstab with the root by LABEL= (default: `labelled`) */
	int export_boot;       /* kernel, initrd, device trees beside the image (bootexport.h) */
	char *kernel;          /* which /boot/vmlinu[xz]-VERSION to export; NULL: the only one */
	int compression;       /* enum fs_compression: format = "squashfs" only */
};

/*
 * The disk (recipe section `disk`): a partition table and what each partition holds. Present
 * only when `set`; every partition's identifiers derive from the recipe (partuuid.h).
 */
enum disk_table { DISK_GPT, DISK_MBR };
enum disk_compress { DISK_COMPRESS_NONE, DISK_COMPRESS_ZSTD, DISK_COMPRESS_XZ };
enum disk_bootloader { DISK_BOOT_NONE, DISK_BOOT_EXTLINUX, DISK_BOOT_SYSTEMD_BOOT };
enum partition_contents {
	PART_EMPTY,   /* nothing, or an empty filesystem when `format` says one */
	PART_ROOT,    /* the tree, less the subtrees other partitions hold (their mount points kept) */
	PART_SUBTREE, /* a directory of the tree (`path`): "/boot", "/boot/efi", "/efi" */
	PART_FILE,    /* a file of the tree (`path`) written raw */
	PART_VERITY,  /* the dm-verity hash tree of partition `path` (index `verity_of`) */
};
/* image.compression and a partition's compression: how a squashfs is compressed */
enum fs_compression { FS_COMP_ZSTD, FS_COMP_XZ, FS_COMP_LZ4, FS_COMP_GZIP, FS_COMP_NONE };

struct recipe_partition {
	char *name;            /* the GPT partition name; what messages and the report call it */
	char *type;            /* as written: "esp", "root", ... or a GUID (or "0xNN" on MBR) */
	char type_guid[37];    /* GPT: the type GUID, lower case (root: the primary architecture's) */
	unsigned mbr_type;     /* MBR: the system id byte */
	uint64_t size;         /* bytes; 0: auto (what the contents need) */
	uint64_t min_size;     /* auto: at least this */
	int grow;              /* size = "grow": the rest of a disk of fixed size */
	uint64_t offset;       /* first byte; 0: after the one before, 1 MiB aligned */
	enum partition_contents contents;
	char *path;            /* PART_SUBTREE: "boot/efi" (relative, normalized); PART_FILE: file;
				  PART_VERITY: the data partition's name */
	size_t verity_of;      /* PART_VERITY: the data partition's index (before this one) */
	enum partition_format format;
	char *label;           /* the filesystem's label (default: derived from name) */
	int compression;       /* enum fs_compression: format = "squashfs" only */
	int legacy_boot;       /* GPT attribute 2 / MBR active flag: where U-Boot looks */
	int read_only;         /* GPT attribute 60 */
	int table_entry;       /* 0: bytes at `offset` outside the table (a boot loader's SPL) */
	int line;
};

struct recipe_disk {
	int set;               /* the recipe has a disk section */
	int table;             /* enum disk_table */
	uint64_t size;         /* bytes; 0: auto, the partitions' sum */
	char *output;          /* NULL: images/NAME.img under the current directory */
	int bmap;              /* OUTPUT.bmap beside it */
	int compress;          /* enum disk_compress: OUTPUT.zst or OUTPUT.xz instead of OUTPUT */
	int bootloader;        /* enum disk_bootloader */
	char *console;         /* NULL: none; "ttyAMA0,115200" */
	char *cmdline;         /* more of the kernel command line (default "rw rootwait") */
	int root_image;        /* the root partition's filesystem also at image.output */
	int size_round;        /* enum board_size_round (board.h): how "auto" rounds the size */
	struct recipe_partition *partitions;
	size_t n_partitions;
	size_t n_board;        /* the first n_board partitions are the board's loaders (board.h) */
};

enum machine_id_mode { MACHINE_ID_UNINITIALIZED, MACHINE_ID_EMPTY };

/* Where configured trees are shared (recipe section `layers`, layer/registry.h): never the image. */
struct recipe_layers {
	char *registry;           /* http(s)://HOST[:PORT]/REPO; NULL: none */
	char *sign_key;           /* absolute path of the Ed25519 private key; NULL: layers unsigned */
	struct strv trusted_keys; /* absolute paths of the public keys a pulled layer may be signed by */
};

/*
 * The update bundle (recipe section `update`): what a device running the image accepts as its
 * next root, signed. Present only when `set`; needs a disk with two root slots or more.
 */
struct recipe_update {
	int set;                /* the recipe has an update section */
	char *format;           /* "rauc" (the one format written yet) */
	char *compatible;       /* what the device's updater must match (RAUC's compatible) */
	char *version;          /* the bundle's version */
	struct strv slots;      /* partition names of the root slots; default: every "root" one */
	char *sign;             /* "build" or "offline" */
	int sign_offline;       /* sign = "offline": the bundle's content and manifest, unsigned */
	char *cert;             /* absolute path: the signing certificate (PEM), then its chain */
	char *key;              /* absolute path: its private key (PEM) */
	char *keyring;          /* absolute path: the CA certificates (PEM) devices trust */
	size_t root;            /* the disk's partition (index) holding the root */
	unsigned boot_attempts; /* boots a new slot gets before the selector falls back */
	int select;             /* the boot selection partition (contents "/boot/select"), or -1 */
	int verity;             /* a verified root: each slot is [boot,] data, hash partition */
};

/*
 * The cross-building SDK (recipe section `sdk`, mkimage --sdk): what it holds besides the cross
 * toolchains. Not part of the image: never in the image's digest.
 */
struct recipe_sdk {
	char *arch;           /* the SDK's (host) architecture; NULL: the build host's */
	struct strv packages; /* "name" (every target architecture) or "name:arch" */
	int image_libraries;  /* the -dev packages of every library in the image too (default 1) */
};

struct recipe {
	char *file;  /* as given */
	char *dir;   /* absolute directory of the recipe: relative paths are resolved against it */
	char *name;
	char *arch;             /* primary */
	struct strv aux_archs;  /* auxiliary, in recipe order */
	char *suite;
	int merged_usr;
	int host_twins;    /* native tools' twins may come from the host's apt sources */
	struct recipe_source *sources;
	size_t n_sources;
	enum base_set base;
	struct recipe_package *packages;
	size_t n_packages;
	struct strv excludes;
	int recommends;
	int allow_older;
	struct strv local_debs; /* absolute paths */
	struct strv path_exclude, path_include; /* dpkg path filter globs, in order */
	int minimize;           /* the path filter preset: no docs, man pages, info, translations */
	struct strv locales;    /* translations minimize keeps ("en", "pt_BR") */
	struct recipe_hook *hooks;
	size_t n_hooks;
	unsigned hook_timeout;  /* default per hook, seconds */
	unsigned script_timeout;/* per maintainer script, seconds; 0: only the configure guard */
	struct recipe_overlay *overlays;
	size_t n_overlays;
	char *hostname;         /* NULL: /etc/hostname is left alone */
	char *sbom_namespace;   /* the SBOM's namespace base URI; NULL: RECIPE_SBOM_NAMESPACE */
	enum machine_id_mode machine_id;
	char *board;            /* a row of board.h's profiles; NULL: none */
	struct recipe_image image;
	struct recipe_disk disk;
	struct recipe_layers layers;
	struct recipe_update update;
	struct recipe_sdk sdk;
	char digest[65];        /* sha256 of the normalized recipe (recipe_format) */
};

/**
 * Reads an overlay's source tree, checks it and fills o->digest (overlay_check, overlay.h); logs
 * "FILE:LINE: ..." itself. The recipe only names the directory: reading it is configure's job,
 * so main.c passes the check in.
 */
typedef int recipe_overlay_fn(struct recipe_overlay *o, const char *file);

/**
 * What the recipe needs to know of an image format, which only the image family knows (main.c
 * passes format_recipe_check from image/format.h): 1 when `name` is a format whose image has a
 * filesystem label (by which /etc/fstab names the root), 0 for a format without one, -ENOENT
 * for no format, with the formats' names appended to `known` as the error message lists them.
 */
typedef int recipe_format_fn(const char *name, struct buf *known);

/** What the recipe asks of the families after it: main.c passes their functions in. */
struct recipe_checks {
	recipe_overlay_fn *overlay; /* NULL: overlay sources are not read, o->digest stays empty */
	recipe_format_fn *format;   /* required */
};

/**
 * Parse and validate `path`; each overlay is checked with checks->overlay where it is parsed,
 * image.format with checks->format. On error logs "FILE:LINE: what is wrong" once and returns
 * -MKI_E_RECIPE (also when the file cannot be read) or what checks->overlay returned; `r` is
 * then released.
 */
int recipe_load(struct recipe *r, const char *path, const struct recipe_checks *checks);
/**
 * As recipe_load, from a string; `name` is used in messages, `dir` resolves relative paths
 * (a recipe mkimage derives from another: the SDK's, sdk.h).
 */
int recipe_parse_text(struct recipe *r, const char *text, const char *name, const char *dir,
		      const struct recipe_checks *checks);
/**
 * Append "name[:arch]=version" (arch NULL: the primary; version NULL: the newest) to
 * packages.install and compute the digest again: a request completed once the indexes are
 * known (the SDK's -dev packages, sdk.h). The caller checked the names.
 */
void recipe_add_package(struct recipe *r, const char *name, const char *arch,
			const char *version);
/** Free the contents of `r`. */
void recipe_release(struct recipe *r);
/** Append the normalized recipe (libconfig syntax, every default explicit) to `out`. */
void recipe_format(const struct recipe *r, struct buf *out);
/**
 * Append the normalized recipe as one JSON object (--check --json, mkimage(1)): keys as in
 * recipe_format(), groups as objects, lists and arrays as arrays. 0, or -MKI_E_RECIPE (logged).
 */
int recipe_format_json(const struct recipe *r, struct buf *out);
/**
 * One "KEY SHA256" string per key of the normalized recipe's digest form, a group's keys one by
 * one ("packages.install", "image.size"), the disk whole: what the lock records so that
 * --locked can name the keys that changed. Appended to `out` in recipe_keys[] order.
 */
void recipe_field_digests(const struct recipe *r, struct strv *out);
/**
 * Append what of `r` changes the configured tree (the keys marked so in recipe_keys[],
 * recipe_internal.h), one "recipe KEY VALUE" line each, normalized: the recipe's part of the
 * layer key (layer.h).
 */
void recipe_format_tree(const struct recipe *r, struct buf *out);
/** All architectures: primary first, then auxiliaries. `out` is filled with copies. */
void recipe_all_archs(const struct recipe *r, struct strv *out);

/** Parse "512M", "2G", "1048576" into bytes; 0 on success, -EINVAL otherwise. */
int recipe_parse_size(const char *s, uint64_t *out);
/**
 * The index of the partition holding the dm-verity hash tree of the root partition (contents =
 * "root"), or -1 when the root is not verified or there is no disk.
 */
int recipe_disk_root_verity(const struct recipe *r);
/**
 * The partition indices of the update's root slots (r->update.slots, in that order) into `out`
 * (at most `max`); the count, or 0 without an update section.
 */
size_t recipe_update_slots(const struct recipe *r, size_t *out, size_t max);

/*
 * The disk boots its slots through mkimage's boot selection (an update group on a disk with
 * bootloader = "extlinux"): U-Boot's boot.scr and the attempt counter on the partition holding
 * "/boot/select", RAUC's system.conf and its custom backend in the tree (mkimage(7), Updates).
 */
int recipe_update_boots(const struct recipe *r);
enum recipe_update_part { UPDATE_PART_HASH, UPDATE_PART_BOOT };
/**
 * With a verified root (r->update.verity), root slot partition `slot`'s child: its hash tree's
 * partition (right after it) or, on a disk booted through the boot selection, its boot
 * partition (right before it: kernel, initrd, extlinux.conf); -1 when it has none.
 */
int recipe_update_child(const struct recipe *r, size_t slot, enum recipe_update_part which);
/** The EFI name of Debian architecture `arch` ("x64", "aa64", ...), or NULL for none. */
const char *recipe_disk_efi_arch(const char *arch);

#endif
