// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include "capture/attach.h"
#include "capture/scope.h"
#include "lib/procfs.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

static bool is_cgroup2(const char *path)
{
	struct statfs fs;

	return !statfs(path, &fs) && fs.f_type == CGROUP2_SUPER_MAGIC;
}

/* The kernfs id of a cgroup directory: its file handle holds it. */
static int cgroup_id(const char *path, unsigned long long *id)
{
	struct {
		struct file_handle fh;
		unsigned long long id;
	} h = { .fh.handle_bytes = sizeof(unsigned long long) };
	int mount_id;

	if (name_to_handle_at(AT_FDCWD, path, &h.fh, &mount_id, 0))
		return -errno;
	*id = h.id;
	return 0;
}

int scope_cgroup_now(const struct scope_opts *s, unsigned long long *id)
{
	return cgroup_id(s->cgroup_path, id);
}

/* /proc/self/mountinfo's escapes (\040 for a space...) undone in place. */
static void mountinfo_unescape(char *s)
{
	char *out = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*out++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 3;
		} else {
			*out++ = *s;
		}
	}
	*out = 0;
}

/* The number of components of path, "/" none. */
static int components(const char *path)
{
	int n = 0;

	for (const char *p = path; *p; p++)
		n += *p != '/' && (p == path || p[-1] == '/');
	return n;
}

/* Its depth below the root of its hierarchy: the cgroup2 mount with the
 * longest mount point that holds it (a hierarchy may be mounted inside
 * itself, as at /sys/fs/cgroup and /sys/fs/cgroup/unified), its root in
 * the hierarchy, and the components below. -1 if none holds it. */
static int cgroup_level(const char *path)
{
	char line[4096], root[PATH_MAX], at[PATH_MAX], type[64];
	long best = -1, n;
	int level = -1;
	FILE *f = fopen("/proc/self/mountinfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		const char *dash = strstr(line, " - ");

		if (!dash || sscanf(dash, " - %63s", type) != 1 || strcmp(type, "cgroup2") ||
		    sscanf(line, "%*s %*s %*s %4095s %4095s", root, at) != 2)
			continue;
		mountinfo_unescape(root);
		mountinfo_unescape(at);
		n = strcmp(at, "/") ? (long)strlen(at) : 0;
		if (strncmp(path, at, n) || (path[n] && path[n] != '/'))
			continue; /* not below it */
		if (n < best)
			continue; /* an outer mount; one on the same point mounted later hides it */
		best = n;
		level = components(root) + components(path + n);
	}
	fclose(f);
	return level;
}

int scope_add_cgroup(struct scope_opts *s, const char *path, char *err, size_t errlen)
{
	struct stat st;
	int level;

	if (s->k.cgroup_level) {
		snprintf(err, errlen, "one --cgroup at a time: a directory covers all below it");
		return -EINVAL;
	}
	if (!realpath(path, s->cgroup_path) || stat(s->cgroup_path, &st) || !S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "no cgroup directory '%s'", path);
		return -EINVAL;
	}
	if (!is_cgroup2(s->cgroup_path)) {
		snprintf(err, errlen, "'%s' is not a cgroup v2 directory (cgroup v1 is not "
			 "supported; v2 is often mounted at /sys/fs/cgroup or "
			 "/sys/fs/cgroup/unified)", path);
		return -EINVAL;
	}
	level = cgroup_level(s->cgroup_path);
	if (level < 0) {
		snprintf(err, errlen, "no cgroup2 mount in /proc/self/mountinfo holds '%s'", path);
		return -EINVAL;
	}
	if (level < 1 || level > DFT_CGROUP_LEVEL_MAX) {
		snprintf(err, errlen, level < 1 ? "'%s' is the root cgroup: use -a for every "
			 "process" : "'%s' is nested deeper than %d levels", path,
			 DFT_CGROUP_LEVEL_MAX);
		return -EINVAL;
	}
	if (cgroup_id(s->cgroup_path, &s->k.cgroup_id)) {
		snprintf(err, errlen, "cannot identify the cgroup '%s': %s", path, strerror(errno));
		return -EINVAL;
	}
	s->k.cgroup_level = level;
	s->on = true;
	return 0;
}

int scope_add_uid(struct scope_opts *s, const char *user, char *err, size_t errlen)
{
	struct passwd *pw = getpwnam(user);
	char *end;
	long uid;

	errno = 0;
	uid = strtol(user, &end, 10);
	if (pw) {
		uid = pw->pw_uid;
	} else if (!*user || *end || errno || uid < 0 || uid > UINT32_MAX - 1) {
		snprintf(err, errlen, "unknown user '%s'", user);
		return -EINVAL;
	}
	if (s->k.nuids == DFT_SCOPE_UIDS) {
		snprintf(err, errlen, "more than %d --uid", DFT_SCOPE_UIDS);
		return -EINVAL;
	}
	s->k.uids[s->k.nuids++] = uid;
	s->on = true;
	return 0;
}

int scope_add_comm(struct scope_opts *s, const char *name, char *err, size_t errlen)
{
	size_t n = strlen(name);

	if (!n || n >= DFT_COMM_LEN) {
		snprintf(err, errlen, n ? "--comm '%s' is longer than a command name can be "
			 "(%d bytes)" : "--comm needs a command name", name, DFT_COMM_LEN - 1);
		return -EINVAL;
	}
	if (s->k.ncomms == DFT_SCOPE_COMMS) {
		snprintf(err, errlen, "more than %d --comm", DFT_SCOPE_COMMS);
		return -EINVAL;
	}
	memcpy(s->k.comms[s->k.ncomms++], name, n + 1);
	s->on = true;
	return 0;
}

void scope_add_all(struct scope_opts *s)
{
	s->k.all = 1;
	s->on = true;
}

/* pid's uids (real, effective, saved, fs) and effective capabilities;
 * -1 if it is gone. */
static int proc_creds(pid_t pid, unsigned int u[4], unsigned long long *caps)
{
	char path[64], line[256];
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (found < 2 && fgets(line, sizeof(line), f))
		found += sscanf(line, "Uid: %u %u %u %u", &u[0], &u[1], &u[2], &u[3]) == 4 ||
			 sscanf(line, "CapEff: %llx", caps) == 1;
	fclose(f);
	return found == 2 ? 0 : -1;
}

static bool uid_matches(const struct scope_opts *s, pid_t pid)
{
	unsigned long long caps;
	unsigned int u[4];
	bool hit = false;

	if (!s->k.nuids || proc_creds(pid, u, &caps))
		return false;
	for (int i = 0; i < s->k.nuids; i++)
		hit |= u[0] == s->k.uids[i];
	return hit;
}

/* Every uid of pid's is the owner's, and it has no privilege. */
static bool owned(const struct scope_opts *s, pid_t pid)
{
	unsigned int u[4], o = s->k.owner_uid;
	unsigned long long caps;

	return !proc_creds(pid, u, &caps) && u[0] == o && u[1] == o && u[2] == o &&
	       u[3] == o && !caps;
}

static bool comm_matches(const struct scope_opts *s, pid_t pid)
{
	char comm[DFT_COMM_LEN];

	if (!s->k.ncomms)
		return false;
	procfs_comm(pid, "comm", comm);
	for (int i = 0; i < s->k.ncomms; i++)
		if (!strcmp(comm, s->k.comms[i]))
			return true;
	return false;
}

/* /proc/PID/cgroup's v2 line, "0::/a/b", under the directory's path
 * relative to its hierarchy's root. */
static bool cgroup_matches(const struct scope_opts *s, pid_t pid)
{
	char path[64], line[4200], *rel;
	const char *want = s->cgroup_path;
	size_t n;
	bool hit = false;
	FILE *f;

	if (!s->k.cgroup_level)
		return false;
	/* the directory relative to the hierarchy's root: its last
	 * cgroup_level components */
	rel = strchr(want, 0);
	for (int i = 0; i < s->k.cgroup_level && rel > want; i++)
		while (--rel > want && *rel != '/')
			;
	n = strlen(rel);
	snprintf(path, sizeof(path), "/proc/%d/cgroup", pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	while (!hit && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		hit = !strncmp(line, "0::", 3) && !strncmp(line + 3, rel, n) &&
		      (line[3 + n] == 0 || line[3 + n] == '/');
	}
	fclose(f);
	return hit;
}

bool scope_has_process(const struct scope_opts *s, pid_t pid)
{
	bool kthread = false;
	char state;
	pid_t ppid;

	if (procfs_stat(pid, &state, &ppid, &kthread) || kthread)
		return false;
	if (s->k.owner_only && !owned(s, pid))
		return false;
	return s->k.all || uid_matches(s, pid) || comm_matches(s, pid) ||
	       cgroup_matches(s, pid);
}

pid_t *scope_processes(const struct scope_opts *s, pid_t self, int *n)
{
	DIR *d = opendir("/proc");
	pid_t *pids = NULL, *grown;
	struct dirent *de;
	int cap = 0;

	*n = 0;
	while (d && (de = readdir(d))) {
		pid_t pid = atoi(de->d_name);

		/* no tracer traces another, whatever its scope */
		if (pid <= 0 || pid == self || is_tracer_process(pid) ||
		    !scope_has_process(s, pid))
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 256;
			grown = realloc(pids, cap * sizeof(*pids));
			if (!grown)
				break;
			pids = grown;
		}
		pids[(*n)++] = pid;
	}
	if (d)
		closedir(d);
	return pids;
}
