/*
 * The OCI distribution protocol over libcurl's easy interface (registry.h): one request at a
 * time, each bounded (the caller's deadline, connect, stall, body size), basic authentication or
 * the bearer-token exchange a registry asks for with "WWW-Authenticate: Bearer realm=...", the
 * credentials going only where regrealm.h allows.
 */
#include "registry.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/err.h"
#include "lib/fsutil.h"
#include "lib/hash.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/readfile.h"
#include "regjson.h"
#include "regrealm.h"

#define CONNECT_TIMEOUT 10L  /* seconds: a registry on the farm's network answers at once */
#define SMALL_TIMEOUT 60L    /* seconds for a request without a blob, without a deadline */
#define TOKEN_MAX (64u << 10)
#define AUTH_FILE_MAX (1u << 20)
#define HEADER_MAX 4096
/* The empty config of the OCI artifact guidance: "{}" */
#define EMPTY_DIGEST "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"

struct registry {
	char *url;    /* as given */
	char *origin; /* scheme://host[:port] */
	char *host;   /* host[:port]: the auth files' key */
	char *repo;
	char *user, *password; /* NULL: anonymous */
	char *token;  /* a bearer token, once the registry asked for one */
	char *token_hosts; /* other realms the credentials may go to; NULL: none */
	long stall;
	double deadline; /* log_now() seconds every request ends by; 0: none */
};

/* One response: the body into a buffer (at most `body_max`) or into `fd` (at most `max`). */
struct resp {
	long status;
	struct buf body;
	size_t body_max;
	int fd;
	uint64_t max, got;
	struct hash h;
	int hashing, too_big, write_err;
	curl_off_t sent; /* bytes of an upload sent so far */
	char *location, *www_auth;
};

/* One request's body: `mem` or, when `fd` >= 0, `size` bytes read from `fd`. */
struct req_body {
	const char *mem;
	size_t len;
	int fd;
	uint64_t size;
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

static void curl_init(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
}

static size_t on_body(char *p, size_t size, size_t nmemb, void *data)
{
	struct resp *rs = data;
	size_t n = size * nmemb;

	if (rs->fd < 0) {
		if (rs->body.len + n > rs->body_max) {
			rs->too_big = 1;
			return 0;
		}
		buf_add(&rs->body, p, n);
		return n;
	}
	if (rs->got + n > rs->max) {
		rs->too_big = 1;
		return 0;
	}
	rs->write_err = fsutil_write_all(rs->fd, p, n);
	if (rs->write_err)
		return 0;
	if (rs->hashing)
		hash_update(&rs->h, p, n);
	rs->got += n;
	return n;
}

/* The value of header `name` in the line `p`, as a new string; NULL for another header. */
static char *header_value(const char *p, size_t n, const char *name)
{
	size_t k = strlen(name);

	if (n <= k || strncasecmp(p, name, k) || p[k] != ':')
		return NULL;
	p += k + 1;
	n -= k + 1;
	while (n && (*p == ' ' || *p == '\t'))
		p++, n--;
	while (n && (p[n - 1] == '\r' || p[n - 1] == '\n' || p[n - 1] == ' '))
		n--;
	return xstrndup(p, n);
}

static size_t on_header(char *p, size_t size, size_t nmemb, void *data)
{
	struct resp *rs = data;
	size_t n = size * nmemb;
	char *v;

	if (n > HEADER_MAX)
		return n;
	if ((v = header_value(p, n, "location"))) {
		free(rs->location);
		rs->location = v;
	} else if ((v = header_value(p, n, "www-authenticate"))) {
		free(rs->www_auth);
		rs->www_auth = v;
	}
	return n;
}

/* SIGINT/SIGTERM ends a transfer at once, not when the blob is in. */
static int on_progress(void *data, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	struct resp *rs = data;

	rs->sent = ulnow;
	return err_interrupted() ? 1 : 0;
}

static size_t on_read(char *p, size_t size, size_t nmemb, void *data)
{
	struct req_body *b = data;
	ssize_t n = read(b->fd, p, size * nmemb);

	return n < 0 ? CURL_READFUNC_ABORT : (size_t)n;
}

static void resp_reset(struct resp *rs)
{
	rs->status = 0;
	rs->got = 0;
	rs->sent = 0;
	rs->too_big = rs->write_err = 0;
	buf_release(&rs->body);
	free(rs->location);
	free(rs->www_auth);
	rs->location = rs->www_auth = NULL;
}

static void resp_release(struct resp *rs)
{
	resp_reset(rs);
	if (rs->hashing)
		hash_release(&rs->h);
	rs->hashing = 0;
}

static void set_body(CURL *h, const char *method, struct req_body *in)
{
	if (!strcmp(method, "HEAD")) {
		curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
	} else if (in && in->fd >= 0) {
		curl_easy_setopt(h, CURLOPT_UPLOAD, 1L);
		curl_easy_setopt(h, CURLOPT_READFUNCTION, on_read);
		curl_easy_setopt(h, CURLOPT_READDATA, in);
		curl_easy_setopt(h, CURLOPT_INFILESIZE_LARGE, (curl_off_t)in->size);
	} else if (in || !strcmp(method, "POST")) {
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, in ? in->mem : "");
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(in ? in->len : 0));
	}
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
}

static void set_auth(struct registry *g, CURL *h, struct curl_slist **hdrs)
{
	char *line;

	if (g->token) {
		line = xasprintf("Authorization: Bearer %s", g->token);
		*hdrs = curl_slist_append(*hdrs, line);
		free(line);
	} else if (g->user) {
		curl_easy_setopt(h, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		curl_easy_setopt(h, CURLOPT_USERNAME, g->user);
		curl_easy_setopt(h, CURLOPT_PASSWORD, g->password);
	}
}

/* A request cut at the deadline, or not started because it has passed: how far it got. */
static int past_deadline(const char *method, const char *url, const struct resp *rs,
			 const struct req_body *in, int started, struct buf *why)
{
	buf_addf(why, "%s '%s' %s", method, url, started ? "was not over in time" :
		 "was not sent: the time for it was over");
	if (started && rs->fd >= 0)
		buf_addf(why, " (%llu of %llu bytes in)", (unsigned long long)rs->got,
			 (unsigned long long)rs->max);
	else if (started && in && in->fd >= 0)
		buf_addf(why, " (%llu of %llu bytes sent)", (unsigned long long)rs->sent,
			 (unsigned long long)in->size);
	return -ETIMEDOUT;
}

/* The whole request within the deadline; without one, a request without a blob within 60 s. */
static void set_timeout(const struct registry *g, CURL *h, const struct resp *rs,
			const struct req_body *in, double left)
{
	if (g->deadline)
		curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)(left * 1000) + 1);
	else if (rs->fd < 0 && !(in && in->fd >= 0))
		curl_easy_setopt(h, CURLOPT_TIMEOUT, SMALL_TIMEOUT);
}

/* Accept, Content-Type and the credentials: the list to free after the request. */
static struct curl_slist *set_headers(struct registry *g, CURL *h, const char *accept,
				      const char *type)
{
	struct curl_slist *hdrs = NULL;
	char *line;

	if (accept) {
		line = xasprintf("Accept: %s", accept);
		hdrs = curl_slist_append(hdrs, line);
		free(line);
	}
	line = xasprintf("Content-Type: %s", type ? type : "application/octet-stream");
	hdrs = curl_slist_append(hdrs, line);
	free(line);
	set_auth(g, h, &hdrs);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	return hdrs;
}

/* One request; 0 with rs->status set, or a negative code with the reason in `why`. */
static int request(struct registry *g, const char *method, const char *url, const char *accept,
		   const char *type, struct req_body *in, struct resp *rs, struct buf *why)
{
	char errbuf[CURL_ERROR_SIZE] = "";
	struct curl_slist *hdrs;
	double left = g->deadline ? g->deadline - log_now() : 0;
	CURL *h;
	CURLcode rc;

	if (g->deadline && left <= 0)
		return past_deadline(method, url, rs, in, 0, why);
	pthread_once(&curl_once, curl_init);
	h = curl_easy_init();
	if (!h)
		return -ENOMEM;
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, !strcmp(method, "GET") ? 1L : 0L);
	curl_easy_setopt(h, CURLOPT_MAXREDIRS, 5L);
	/* Blobs may live elsewhere (a redirect to storage), but never from https to http. */
	curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR,
			 str_starts_with(url, "https:") ? "https" : "http,https");
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, CONNECT_TIMEOUT);
	curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, g->stall);
	set_timeout(g, h, rs, in, left);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "mkimage/" MKI_VERSION);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, rs);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, rs);
	curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(h, CURLOPT_XFERINFODATA, rs);
	curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	hdrs = set_headers(g, h, accept, type);
	set_body(h, method, in);
	rc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &rs->status);
	curl_easy_cleanup(h);
	curl_slist_free_all(hdrs);
	if (rc == CURLE_ABORTED_BY_CALLBACK && err_interrupted())
		return -MKI_E_INTERRUPTED;
	if (rs->write_err)
		return rs->write_err;
	if (rs->too_big) {
		buf_addf(why, "the answer to %s '%s' is longer than %s", method, url,
			 rs->fd < 0 ? "a registry's answer may be" : "its manifest says");
		return -MKI_E_INTEGRITY;
	}
	if (rc == CURLE_OPERATION_TIMEDOUT && g->deadline && log_now() >= g->deadline - 0.1)
		return past_deadline(method, url, rs, in, 1, why);
	if (rc != CURLE_OK) {
		buf_addf(why, "%s '%s': %s", method, url, errbuf[0] ? errbuf : curl_easy_strerror(rc));
		return -MKI_E_NETWORK;
	}
	return 0;
}

/* The parameter `name` of a "Bearer k="v",k="v"" challenge, as a new string; NULL when absent. */
static char *challenge_param(const char *c, const char *name)
{
	size_t k = strlen(name);
	const char *p = c, *end;

	while ((p = strstr(p, name))) {
		if ((p == c || p[-1] == ' ' || p[-1] == ',') && p[k] == '=' && p[k + 1] == '"') {
			p += k + 2;
			end = strchr(p, '"');
			return end ? xstrndup(p, (size_t)(end - p)) : NULL;
		}
		p += k;
	}
	return NULL;
}

static void add_query(struct buf *b, CURL *h, const char *name, const char *value)
{
	char *esc;

	if (!value)
		return;
	esc = curl_easy_escape(h, value, 0);
	buf_addf(b, "%c%s=%s", strchr(b->p, '?') ? '&' : '?', name, esc ? esc : "");
	curl_free(esc);
}

/* The bearer token the challenge `c` asks for, into g->token. 0 or a code with `why`. */
static int get_token(struct registry *g, const char *c, struct buf *why)
{
	char *realm = challenge_param(c, "realm"), *service = challenge_param(c, "service");
	char *scope = challenge_param(c, "scope");
	struct resp rs = { .fd = -1, .body_max = TOKEN_MAX };
	struct buf url = { 0 };
	struct regjson doc = { 0 };
	const char *tok;
	CURL *h = curl_easy_init();
	int ret = -EACCES;

	if (!realm || !h || !(str_starts_with(realm, "https://") || str_starts_with(realm, "http://"))) {
		buf_addf(why, "the registry asks for a bearer token without a usable realm");
		goto out;
	}
	/* Anonymous, nothing is given away: any realm (Docker Hub's is on another host). */
	if (g->user && regrealm_check(g->url, realm, g->token_hosts, why))
		goto out;
	buf_adds(&url, realm);
	add_query(&url, h, "service", service);
	add_query(&url, h, "scope", scope);
	free(g->token);
	g->token = NULL;
	ret = request(g, "GET", url.p, "application/json", NULL, NULL, &rs, why);
	if (!ret && (rs.status != 200 || regjson_parse(rs.body.p, rs.body.len, &doc))) {
		buf_addf(why, "the token service '%s' answered %ld", realm, rs.status);
		ret = -EACCES;
	}
	tok = regjson_str(&doc, "token") ? regjson_str(&doc, "token")
					 : regjson_str(&doc, "access_token");
	if (!ret && (!tok || !*tok || strpbrk(tok, "\r\n"))) {
		buf_addf(why, "the token service '%s' gave no token", realm);
		ret = -EACCES;
	}
	if (!ret)
		g->token = xstrdup(tok);
out:
	regjson_release(&doc);
	resp_release(&rs);
	buf_release(&url);
	if (h)
		curl_easy_cleanup(h);
	free(realm);
	free(service);
	free(scope);
	return ret;
}

/* A request, once more with a bearer token when the registry asks for one. */
static int call(struct registry *g, const char *method, const char *url, const char *accept,
		const char *type, struct req_body *in, struct resp *rs, struct buf *why)
{
	int ret = request(g, method, url, accept, type, in, rs, why);

	if (ret || rs->status != 401 || !rs->www_auth ||
	    strncasecmp(rs->www_auth, "Bearer ", 7))
		return ret;
	ret = get_token(g, rs->www_auth, why);
	if (ret)
		return ret;
	if (in && in->fd >= 0 && lseek(in->fd, 0, SEEK_SET))
		return -errno;
	if (rs->fd >= 0 && (ftruncate(rs->fd, 0) || lseek(rs->fd, 0, SEEK_SET)))
		return -errno;
	if (rs->hashing) {
		hash_release(&rs->h);
		rs->hashing = !hash_init(&rs->h, HASH_SHA256);
	}
	resp_reset(rs);
	return request(g, method, url, accept, type, in, rs, why);
}

/* Why a status is not what was asked: 401/403 say what to do about credentials. */
static int bad_status(const struct registry *g, const char *what, long status, struct buf *why)
{
	buf_addf(why, "%s: the registry answered HTTP %ld", what, status);
	if (status == 401 || status == 403)
		buf_addf(why, " (%s; credentials come from MKIMAGE_REGISTRY_AUTH or an auth file "
			      "for '%s')", g->user ? "the credentials were refused" : "no credentials",
			 g->host);
	return status == 401 || status == 403 ? -EACCES : -MKI_E_NETWORK;
}

/* ---- the repository and its credentials ---- */

static int valid_repo(const char *repo)
{
	const char *p;
	int sep = 1;

	if (!*repo || strlen(repo) > 255)
		return 0;
	for (p = repo; *p; p++) {
		int alnum = (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9');

		if (!alnum && (sep || !strchr("._-/", *p)))
			return 0;
		sep = !alnum;
	}
	return !sep;
}

static int parse_url(struct registry *g, const char *url)
{
	const char *rest = url, *slash;

	if (str_starts_with(url, "http://"))
		rest = url + 7;
	else if (str_starts_with(url, "https://"))
		rest = url + 8;
	else
		return -EINVAL;
	slash = strchr(rest, '/');
	if (!slash || slash == rest || strpbrk(url, "?#@ \t"))
		return -EINVAL;
	g->host = xstrndup(rest, (size_t)(slash - rest));
	g->origin = xstrndup(url, (size_t)(slash - url));
	g->repo = xstrdup(slash + 1);
	if (str_ends_with(g->repo, "/"))
		g->repo[strlen(g->repo) - 1] = '\0';
	return valid_repo(g->repo) ? 0 : -EINVAL;
}

static void set_userpass(struct registry *g, const char *userpass)
{
	const char *colon = strchr(userpass, ':');

	if (!colon)
		return;
	g->user = xstrndup(userpass, (size_t)(colon - userpass));
	g->password = xstrdup(colon + 1);
}

/* The decoded "auth" of one auths entry: base64 of "user:password". */
static int decode_auth(const char *b64, char **userpass)
{
	size_t n = strlen(b64);
	unsigned char *out;
	int len;

	if (!n || n % 4 || n > 4096)
		return -EBADMSG;
	out = xmalloc(n / 4 * 3 + 1);
	len = EVP_DecodeBlock(out, (const unsigned char *)b64, (int)n);
	if (len < 0) {
		free(out);
		return -EBADMSG;
	}
	len -= (b64[n - 1] == '=') + (b64[n - 2] == '=');
	out[len] = '\0';
	if (memchr(out, '\0', (size_t)len) || !strchr((char *)out, ':')) {
		free(out);
		return -EBADMSG;
	}
	*userpass = (char *)out;
	return 0;
}

/* An auths key names `host` as "host", "http(s)://host" or "https://host/v2/" etc. */
static int names_host(const char *k, const char *host)
{
	size_t n = strlen(host);

	if (str_starts_with(k, "https://"))
		k += 8;
	else if (str_starts_with(k, "http://"))
		k += 7;
	return !strncmp(k, host, n) && (!k[n] || k[n] == '/');
}

int registry_auth_lookup(const char *json, size_t len, const char *host, char **userpass)
{
	struct regjson doc;
	const struct regjson *auths;
	size_t i;
	int ret = regjson_parse(json, len, &doc);

	if (ret)
		return ret;
	auths = regjson_get(&doc, "auths");
	ret = auths && auths->type != REGJSON_OBJ ? -EBADMSG : -ENOENT;
	for (i = 0; auths && ret == -ENOENT && i < auths->n; i++) {
		const char *a = regjson_str(&auths->v[i], "auth");

		if (names_host(auths->keys[i], host))
			ret = a ? decode_auth(a, userpass) : -ENOENT;
	}
	regjson_release(&doc);
	return ret;
}

static void find_credentials(struct registry *g, const char *auth, const struct strv *files)
{
	struct buf text = { 0 };
	char *userpass = NULL;
	size_t i;
	int ret;

	if (auth) {
		set_userpass(g, auth);
		return;
	}
	for (i = 0; files && i < files->n && !userpass; i++) {
		buf_release(&text);
		if (readfile_read(files->v[i], AUTH_FILE_MAX, &text, NULL))
			continue;
		ret = registry_auth_lookup(text.p, text.len, g->host, &userpass);
		if (ret == -EBADMSG)
			log_warn("the auth file '%s' is not valid JSON with base64 'auths': ignored",
				 files->v[i]);
		else if (!ret)
			log_debug("layer registry: credentials for '%s' from '%s'", g->host,
				  files->v[i]);
	}
	if (userpass)
		set_userpass(g, userpass);
	free(userpass);
	buf_release(&text);
}

int registry_open(struct registry **out, const char *url, const struct registry_access *a,
		  struct buf *why)
{
	struct registry *g = xcalloc(1, sizeof(*g));

	g->url = xstrdup(url);
	g->stall = a->stall > 0 ? a->stall : 30;
	g->token_hosts = a->token_hosts ? xstrdup(a->token_hosts) : NULL;
	if (parse_url(g, url)) {
		buf_addf(why, "'%s' is no registry repository: write http(s)://HOST[:PORT]/REPO, the "
			      "repository in lower case letters, digits and . _ - /", url);
		registry_free(g);
		*out = NULL;
		return -EINVAL;
	}
	find_credentials(g, a->auth, a->auth_files);
	*out = g;
	return 0;
}

void registry_free(struct registry *g)
{
	if (!g)
		return;
	free(g->url);
	free(g->origin);
	free(g->host);
	free(g->repo);
	free(g->user);
	if (g->password)
		explicit_bzero(g->password, strlen(g->password));
	free(g->password);
	free(g->token);
	free(g->token_hosts);
	free(g);
}

const char *registry_url(const struct registry *g)
{
	return g->url;
}

void registry_set_deadline(struct registry *g, double deadline)
{
	g->deadline = deadline;
}

void registry_tag(const char *key, char *tag)
{
	snprintf(tag, REGISTRY_TAG_LEN + 1, "layer-%.64s", key);
}

/* ---- the manifest ---- */

static int valid_digest(const char *d)
{
	return d && str_starts_with(d, "sha256:") && strlen(d) == REGISTRY_DIGEST_LEN &&
	       hash_sha256_hex_valid(d + 7);
}

/* The one layer of a manifest: its media type, digest and size. */
static const char *parse_layers(const struct regjson *doc, struct registry_layer *l)
{
	const struct regjson *layers = regjson_get(doc, "layers"), *d;
	const char *digest;

	if (!layers || layers->type != REGJSON_ARR || layers->n != 1)
		return "it does not hold exactly one layer";
	d = &layers->v[0];
	if (!regjson_str(d, "mediaType") || strcmp(regjson_str(d, "mediaType"), REGISTRY_LAYER_TYPE))
		return "its layer is not of media type '" REGISTRY_LAYER_TYPE "'";
	digest = regjson_str(d, "digest");
	if (!valid_digest(digest) || regjson_u64(d, "size", &l->size))
		return "its layer has no sha256 digest or no size";
	memcpy(l->digest, digest, REGISTRY_DIGEST_LEN + 1);
	return NULL;
}

static const char *parse_doc(const struct regjson *doc, struct registry_layer *l)
{
	const struct regjson *ann = regjson_get(doc, "annotations");
	const char *t = regjson_str(doc, "mediaType"), *a = regjson_str(doc, "artifactType"), *why;
	uint64_t version;

	if (regjson_u64(doc, "schemaVersion", &version) || version != 2 || !t ||
	    strcmp(t, REGISTRY_MANIFEST_TYPE))
		return "it is no OCI image manifest (schemaVersion 2, " REGISTRY_MANIFEST_TYPE ")";
	if (!a || strcmp(a, REGISTRY_ARTIFACT_TYPE))
		return "its artifactType is not '" REGISTRY_ARTIFACT_TYPE "'";
	why = parse_layers(doc, l);
	if (why)
		return why;
	if (!regjson_str(ann, REGISTRY_ANN_KEY) || !hash_sha256_hex_valid(regjson_str(ann, REGISTRY_ANN_KEY)))
		return "its annotations name no layer key";
	l->key = xstrdup(regjson_str(ann, REGISTRY_ANN_KEY));
	if (regjson_str(ann, REGISTRY_ANN_SIG))
		l->signature = xstrdup(regjson_str(ann, REGISTRY_ANN_SIG));
	if (regjson_str(ann, REGISTRY_ANN_SIGNER))
		l->signer = xstrdup(regjson_str(ann, REGISTRY_ANN_SIGNER));
	return NULL;
}

int registry_manifest_parse(const char *text, size_t len, struct registry_layer *l,
			    const char **why)
{
	struct regjson doc;

	memset(l, 0, sizeof(*l));
	if (regjson_parse(text, len, &doc)) {
		*why = "it is not valid JSON";
		return -EBADMSG;
	}
	*why = parse_doc(&doc, l);
	regjson_release(&doc);
	if (*why) {
		registry_layer_release(l);
		return -EBADMSG;
	}
	return 0;
}

static void ann(struct buf *b, const char *name, const char *value, int more)
{
	json_str(b, name);
	buf_adds(b, ":");
	json_str(b, value);
	buf_adds(b, more ? "," : "");
}

void registry_manifest_build(const struct registry_layer *l, struct buf *out)
{
	buf_addf(out, "{\"schemaVersion\":2,\"mediaType\":\"%s\",\"artifactType\":\"%s\","
		      "\"config\":{\"mediaType\":\"%s\",\"digest\":\"%s\",\"size\":2},"
		      "\"layers\":[{\"mediaType\":\"%s\",\"digest\":\"%s\",\"size\":%llu,"
		      "\"annotations\":{\"org.opencontainers.image.title\":\"layer-%s.mkilayer\"}}],"
		      "\"annotations\":{",
		 REGISTRY_MANIFEST_TYPE, REGISTRY_ARTIFACT_TYPE, REGISTRY_EMPTY_TYPE, EMPTY_DIGEST,
		 REGISTRY_LAYER_TYPE, l->digest, (unsigned long long)l->size, l->key);
	ann(out, REGISTRY_ANN_KEY, l->key, l->signature && l->signer);
	if (l->signature && l->signer) {
		ann(out, REGISTRY_ANN_SIG, l->signature, 1);
		ann(out, REGISTRY_ANN_SIGNER, l->signer, 0);
	}
	buf_adds(out, "}}");
}

void registry_layer_release(struct registry_layer *l)
{
	free(l->key);
	free(l->signature);
	free(l->signer);
	memset(l, 0, sizeof(*l));
}

/* ---- pull ---- */

static char *api_url(const struct registry *g, const char *kind, const char *ref)
{
	return xasprintf("%s/v2/%s/%s/%s", g->origin, g->repo, kind, ref);
}

int registry_get_manifest(struct registry *g, const char *tag, struct registry_layer *l,
			  struct buf *why)
{
	struct resp rs = { .fd = -1, .body_max = REGISTRY_MANIFEST_MAX };
	char *url = api_url(g, "manifests", tag);
	const char *bad;
	int ret = call(g, "GET", url, REGISTRY_MANIFEST_TYPE, NULL, NULL, &rs, why);

	if (!ret && rs.status == 404)
		ret = -ENOENT;
	else if (!ret && rs.status != 200)
		ret = bad_status(g, url, rs.status, why);
	if (!ret && registry_manifest_parse(rs.body.p ? rs.body.p : "", rs.body.len, l, &bad)) {
		buf_addf(why, "the manifest '%s' is refused: %s", url, bad);
		ret = -EBADMSG;
	}
	resp_release(&rs);
	free(url);
	return ret;
}

int registry_get_blob(struct registry *g, const struct registry_layer *l, int fd,
		      struct buf *why)
{
	struct resp rs = { .fd = fd, .max = l->size };
	char *url = api_url(g, "blobs", l->digest), hex[SHA256_HEX_LEN + 1];
	int ret;

	rs.hashing = !hash_init(&rs.h, HASH_SHA256);
	ret = rs.hashing ? call(g, "GET", url, NULL, NULL, NULL, &rs, why) : -ENOMEM;
	if (!ret && rs.status != 200)
		ret = bad_status(g, url, rs.status, why);
	if (!ret && rs.got != l->size) {
		buf_addf(why, "the blob '%s' has %llu bytes, its manifest says %llu", url,
			 (unsigned long long)rs.got, (unsigned long long)l->size);
		ret = -MKI_E_INTEGRITY;
	}
	if (!ret) {
		hash_final_hex(&rs.h, hex);
		rs.hashing = 0;
		if (strcmp(hex, l->digest + 7)) {
			buf_addf(why, "the blob '%s' has SHA-256 %s, not the digest its manifest names",
				 url, hex);
			ret = -MKI_E_INTEGRITY;
		}
	}
	resp_release(&rs);
	free(url);
	return ret;
}

/* ---- push ---- */

int registry_has_manifest(struct registry *g, const char *tag, struct buf *why)
{
	struct resp rs = { .fd = -1, .body_max = REGISTRY_MANIFEST_MAX };
	char *url = api_url(g, "manifests", tag);
	int ret = call(g, "HEAD", url, REGISTRY_MANIFEST_TYPE, NULL, NULL, &rs, why);

	if (!ret && rs.status != 200 && rs.status != 404)
		ret = bad_status(g, url, rs.status, why);
	else if (!ret)
		ret = rs.status == 200;
	resp_release(&rs);
	free(url);
	return ret;
}

static int has_blob(struct registry *g, const char *digest, struct buf *why)
{
	struct resp rs = { .fd = -1, .body_max = REGISTRY_MANIFEST_MAX };
	char *url = api_url(g, "blobs", digest);
	int ret = call(g, "HEAD", url, NULL, NULL, NULL, &rs, why);

	if (!ret)
		ret = rs.status == 200;
	resp_release(&rs);
	free(url);
	return ret;
}

/* Where an upload session goes on: the Location of the POST's answer, made absolute. */
static char *upload_url(const struct registry *g, const char *location, const char *digest)
{
	const char *sep = strchr(location, '?') ? "&" : "?";

	if (location[0] == '/')
		return xasprintf("%s%s%sdigest=%s", g->origin, location, sep, digest);
	return xasprintf("%s%sdigest=%s", location, sep, digest);
}

/* A monolithic upload: POST opens the session, one PUT carries the bytes and the digest. */
static int put_blob(struct registry *g, const char *digest, struct req_body *in, struct buf *why)
{
	struct resp rs = { .fd = -1, .body_max = REGISTRY_MANIFEST_MAX };
	char *url = xasprintf("%s/v2/%s/blobs/uploads/", g->origin, g->repo), *put = NULL;
	int ret = call(g, "POST", url, NULL, NULL, NULL, &rs, why);

	if (!ret && (rs.status != 202 || !rs.location))
		ret = bad_status(g, url, rs.status, why);
	if (!ret) {
		put = upload_url(g, rs.location, digest);
		resp_reset(&rs);
		ret = call(g, "PUT", put, NULL, NULL, in, &rs, why);
	}
	if (!ret && rs.status != 201)
		ret = bad_status(g, "the blob upload", rs.status, why);
	resp_release(&rs);
	free(put);
	free(url);
	return ret;
}

int registry_push(struct registry *g, const char *tag, int fd, const struct registry_layer *l,
		  struct buf *why)
{
	struct req_body blob = { .fd = fd, .size = l->size }, empty = { "{}", 2, -1, 0 };
	struct resp rs = { .fd = -1, .body_max = REGISTRY_MANIFEST_MAX };
	struct buf man = { 0 };
	char *url = NULL;
	int ret = has_blob(g, l->digest, why);

	if (!ret)
		ret = lseek(fd, 0, SEEK_SET) ? -errno : put_blob(g, l->digest, &blob, why);
	if (ret >= 0)
		ret = has_blob(g, EMPTY_DIGEST, why);
	if (!ret)
		ret = put_blob(g, EMPTY_DIGEST, &empty, why);
	if (ret < 0)
		goto out;
	registry_manifest_build(l, &man);
	empty = (struct req_body){ man.p, man.len, -1, 0 };
	url = api_url(g, "manifests", tag);
	ret = call(g, "PUT", url, NULL, REGISTRY_MANIFEST_TYPE, &empty, &rs, why);
	if (!ret && rs.status != 201)
		ret = bad_status(g, url, rs.status, why);
out:
	resp_release(&rs);
	buf_release(&man);
	free(url);
	return ret < 0 ? ret : 0;
}
