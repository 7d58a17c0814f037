/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* --torch: where the dftrace Python package is, and the environment that
 * makes a launched interpreter load its start-up hook. */
#ifndef CAPTURE_TORCHENV_H
#define CAPTURE_TORCHENV_H

#include <stddef.h>

/* Puts dftrace_boot (its sitecustomize.py patches torch when imported)
 * and the package on PYTHONPATH. 0, or -ENOENT with a message in err. */
int torch_environment(char *err, size_t errlen);

#endif
