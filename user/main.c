// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* dftrace-bpf: the tracer (capture/ -> correlate/ -> write/). */
#include "capture/tracer.h"

int main(int argc, char **argv)
{
	return tracer_main(argc, argv);
}
