/*
 * Where a layer registry's credentials may go (registry.h). A registry that wants a bearer token
 * names the service handing it out ("WWW-Authenticate: Bearer realm=URL"), and the credentials
 * are sent there. docker's and podman's clients send them to any realm named; mkimage sends
 * them only to the registry's own HOST[:PORT] (a port is another server: on a shared host any
 * user may listen on one), never from an https registry to an http realm, unless the farm lists
 * the realm's host in MKIMAGE_REGISTRY_TOKEN_HOSTS (mkimage(7), "Layer registry").
 */
#ifndef MKI_REGREALM_H
#define MKI_REGREALM_H

#include "lib/str.h"

/**
 * May the credentials for the registry at `registry` (http(s)://HOST[:PORT]/...) go to the token
 * realm `realm`? 0 when it is on the registry's HOST[:PORT] (default ports made explicit, the
 * host in any case) with the registry's scheme or https, or when `allowed` lists it: entries
 * HOST[:PORT] (an https realm, or an http one under an http registry), the same with the
 * prefix "http://" (also in the clear), separated by commas or spaces; NULL allows nothing more.
 * -EACCES with the reason and the way out in `why`; -EINVAL when `realm`, or `registry`, is no
 * http(s) URL of a host (said).
 */
int regrealm_check(const char *registry, const char *realm, const char *allowed, struct buf *why);

#endif
