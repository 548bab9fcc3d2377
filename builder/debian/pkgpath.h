/*
 * Which names a package may ship, as dpkg decides it: names dpkg refuses to unpack, and dpkg's
 * own administrative directory, which is the database and never package content.
 */
#ifndef MKI_PKGPATH_H
#define MKI_PKGPATH_H

/**
 * Check a data.tar member name as stored (`raw`, before normalization). 0, or -EINVAL with
 * `*why` set (static text) when dpkg would refuse it: a newline anywhere (dpkg writes one name
 * per line to the .list file, so "a\netc/shadow" would make a later purge delete /etc/shadow, and
 * a trailing one breaks every later dpkg run).
 */
int pkgpath_check_name(const char *raw, const char **why);

/**
 * Check a normalized tree path (no leading '/', as in the manifest) of type `type` (a manifest
 * MF_* letter) against dpkg's database directory: under var/lib/dpkg a package may ship only the
 * directories dpkg itself and base-files ship (var/lib/dpkg and its alternatives, info, parts,
 * triggers and updates subdirectories); anything else there would forge the database. 0 or
 * -EPERM with `*why` set.
 */
int pkgpath_check_admin(const char *path, char type, const char **why);

#endif
