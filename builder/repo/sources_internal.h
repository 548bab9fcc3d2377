/* Sources: functions exported only for the unit tests (and test drivers); not part of the contract. */
#ifndef MKI_SOURCES_INTERNAL_H
#define MKI_SOURCES_INTERNAL_H

#include "sources.h"

/**
 * Decode every ASCII-armored OpenPGP block in `text` into `out` (binary packets, concatenated).
 * Returns 0, or -MKI_E_PARSE when no well-formed block is found.
 */
int sources_dearmor(const char *text, struct buf *out);

#endif
