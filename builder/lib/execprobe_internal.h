/* Execprobe: functions exported only for the unit tests (and test drivers); not part of the contract. */
#ifndef MKI_EXECPROBE_INTERNAL_H
#define MKI_EXECPROBE_INTERNAL_H

#include "execprobe.h"

/** The probe program's bytes (for unit tests); `*len` gets its size. */
const unsigned char *execprobe_ia32_image(unsigned *len);

#endif
