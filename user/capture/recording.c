// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "capture/recording.h"

_Static_assert((int)REC_FOLD > (int)DFT_EV__COUNT, "a recording's own kinds are above the ring's");

void recording_put(FILE **f, const void *data, uint32_t size)
{
	if (*f && (fwrite(&size, sizeof(size), 1, *f) != 1 || fwrite(data, size, 1, *f) != 1)) {
		fclose(*f);
		*f = NULL;
	}
}
