/*
 * Debian's 64-bit time_t transition (trixie): on the 32-bit architectures other than i386 the
 * libraries whose ABI has time_t or off_t in it were rebuilt with 64-bit time_t and renamed
 * (libssl3 -> libssl3t64). There the new package neither provides the old name nor runs what
 * was built against it; elsewhere it provides the old name. Which is which is read from the
 * indexes (Breaks and Provides), never from a list: this module knows only the naming rule.
 */
#ifndef MKI_T64_H
#define MKI_T64_H

/* Why a binary built against the old library must not run with the new one. */
#define T64_WHY "time_t and off_t related structures changed size, so a binary built against " \
		"the old library can crash or corrupt data with the new one even where it links"

/**
 * Is `new_name` a name the transition gave library package `old`? That is `old` with "t64"
 * inserted ("libssl3t64", "libglib2.0-0t64", "libcurl3t64-gnutls" for "libcurl3-gnutls"), or
 * with "t64" in place of a suffix of one or two letters and digits after the soname
 * ("libqt5core5t64" for "libqt5core5a"). The caller checks the index data: the new package
 * must also Break or Replace `old`.
 */
int t64_renamed(const char *old, const char *new_name);

#endif
