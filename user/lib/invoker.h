/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The user who invoked the tracer: under sudo, the user behind it
 * (SUDO_UID, SUDO_GID and SUDO_USER's groups); otherwise ourselves.
 *
 * The tracer runs as root but writes files for that user, so it creates
 * them with the user's file-system identity (setfsuid/setfsgid and the
 * user's groups): the kernel then applies the user's permissions, and a
 * trace can land only where the user could have written it.
 */
#ifndef LIB_INVOKER_H
#define LIB_INVOKER_H

#include <stdbool.h>
#include <sys/types.h>

struct invoker {
	uid_t uid;
	gid_t gid;
	gid_t *groups;		/* supplementary groups, for the switch */
	int ngroups;
	bool other;		/* someone other than us: switch identity */
};

/* From SUDO_UID/SUDO_GID/SUDO_USER when we are root, else ourselves.
 * 0, or a negative errno (out of memory). */
int invoker_init(struct invoker *who);
void invoker_free(struct invoker *who);

/* Our own file-system identity, saved while we act as the invoker. */
struct fs_identity {
	bool switched;
	gid_t *groups;
	int ngroups;
};

/* Makes file-system calls run with who's permissions until
 * fs_identity_restore(); a no-op when who is NULL or is us. */
int invoker_fs_enter(const struct invoker *who, struct fs_identity *saved);
void fs_identity_restore(struct fs_identity *saved);

/* In a child about to exec: become the invoker for good. */
int invoker_become(const struct invoker *who);

#endif
