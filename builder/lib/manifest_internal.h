/* Manifest: functions exported only for the unit tests (and test drivers); not part of the contract. */
#ifndef MKI_MANIFEST_INTERNAL_H
#define MKI_MANIFEST_INTERNAL_H

#include "manifest.h"

/** Read the text form; 0, negative errno, or -MKI_E_PARSE (logged with file:line). */
int manifest_load(struct manifest *m, const char *file);

#endif
