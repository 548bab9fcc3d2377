/*
 * The remote layer cache: layers (layer.h) kept as OCI artifacts in a repository of an OCI
 * distribution registry (Distribution, Harbor, GitLab's, Gitea's), through libcurl. One layer is
 * one image manifest (application/vnd.oci.image.manifest.v1+json) tagged `layer-KEY` whose
 * artifactType is REGISTRY_ARTIFACT_TYPE, whose config is the empty descriptor ORAS writes, whose
 * one layer is the layer file (REGISTRY_LAYER_TYPE) and whose annotations name the layer key and
 * carry the builder's signature (layersign.h). No credential is ever logged.
 */
#ifndef MKI_REGISTRY_H
#define MKI_REGISTRY_H

#include <stdint.h>

#include "lib/str.h"

#define REGISTRY_MANIFEST_TYPE "application/vnd.oci.image.manifest.v1+json"
#define REGISTRY_ARTIFACT_TYPE "application/vnd.mkimage.layer.v1"
#define REGISTRY_LAYER_TYPE "application/vnd.mkimage.layer.v1"
#define REGISTRY_EMPTY_TYPE "application/vnd.oci.empty.v1+json"
#define REGISTRY_ANN_KEY "org.mkimage.layer.key"
#define REGISTRY_ANN_SIG "org.mkimage.layer.signature"
#define REGISTRY_ANN_SIGNER "org.mkimage.layer.signer"
#define REGISTRY_TAG_LEN (6 + 64)   /* "layer-" and the key */
#define REGISTRY_DIGEST_LEN (7 + 64) /* "sha256:" and the hex digest */
#define REGISTRY_MANIFEST_MAX (64u << 10)

/* What a manifest says of its layer. */
struct registry_layer {
	char digest[REGISTRY_DIGEST_LEN + 1];
	uint64_t size;
	char *key;       /* the layer key it names */
	char *signature; /* base64; NULL: unsigned */
	char *signer;    /* the signing key's fingerprint; NULL: unsigned */
};

struct registry;

/* How a registry is reached (all borrowed for registry_open's call only). */
struct registry_access {
	const char *auth;              /* "user:password"; NULL: from auth_files */
	const struct strv *auth_files; /* docker/podman auth.json files, in order; may be NULL */
	const char *token_hosts;       /* other realms the credentials may go to (regrealm.h) */
	long stall;                    /* seconds below 1 byte/s that cut a transfer; 0: 30 */
};

/**
 * A repository `url` (http(s)://HOST[:PORT]/REPO/PATH) with the credentials `a->auth` or,
 * without it, those of the first of `a->auth_files` that has an entry for HOST[:PORT]. 0, or
 * -EINVAL with the reason in `why` (a URL of another shape).
 */
int registry_open(struct registry **out, const char *url, const struct registry_access *a,
		  struct buf *why);
void registry_free(struct registry *g);
/** The URL as given, for messages. */
const char *registry_url(const struct registry *g);

/**
 * Bound every request from now on: connecting, a token exchange, redirects, the body - all of it
 * ends by `deadline` (log_now() seconds), cut there if need be; such a request, and one asked
 * for after it, fails with -ETIMEDOUT, `why` saying how far it got. 0: no deadline, only 10 s to
 * connect, the stall rule and 60 s for a request without a blob.
 */
void registry_set_deadline(struct registry *g, double deadline);

/** `tag` (REGISTRY_TAG_LEN + 1 bytes) for the layer named `key` (64 hex digits). */
void registry_tag(const char *key, char *tag);

/**
 * Read the manifest `text` into `l`. 0, or -EBADMSG with what is wrong in `*why` (static): not
 * JSON, another media or artifact type, not one layer, a malformed digest, no layer key.
 */
int registry_manifest_parse(const char *text, size_t len, struct registry_layer *l,
			    const char **why);
/** The manifest of `l` (digest, size, key, signature) as registry_manifest_parse reads it. */
void registry_manifest_build(const struct registry_layer *l, struct buf *out);
void registry_layer_release(struct registry_layer *l);

/**
 * "user:password" for `host` (HOST[:PORT]) from the auth file `json`: its "auths" entry's base64
 * "auth", keyed by the host or by a URL of it. 0 and a new *userpass, -ENOENT, or -EBADMSG.
 */
int registry_auth_lookup(const char *json, size_t len, const char *host, char **userpass);

/**
 * The manifest tagged `tag` into `l`. 0; -ENOENT when the registry has no such tag; else a
 * negative code with the reason in `why` (HTTP status, connection, malformed manifest; -EACCES
 * also for a token realm its credentials may not go to, -ETIMEDOUT past the deadline).
 */
int registry_get_manifest(struct registry *g, const char *tag, struct registry_layer *l,
			  struct buf *why);

/** 1 when the registry has a manifest tagged `tag`, 0 when not, or a code with `why`. */
int registry_has_manifest(struct registry *g, const char *tag, struct buf *why);

/**
 * The blob of `l` into the empty file `fd`: at most l->size bytes are accepted, and it must be
 * exactly that long and hash to l->digest. 0 or a negative code with the reason in `why`.
 */
int registry_get_blob(struct registry *g, const struct registry_layer *l, int fd,
		      struct buf *why);

/**
 * Push the blob `fd` (l->size bytes hashing to l->digest), unless the registry has it, then the
 * empty config and the manifest of `l` under `tag`. 0 or a negative code with the reason in `why`.
 */
int registry_push(struct registry *g, const char *tag, int fd, const struct registry_layer *l,
		  struct buf *why);

#endif
