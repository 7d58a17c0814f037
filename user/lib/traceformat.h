/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * DFTracer's two trace layouts, as the writer and the readers both need
 * them: v1 (a JSON array of Chrome Trace events, "ph" a letter) and v2
 * (DFTracer 2.1.1 and later, docs/trace_format.rst: one object a line, no
 * brackets, an integer "ph" and an integer "type", the layer, on every
 * record). Both numberings are DFTracer's, append-only.
 */
#ifndef LIB_TRACEFORMAT_H
#define LIB_TRACEFORMAT_H

enum trace_format { TRACE_V1, TRACE_V2 };

/* v2's "ph": macros, so that the writer's literals spell them
 * ("\"ph\":" V2_STR(V2_PH_COMPLETE)). */
#define V2_PH_UNKNOWN 0
#define V2_PH_COMPLETE 1	/* was "X" */
#define V2_PH_COUNTER 2		/* was "C" */
#define V2_PH_AGGREGATED 3	/* new: many calls folded, args.dft_cnt */
#define V2_PH_METADATA 4	/* was "M" */
#define V2_STR_(n) #n
#define V2_STR(n) V2_STR_(n)

/* v2's "type": value and name. 0 is never written. */
#define V2_TYPES(X)                                                        \
	X(1, DFTRACER) X(2, C_APP) X(3, LIBC_IO) X(4, HIP) X(5, HDF5)         \
	X(6, PYTHON) X(7, PSUTIL) X(8, FINSTRUMENT) X(9, CPP_APP) X(10, MPI) \
	X(11, CUDA)

enum v2_type {
	V2_UNKNOWN = 0,
#define V2_TYPE_ENUM(v, n) V2_##n = v,
	V2_TYPES(V2_TYPE_ENUM)
#undef V2_TYPE_ENUM
	V2__COUNT
};

/* The letter a v2 "ph" stands for, as the readers take events: an
 * aggregated record is a complete one (its calls and time in its args,
 * as dftrace-bpf's v1 totals); 0 for a value DFTracer does not define. */
static inline char v2_ph_letter(long long ph)
{
	switch (ph) {
	case V2_PH_COMPLETE:
	case V2_PH_AGGREGATED:
		return 'X';
	case V2_PH_COUNTER:
		return 'C';
	case V2_PH_METADATA:
		return 'M';
	}
	return 0;
}

#endif
