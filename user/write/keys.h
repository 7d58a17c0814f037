/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The keys the writer puts in args, as X-macro lists, and the macros
 * that write them: a key outside the lists does not compile, so the
 * list that user keys are checked against (writer_owns_key) is the list
 * of what is written. Internal to write/writer.c and write/meta.c; the
 * IO_ARG and GPU_ARG macros of write/writer.h name them for callers. */
#ifndef WRITE_KEYS_H
#define WRITE_KEYS_H

#include "lib/json.h"

/* Keys the writer puts in an event's args beside the context (I/O,
 * ioctls, process events, start and end); a user's context key among
 * them, or among the syscall arguments, is renamed user_<key>. */
#define EVENT_KEYS(X)                                                         \
	X(syscall) X(ret) X(fhash) X(fhash2) X(fname) X(fname2)              \
	X(fname_truncated) X(fname2_truncated) X(dir) X(type) X(nr) X(size)  \
	X(req_name) X(device) X(kind) X(exit_code) X(signal) X(core_dumped)  \
	X(privileged) X(cmd) X(cmd_hash) X(exec_hash) X(cwd) X(ppid) X(date) \
	X(version) X(num_events) X(lost)
/* Keys every X event has, and those a region event adds. ns10 is no
 * longer written but stays taken: older traces' readers take it for time. */
#define REGION_KEYS(X)                                                        \
	X(hhash) X(level) X(p_idx) X(ns10d) X(ns10) X(phase)          \
	X(phase_cat) X(count) X(unbalanced)

/* Keys of the I/O the kernel sees outside syscalls (mmap runs, io_uring,
 * AIO) and of the totals it folds: a user's context key of the same name
 * is renamed user_<key>. */
#define IO_KEYS(X)                                                            \
	X(fd) X(offset) X(pages) X(faults) X(misses) X(op) X(opcode) X(fixed)   \
	X(span) X(calls) X(errors) X(span_ns) X(hist) X(folded)

/* Keys of the GPU and collective calls (bpf/gpu.h): renamed as IO_KEYS. */
#define GPU_KEYS(X)                                                           \
	X(bytes) X(copy_kind) X(stream_id) X(kernel) X(grid_x) X(grid_y)      \
	X(grid_z) X(block_x) X(block_y) X(block_z) X(shared_bytes)            \
	X(datatype) X(comm_rank) X(comm_size) X(comm_id) X(root) X(peer) X(api)  \
	X(via)

/* Keys only start, end and --flight's record have: a context key may
 * share their name. */
#define LIFECYCLE_KEYS(X) X(rank) X(world_size) X(steps) X(steps_active) X(features) \
	X(reason) X(trigger_step) X(trigger_dur_ns) X(median_ns) X(window_from)      \
	X(window_to) X(window_s) X(window_events) X(capped) X(dump) X(flight_dumps)  \
	X(flight_skipped) X(cfg) X(build) X(used) X(app)

/* Keys of format v2's aggregated records (DFTracer's): the calls folded,
 * and each number as its sum, least and most (or plain, for one call).
 * dur_bounds says that dur_min and dur_max are bounds (the kernel's log2
 * buckets), not the times seen. */
#define AGG_KEYS(X) X(dft_cnt) X(dur) X(dur_sum) X(dur_min) X(dur_max) X(dur_bounds) \
	X(ret_sum) X(size_sum) X(bytes_sum)

enum writer_key {
#define KEY_ENUM(k) WK_##k,
	EVENT_KEYS(KEY_ENUM) REGION_KEYS(KEY_ENUM) LIFECYCLE_KEYS(KEY_ENUM)
	IO_KEYS(KEY_ENUM) GPU_KEYS(KEY_ENUM) AGG_KEYS(KEY_ENUM)
#undef KEY_ENUM
};

/* ,"k": for a key of the lists above (anything else does not compile). */
#define KEY(k) ",\"" #k "\":"
#define JB_KEY(b, k) jb_mem((b), KEY(k), sizeof(KEY(k)) - 1 + 0 * WK_##k)
#define JB_KEY_INT(b, k, v) (JB_KEY((b), k), jb_i64((b), (v)))
#define JB_KEY_STR(b, k, s, n) (JB_KEY((b), k), jb_str((b), (s), (n)))
/* ,"k":"<16 hex digits>" */
#define JB_KEY_HASH(b, k, h) \
	(JB_KEY((b), k), jb_char((b), '"'), jb_hex16((b), (h)), jb_char((b), '"'))

#endif
