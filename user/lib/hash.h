/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The string hash of every hash in a trace (fhash, hhash, cmd_hash...). */
#ifndef LIB_HASH_H
#define LIB_HASH_H

#include <stddef.h>
#include <stdint.h>

/* wyhash of n bytes: the same value on every host. */
uint64_t dft_hash64(const void *s, size_t n);

#endif
