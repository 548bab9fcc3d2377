/*
 * A finished disk image compressed for a farm to fetch and flash (NAME.img.zst, NAME.img.xz),
 * after its block map (bmap.h) was computed from the uncompressed file: `bmaptool copy` reads
 * either through the same map.
 *
 * Both formats use every online CPU (at most COMPRESS_MAX_THREADS) and are byte-reproducible
 * whatever that number is: zstd always in its multi-threaded mode (at least one worker; the jobs
 * are cut by size, never by thread), xz with a fixed block size (COMPRESS_XZ_BLOCK). Levels:
 * zstd COMPRESS_ZSTD_LEVEL, xz preset COMPRESS_XZ_PRESET (tests/bench/README.md has the
 * measurements behind them); the .xz is byte for byte what `xz -6 -T2` (or more threads) makes
 * of the image, which anyone can check. The image's holes are not read: they are fed as zeros.
 */
#ifndef MKI_COMPRESS_H
#define MKI_COMPRESS_H

enum compress_kind { COMPRESS_NONE, COMPRESS_ZSTD, COMPRESS_XZ };

#define COMPRESS_ZSTD_LEVEL 9
#define COMPRESS_XZ_PRESET 6
#define COMPRESS_XZ_BLOCK (24u << 20) /* xz's own for preset 6: three times its dictionary */
#define COMPRESS_MAX_THREADS 8

/**
 * The kind a recipe names: "none", "zstd" or "xz" into *k. 0, or -EINVAL for anything else
 * (the caller says where, with the recipe's FILE:LINE).
 */
int compress_parse(const char *name, enum compress_kind *k);

/** "none", "zstd", "xz". */
const char *compress_name(enum compress_kind k);

/** The suffix the compressed file takes after the image's name: "", ".zst", ".xz". */
const char *compress_suffix(enum compress_kind k);

/**
 * Compress the regular file `in` into `out` with `k`: through a temporary file beside `out`
 * (fsync, rename), removed on failure or on SIGINT/SIGTERM (checked every MiB). COMPRESS_NONE
 * writes nothing and returns 0. Returns 0; -MKI_E_IMAGE, logged, when `in` cannot be read (missing,
 * not a regular file, changed while read) or `out` cannot be written; -MKI_E_INTERRUPTED
 * (the temporary file removed).
 */
int compress_file(const char *in, const char *out, enum compress_kind k);

/**
 * compress_file() at zstd level `level` (1-19; 0 is COMPRESS_ZSTD_LEVEL); xz keeps its preset.
 * For an output fetched once and unpacked at once (the SDK, sdk.h), where the time to write it
 * counts more than its size.
 */
int compress_file_level(const char *in, const char *out, enum compress_kind k, int level);

#endif
