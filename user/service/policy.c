// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "service/policy.h"

#define MIB (1ull << 20)
/* a policy is a few lines: a bigger file is not one */
#define POLICY_MAX_BYTES (64u << 10)

static void defaults(struct policy *p)
{
	*p = (struct policy){ .max_traces = 4, .max_starts = 60, .max_ring_bytes = 64 * MIB,
			      .max_flight_bytes = 256 * MIB };
}

static bool number(const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v > max)
		return false;
	*out = v;
	return true;
}

static int host_wide(struct policy *p, const char *kind, const char *name)
{
	if (!strcmp(kind, "user")) {
		struct passwd *pw = getpwnam(name);

		if (!pw || p->nusers == POLICY_MAX_NAMES)
			return -1;
		p->host_wide_users[p->nusers++] = pw->pw_uid;
		return 0;
	}
	if (!strcmp(kind, "group")) {
		struct group *gr = getgrnam(name);

		if (!gr || p->ngroups == POLICY_MAX_NAMES)
			return -1;
		p->host_wide_groups[p->ngroups++] = gr->gr_gid;
		return 0;
	}
	return -1;
}

/* One line's words (at most three), in place. */
static int words(char *line, char *w[3])
{
	int n = 0;

	char *save = NULL;

	for (char *s = strtok_r(line, " \t", &save); s; s = strtok_r(NULL, " \t", &save)) {
		if (n == 3)
			return -1;
		w[n++] = s;
	}
	return n;
}

static const char *directive(struct policy *p, char *line)
{
	char *w[3] = { 0 };
	uint64_t v;
	int n = words(line, w);

	if (n == 0)
		return NULL;
	if (n == 3 && !strcmp(w[0], "host-wide"))
		return host_wide(p, w[1], w[2]) ? "no such user or group (or too many)" : NULL;
	if (n != 2)
		return "not a directive";
	if (!strcmp(w[0], "max-traces") && number(w[1], 1 << 20, &v))
		p->max_traces = v;
	else if (!strcmp(w[0], "max-starts") && number(w[1], 1 << 20, &v))
		p->max_starts = v;
	else if (!strcmp(w[0], "max-ring") && number(w[1], 1 << 20, &v))
		p->max_ring_bytes = v * MIB;
	else if (!strcmp(w[0], "max-flight-mem") && number(w[1], 1 << 20, &v))
		p->max_flight_bytes = v * MIB;
	else
		return "not a directive, or its number is not one";
	return NULL;
}

int policy_parse(struct policy *p, const char *text, size_t len, const char *path,
		 char *err, size_t errlen)
{
	char line[512];
	size_t at = 0;
	int lineno = 0;

	defaults(p);
	while (at < len) {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t n = (nl ? (size_t)(nl - text) : len) - at;
		const char *why;
		char *hash;

		lineno++;
		if (n >= sizeof(line) || memchr(text + at, '\0', n)) {
			snprintf(err, errlen, "'%s':%d: a line too long, or with a NUL", path, lineno);
			return -EINVAL;
		}
		memcpy(line, text + at, n);
		line[n] = 0;
		at += n + 1;
		if ((hash = strchr(line, '#')))
			*hash = 0;
		if ((why = directive(p, line))) {
			snprintf(err, errlen, "'%s':%d: %s", path, lineno, why);
			return -EINVAL;
		}
	}
	return 0;
}

int policy_load(struct policy *p, const char *path, char *err, size_t errlen)
{
	static char text[POLICY_MAX_BYTES + 1];
	FILE *f = fopen(path, "re");
	size_t n;

	defaults(p);
	if (!f) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, errlen, "cannot read '%s': %s", path, strerror(errno));
		return -errno;
	}
	n = fread(text, 1, sizeof(text), f);
	fclose(f);
	if (n > POLICY_MAX_BYTES) {
		snprintf(err, errlen, "'%s': more than %u bytes: not a policy", path,
			 POLICY_MAX_BYTES);
		return -EFBIG;
	}
	return policy_parse(p, text, n, path, err, errlen);
}

bool policy_host_wide(const struct policy *p, uid_t uid, const gid_t *groups, int ngroups)
{
	for (int i = 0; i < p->nusers; i++)
		if (p->host_wide_users[i] == uid)
			return true;
	for (int i = 0; i < p->ngroups; i++)
		for (int j = 0; j < ngroups; j++)
			if (p->host_wide_groups[i] == groups[j])
				return true;
	return false;
}
