/*
 * Which ssh-keygen and openssl invocations mkimage-exec lets a native build answer (execshim.h):
 * making, reading and converting keys and certificates in files. Linked into the static
 * mkimage-exec and the unit tests; nothing here allocates, logs or writes anything.
 */
#ifndef MKI_EXECKEYS_H
#define MKI_EXECKEYS_H

/** OpenSSL's configuration when OPENSSL_CONF does not name another: OPENSSLDIR's, on Debian. */
#define EXECKEYS_OPENSSL_CONF "/usr/lib/ssl/openssl.cnf"

/**
 * Whether ssh-keygen's native build may run ARGS (argv as binfmt_misc's flag P gives it: [self,
 * FILE, ARGV0, ARGS...]): key generation and the file modes listed in execkeys.c, options its
 * getopt reads, no operand, no PKCS#11 or FIDO provider, and OpenSSL's configuration `conf`
 * (EXECKEYS_OPENSSL_CONF) loading no module.
 */
int execkeys_ssh_keygen(int argc, char **argv, const char *conf);
/**
 * Whether openssl's native build may run ARGS: one of the file commands listed in execkeys.c, no
 * option that loads an engine or a provider, and neither `conf` nor a -config file loading one.
 */
int execkeys_openssl(int argc, char **argv, const char *conf);

#endif
