// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The maps and configuration every feature shares, defined once (see
 * core.bpf.h). */
#define DFT_CORE_UNIT
#include "core.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";
