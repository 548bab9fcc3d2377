/*
 * Drive the update bundle writer alone (image/rauc.c), for the benchmark against `rauc bundle`:
 *   rauc-bundle DIR IMAGE OUTPUT CERT KEY KEYRING COMPATIBLE VERSION
 * DIR holds the slot image IMAGE ("rootfs.ext4") and nothing else; the epoch is
 * SOURCE_DATE_EPOCH (default 0). Exit status: mkimage's for the error, 2 for usage.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "image/rauc.h"
#include "lib/err.h"

static void on_signal(int sig)
{
	err_set_interrupted(sig);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct recipe_update u = { 0 };
	struct rauc_params p = { 0 };
	struct rauc_bundle b;
	const char *sde = getenv("SOURCE_DATE_EPOCH");
	int ret;

	if (argc != 9) {
		fprintf(stderr, "usage: rauc-bundle DIR IMAGE OUTPUT CERT KEY KEYRING COMPATIBLE "
			"VERSION\n");
		return MKI_EXIT_USAGE;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	p.u = &u;
	u.cert = argv[4];
	u.key = argv[5];
	u.keyring = argv[6];
	u.compatible = argv[7];
	u.version = argv[8];
	p.dir = argv[1];
	p.image = argv[2];
	p.output = argv[3];
	p.source_date_epoch = sde ? strtoll(sde, NULL, 10) : 0;
	ret = rauc_write(&p, &b);
	if (!ret)
		printf("%s %s\n", b.sha256, p.output);
	return ret ? err_exit_code(ret) : 0;
}
