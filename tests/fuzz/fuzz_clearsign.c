/* Fuzz the InRelease clearsign splitter: only text inside the signed block may come out. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/err.h"
#include "lib/log.h"
#include "repo/indexes_ctx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct buf out = { 0 };
	int ret;

	log_set_level(LOG_QUIET);
	ret = indexes_signed_text((const char *)data, size, &out);
	if (ret == 0 && out.len > size)
		abort(); /* the signed text can never be longer than the message */
	if (ret != 0 && ret != -MKI_E_PARSE && ret != -MKI_E_SIGNATURE)
		abort();
	buf_release(&out);
	return 0;
}
