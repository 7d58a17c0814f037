// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <unistd.h>
#include "lib/invoker.h"

static long env_id(const char *name)
{
	const char *s = getenv(name);
	char *end;
	long v;

	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	return errno || *end || v < 0 ? -1 : v;
}

/* SUDO_USER's groups when that name really is SUDO_UID; else the group
 * alone, as sudo itself does for a uid without a passwd entry. */
static int read_groups(struct invoker *who)
{
	const char *name = getenv("SUDO_USER");
	struct passwd *pw = name ? getpwnam(name) : NULL;
	int n = 64;

	if (!pw || pw->pw_uid != who->uid)
		n = 1;
	for (;;) {
		gid_t *g = realloc(who->groups, n * sizeof(*g));
		int want = n;

		if (!g)
			return -ENOMEM;
		who->groups = g;
		if (!pw || pw->pw_uid != who->uid) {
			g[0] = who->gid;
			who->ngroups = 1;
			return 0;
		}
		if (getgrouplist(name, who->gid, g, &want) >= 0) {
			who->ngroups = want;
			return 0;
		}
		n = want > n ? want : n * 2;
	}
}

int invoker_init(struct invoker *who)
{
	long u = env_id("SUDO_UID"), g = env_id("SUDO_GID");

	memset(who, 0, sizeof(*who));
	who->uid = getuid();
	who->gid = getgid();
	if (getuid() != 0 || u < 0 || g < 0 || (u == 0 && g == 0))
		return 0;
	who->uid = u;
	who->gid = g;
	who->other = true;
	return read_groups(who);
}

void invoker_free(struct invoker *who)
{
	if (!who)
		return;
	free(who->groups);
	who->groups = NULL;
	who->ngroups = 0;
}

static int save_groups(struct fs_identity *saved)
{
	int n = getgroups(0, NULL);

	if (n < 0)
		return -errno;
	saved->groups = malloc((n ? n : 1) * sizeof(gid_t));
	if (!saved->groups)
		return -ENOMEM;
	saved->ngroups = getgroups(n, saved->groups);
	return saved->ngroups < 0 ? -errno : 0;
}

int invoker_fs_enter(const struct invoker *who, struct fs_identity *saved)
{
	int err;

	memset(saved, 0, sizeof(*saved));
	if (!who || !who->other)
		return 0;
	err = save_groups(saved);
	if (err)
		goto fail;
	if (setgroups(who->ngroups, who->groups)) {
		err = -errno;
		goto fail;
	}
	saved->switched = true;
	setfsgid(who->gid);
	setfsuid(who->uid);
	/* setfsuid reports nothing: read the identity back. */
	if ((uid_t)setfsuid(-1) != who->uid || (gid_t)setfsgid(-1) != who->gid) {
		fs_identity_restore(saved);
		return -EPERM;
	}
	return 0;
fail:
	free(saved->groups);
	saved->groups = NULL;
	return err;
}

void fs_identity_restore(struct fs_identity *saved)
{
	if (saved->switched) {
		/* uid first: back to 0 gives the file-system capabilities back */
		setfsuid(geteuid());
		setfsgid(getegid());
		/* as root this cannot fail; nothing is left to do if it did */
		(void)!setgroups(saved->ngroups, saved->groups);
	}
	free(saved->groups);
	memset(saved, 0, sizeof(*saved));
}

int invoker_become(const struct invoker *who)
{
	if (!who->other)
		return 0;
	if (setgroups(who->ngroups, who->groups) || setgid(who->gid) ||
	    setuid(who->uid))
		return -errno;
	return 0;
}
