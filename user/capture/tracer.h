/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* dftrace-bpf's tracing: options, then the run until the traced tree
 * exits, a signal or the duration; returns the exit status. */
#ifndef CAPTURE_TRACER_H
#define CAPTURE_TRACER_H

int tracer_main(int argc, char **argv);

#endif
