/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the administrator allows through the service
 * (/etc/dftrace-bpf/policy), one directive a line, '#' comments:
 *   host-wide user NAME     NAME may trace beyond their own processes:
 *   host-wide group NAME    -a, --uid, --comm, --cgroup (members of NAME)
 *   max-traces N            traces a user runs at once (default 4)
 *   max-starts N            traces a user starts a minute (default 60)
 *   max-ring MIB            a trace's ring buffer, -b (default 64)
 *   max-flight-mem MIB      --flight-mem (default 256)
 * A line it does not know stops the service from starting.
 */
#ifndef SERVICE_POLICY_H
#define SERVICE_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define POLICY_MAX_NAMES 64

struct policy {
	uid_t host_wide_users[POLICY_MAX_NAMES];
	int nusers;
	gid_t host_wide_groups[POLICY_MAX_NAMES];
	int ngroups;
	uint32_t max_traces, max_starts;
	uint64_t max_ring_bytes, max_flight_bytes;
};

/* The defaults, then path's directives (a missing file: the defaults
 * alone): 0, or -errno with "FILE:LINE: why" in err. */
int policy_load(struct policy *p, const char *path, char *err, size_t errlen);
/* The same from text (fuzzed). */
int policy_parse(struct policy *p, const char *text, size_t len, const char *path,
		 char *err, size_t errlen);
/* Whether uid (in groups) may trace host-wide. */
bool policy_host_wide(const struct policy *p, uid_t uid, const gid_t *groups, int ngroups);

#endif
