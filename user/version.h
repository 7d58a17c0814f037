/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef VERSION_H
#define VERSION_H
#define DFTRACE_VERSION "0.1.0"
#endif
