/*
 * The cross-building SDK (mkimage --sdk, mkimage(7) "Cross-building"): a second build derived
 * from an image's recipe and lock. Its recipe is made here (the build host's architecture, the
 * image's architectures as auxiliary ones, the cross toolchains) and run through the same
 * stages as an image; once the indexes are verified, the request is completed with the -dev
 * packages of the image's libraries at exactly the versions the image's lock names.
 */
#ifndef MKI_SDK_H
#define MKI_SDK_H

#include "recipe/lockfile.h"
#include "recipe/recipe.h"
#include "repo/indexes.h"

/*
 * The SDK's archive is zstd's default level, as mmdebstrap's .tar.zst: a developer fetches it
 * and unpacks it at once, and the disks' level 9 took 12.5 s where this takes 4.3 s over
 * arm-board's 645 MiB tree (2 threads), for an archive 12% larger (tests/bench/README.md, 84-sdk).
 */
#define SDK_ZSTD_LEVEL 3

struct sdk {
	struct recipe recipe;       /* the SDK's own recipe: what the stages build */
	struct lockfile image_lock; /* the image's lock: the versions the -dev packages take */
	char *image_lock_file;
	struct strv targets;        /* the image's architectures, primary first */
	struct strv image_dev;      /* sdk.packages of the image's recipe */
	int image_libraries;        /* sdk.image_libraries */
	int loaded;                 /* `recipe` holds a recipe to release */
};

/**
 * The SDK of `image` (its lock at `lock_file`) as a tar archive at `tar`: checks that the build
 * host can build it (its architecture is none of the image's; not yet supported otherwise),
 * reads the lock (it must be the recipe's: same digest, same architectures) and derives the
 * SDK's recipe. 0, -MKI_E_USAGE (the host), -MKI_E_LOCK (a missing or stale lock), or
 * -MKI_E_RECIPE; all logged.
 */
int sdk_prepare(struct sdk *s, const struct recipe *image, const char *lock_file, const char *tar,
		const struct recipe_checks *checks);

/**
 * Complete the SDK's request from the verified indexes `ix`: crossbuild-essential-ARCH for each
 * target architecture (-MKI_E_RESOLVE naming the architectures the archive has none for), each
 * library of the image that a -dev package of the same source and version goes with (with
 * sdk.image_libraries) and sdk.packages, each pinned at the image's version with its library.
 * A -dev package that exists only in another version than the image's library is
 * -MKI_E_RESOLVE naming both versions; one missing for a target architecture is
 * -MKI_E_RESOLVE naming it; a library of the lock the indexes do not hold is -MKI_E_LOCK.
 */
int sdk_request(struct sdk *s, const struct indexes *ix);

/** The libconfig text of the SDK's recipe (sdk_prepare parses it), appended to `out`. */
void sdk_recipe_text(const struct recipe *image, const char *host_arch, const char *tar,
		     struct buf *out);

void sdk_release(struct sdk *s);

/** After the SDK's resolve found no solution: why an SDK meets one, and the ways out (logged). */
void sdk_explain_unresolved(void);

#endif
