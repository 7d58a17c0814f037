/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The category of dftrace.profiler's records (usdt/python/dftrace/
 * profiler.py): clock anchors and where each torch trace went. They are
 * the merge's bookkeeping, so --steps' window never drops them.
 */
#ifndef MODEL_PROFILER_H
#define MODEL_PROFILER_H

#define DFT_PROFILER_CAT "dftrace.profiler"

#endif
