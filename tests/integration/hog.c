/*
 * What a hostile maintainer script runs to take the build host's resources (tests 83, 84), built
 * static at test time and shipped in a package:
 *   hog fork           fork children that wait for ever, retrying every failed fork for ever
 *   hog alloc MIB      allocate and touch MIB MiB, then wait for ever
 *   hog shm MIB        create a SysV shared memory segment of MIB MiB, fill it, leave it, exit 0
 *   hog shmcount FILE  write the number of SysV segments this IPC namespace holds to FILE
 * Every failure is ignored where a hostile program would ignore it; "waits for ever" ends only
 * when the sandbox kills it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <unistd.h>

#define MIB (1024UL * 1024)

static void forever(void)
{
	for (;;)
		pause();
}

static void fork_bomb(void)
{
	for (;;) {
		pid_t pid = fork();

		if (pid == 0)
			forever();
		if (pid < 0)
			usleep(1000);
	}
}

static void alloc(unsigned long mib)
{
	unsigned long i;

	for (i = 0; i < mib; i++) {
		char *p = malloc(MIB);

		if (!p) {
			fprintf(stderr, "hog: allocation failed after %lu MiB\n", i);
			break;
		}
		memset(p, 0x5a, MIB);
	}
	forever();
}

static int shm(unsigned long mib)
{
	int id = shmget(IPC_PRIVATE, mib * MIB, IPC_CREAT | 0600);
	char *p;

	if (id < 0) {
		perror("hog: shmget");
		return 1;
	}
	p = shmat(id, NULL, 0);
	if (p == (void *)-1) {
		perror("hog: shmat");
		return 1;
	}
	memset(p, 0x5a, mib * MIB);
	shmdt(p);
	printf("hog: left segment %d of %lu MiB\n", id, mib);
	return 0;
}

static int shmcount(const char *file)
{
	struct shm_info info;
	int used = shmctl(0, SHM_INFO, (struct shmid_ds *)&info);
	FILE *f = fopen(file, "w");

	if (!f || used < 0)
		return 1;
	fprintf(f, "%d segments, %lu pages\n", info.used_ids, (unsigned long)info.shm_tot);
	return fclose(f) ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "fork"))
		fork_bomb();
	if (argc == 3 && !strcmp(argv[1], "alloc"))
		alloc(strtoul(argv[2], NULL, 10));
	if (argc == 3 && !strcmp(argv[1], "shm"))
		return shm(strtoul(argv[2], NULL, 10));
	if (argc == 3 && !strcmp(argv[1], "shmcount"))
		return shmcount(argv[2]);
	fprintf(stderr, "usage: hog fork | alloc MIB | shm MIB | shmcount FILE\n");
	return 2;
}
