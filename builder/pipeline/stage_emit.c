/* The last stage (stage.h): lock, SBOM and report beside the image, and the summary line. */
#include "stage.h"
#include "stage_ctx.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "configure/overlay.h"
#include "emit/report.h"
#include "emit/sbom.h"
#include "image/image.h"
#include "image/tarout.h"
#include "lib/err.h"
#include "lib/hash.h"
#include "lib/json.h"
#include "lib/log.h"
#include "repo/twinsrc.h"
#include "resolve/resolve.h"

/* The report's "update" member: the bundle, what it is for and how it was signed. */
static void update_json(const struct recipe *r, const struct build *b, struct buf *out)
{
	const struct rauc_bundle *u = &b->bundle_info;
	size_t i;

	buf_adds(out, "  \"update\": { \"format\": \"rauc\", \"path\": ");
	json_str(out, b->bundle);
	buf_addf(out, ", \"bytes\": %" PRIu64 ", \"sha256\": ", u->bytes);
	json_str(out, u->sha256);
	buf_adds(out, ",\n    \"compatible\": ");
	json_str(out, r->update.compatible);
	buf_adds(out, ", \"version\": ");
	json_str(out, r->update.version);
	buf_adds(out, ", \"slots\": [");
	for (i = 0; i < r->update.slots.n; i++) {
		buf_adds(out, i ? ", " : " ");
		json_str(out, r->update.slots.v[i]);
	}
	buf_adds(out, " ],\n    \"verity_hash\": ");
	json_str(out, u->verity_hash);
	buf_addf(out, ", \"payload_bytes\": %" PRIu64 ", \"signature_bytes\": %" PRIu64
		 ", \"cert\": ", u->payload_bytes, u->signature_bytes);
	if (r->update.cert)
		json_str(out, r->update.cert);
	else
		buf_adds(out, "null"); /* signed offline */
	buf_adds(out, ", \"signed\": ");
	buf_adds(out, r->update.sign_offline ? "false, \"manifest\": " : "true");
	if (r->update.sign_offline)
		json_str(out, b->bundle_manifest);
	buf_adds(out, " },\n");
}

/* The image's companions: lock, SBOM and build report beside it. */
static int write_outputs(struct build_opts *o, const struct recipe *r, struct build *b)
{
	struct buf overlays = { 0 }, net = { 0 }, native = { 0 }, ixuse = { 0 }, upd = { 0 };
	const char *bname = b->bundle ? strrchr(b->bundle, '/') : NULL;
	struct sbom_bundle sb = { bname ? bname + 1 : b->bundle, b->bundle_info.sha256,
				  "RAUC update bundle (verity format) of the image's root partition" };
	struct stat st;
	const char *base;
	int ret = b->digests.whole[0] ? 0 : hash_file_hex(o->output, HASH_SHA256, b->digests.whole);

	memcpy(b->rep.image_sha256, b->digests.whole, sizeof(b->digests.whole));

	if (!ret && stat(o->output, &st) == 0)
		b->rep.image_bytes = (uint64_t)st.st_size;
	if (!ret && !o->st.locked)
		ret = resolve_write_lock(&b->plan, r, &b->indexes, &b->twins,
					 twinsrc_origin(&b->indexes), o->st.lock_file);
	base = strrchr(o->output, '/');
	if (!ret)
		ret = sbom_write(&b->plan, r, b->shipped.v ? &b->shipped : NULL,
				 b->bundle ? &sb : NULL, b->staging.root,
				 base ? base + 1 : o->output, b->rep.image_sha256,
				 o->st.source_date_epoch, b->sbom_file);
	if (ret) {
		log_error("cannot write the lock or SBOM beside '%s': %s", o->output,
			  err_text(ret));
		return ret;
	}
	b->rep.image = o->output;
	b->rep.lock = o->st.lock_file;
	b->rep.sbom = b->sbom_file;
	b->rep.bytes_downloaded = b->fetch.bytes_downloaded;
	b->rep.files_downloaded = b->fetch.files_downloaded;
	b->rep.files_cached = b->fetch.files_cached;
	b->rep.filtered = b->staging.filtered;
	b->rep.warnings = log_warning_count();
	if (b->overlays)
		overlay_report_json(b->overlays, &overlays);
	b->rep.overlays = overlays.p;
	b->rep.boot = &b->boot;
	b->rep.disk = b->disk.p;
	if (b->bundle)
		update_json(r, b, &upd);
	b->rep.update = upd.p;
	b->rep.layer_outcome = layer_outcome(b->layer);
	b->rep.layer_key = layer_key(b->layer);
	b->rep.version = MKI_VERSION;
	b->rep.source_date_epoch = o->st.source_date_epoch;
	if (!r->disk.set)
		image_fs_uuid(o->output, 0, b->rep.fs_uuid);
	stage_network_json(&net);
	report_native_json(&native, !o->st.no_native_tools, &b->twins,
			   b->twins.n ? twinsrc_origin(&b->indexes) : NULL,
			   b->configured_here ? &b->python_emulated : NULL);
	b->rep.network = net.p;
	b->rep.native_tools = native.p;
	indexes_report_json(&b->indexes, &ixuse);
	b->rep.indexes = ixuse.p;
	b->rep.total_secs = log_now() - o->started;
	ret = report_write(&b->rep, &b->plan, r, b->report_file);
	b->rep.overlays = b->rep.network = b->rep.native_tools = b->rep.indexes = NULL;
	buf_release(&overlays);
	buf_release(&net);
	buf_release(&native);
	buf_release(&ixuse);
	b->rep.update = NULL;
	buf_release(&upd);
	if (ret)
		log_error("cannot write the build report '%s': %s", b->report_file, err_text(ret));
	return ret;
}

/*
 * The one line a build prints on stdout, last, for a farm to parse (mkimage(1), "SUMMARY LINE"):
 * the file that stays (the compressed one when asked), its sha256 and size, the package count and
 * the wall time. Everything else goes to stderr.
 */
static int print_summary(const struct build_opts *o, const struct build *b)
{
	const char *path = b->compressed ? b->compressed : o->output;
	char sha[65];
	struct stat st;
	int ret = 0;

	if (b->compressed)
		ret = hash_file_hex(path, HASH_SHA256, sha);
	else
		memcpy(sha, b->rep.image_sha256, sizeof(sha));
	if (!ret && stat(path, &st))
		ret = -errno;
	if (ret)
		return log_errno(-MKI_E_IMAGE, "cannot read '%s' back for the summary line: %s",
				 path, strerror(-ret));
	printf("mkimage: ok %s sha256=%s size=%llu packages=%zu seconds=%.1f\n", path, sha,
	       (unsigned long long)st.st_size, b->plan.n, log_now() - o->started);
	return fflush(stdout) ? log_errno(-MKI_E_IMAGE, "cannot write the summary line: %m") : 0;
}

/* Lock, SBOM and report beside the image; the summary line. */
int stage_outputs(struct build_opts *o, const struct recipe *r, struct build *b)
{
	int ret = write_outputs(o, r, b);

	if (!ret && b->sdk && o->sdk_dir && (ret = tarout_extract(o->output, o->sdk_dir)) == 0)
		log_info("the SDK unpacked as '%s'", o->sdk_dir);
	if (!ret && b->compressed && unlink(o->output))
		ret = log_errno(-errno, "cannot remove '%s' after compressing it: %m", o->output);
	if (!ret)
		log_info("%s written to '%s' (lock, SBOM and report beside it)",
			 r->disk.set ? "disk" : "image", b->compressed ? b->compressed : o->output);
	return ret ? ret : print_summary(o, b);
}
