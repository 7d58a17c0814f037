// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Where an output's file is made, as the invoking user (see output.c's
 * header for the threat model): an unnamed file in the target's
 * directory, linked under a short temporary name and renamed onto the
 * target at commit; reopened and renamed later only if the directory
 * still holds the very file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "lib/invoker.h"
#include "write/output_impl.h"

/* Splits path into a directory (opened, unless the caller gave one) and
 * the final name. */
static int open_dir(struct output *o, const int *dir_fd)
{
	const char *slash = strrchr(o->path, '/');
	char *dir;

	o->name = strdup(slash ? slash + 1 : o->path);
	if (!o->name)
		return -ENOMEM;
	if (dir_fd) {
		o->dir_fd = *dir_fd;
		return 0;
	}
	if (!slash)
		dir = strdup(".");
	else
		dir = slash == o->path ? strdup("/") :
					 strndup(o->path, slash - o->path);
	if (!dir)
		return -ENOMEM;
	o->dir_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	if (o->dir_fd < 0)
		return -errno;
	o->own_dir_fd = true;
	return 0;
}

/* Refuses a target that rename would fail on or should never replace (a
 * directory, a device like /dev/null, also behind a symlink, e.g. a
 * /dev/stdout that is a pipe).  A symlink to a regular file or to nothing
 * is fine: the rename replaces the link. */
static int check_target(struct output *o, char *err, size_t errlen)
{
	struct stat st;
	bool link;
	int rc;

	if (!*o->name || !strcmp(o->name, ".") || !strcmp(o->name, "..")) {
		snprintf(err, errlen, "output '%s' is a directory", o->path);
		return -EISDIR;
	}
	if (fstatat(o->dir_fd, o->name, &st, AT_SYMLINK_NOFOLLOW)) {
		if (errno == ENOENT)
			return 0;
		goto cannot;
	}
	link = S_ISLNK(st.st_mode);
	if (link && fstatat(o->dir_fd, o->name, &st, 0))
		return 0;	/* dangling: nothing behind it to protect */
	if (S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "output '%s' is a directory", o->path);
		return -EISDIR;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "output '%s' is not a regular file%s",
			 o->path, link ? " (use '-' for stdout)" : "");
		return -EINVAL;
	}
	return 0;
cannot:
	rc = -errno;
	snprintf(err, errlen, "cannot create output '%s': %s", o->path,
		 strerror(-rc));
	return rc;
}

/* A fresh ".dftrace-XXXXXX" in o->tmp_name: a fixed length, so that a
 * target name of any valid length works; uniqueness comes from O_EXCL
 * or linkat's EEXIST, not from the six random characters. */
static void random_temp_name(struct output *o)
{
	static const char chars[] =
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	char *x = o->tmp_name + sizeof(TEMP_PREFIX) - 1;
	unsigned char rnd[6];
	struct timespec ts;
	int i;

	memcpy(o->tmp_name, TEMP_PREFIX, sizeof(TEMP_PREFIX) - 1);
	if (getrandom(rnd, sizeof(rnd), GRND_NONBLOCK) != sizeof(rnd)) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		for (i = 0; i < 6; i++)
			rnd[i] = (unsigned char)((ts.tv_nsec >> (5 * i)) ^
						 (getpid() >> i) ^ rand());
	}
	for (i = 0; i < 6; i++)
		x[i] = chars[rnd[i] % (sizeof(chars) - 1)];
	x[6] = '\0';
}

#define TEMP_TRIES 100

/* Tries fresh temporary names until make() succeeds or fails otherwise
 * than on a name already taken. */
static int with_temp_name(struct output *o,
			  int (*make)(struct output *o, const void *arg),
			  const void *arg)
{
	for (int tries = 0; tries < TEMP_TRIES; tries++) {
		random_temp_name(o);
		if (!make(o, arg))
			return 0;
		if (errno != EEXIST)
			break;
	}
	o->tmp_name[0] = '\0';
	return -errno;
}

static int open_named(struct output *o, const void *unused)
{
	o->fd = openat(o->dir_fd, o->tmp_name,
		       O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_WRONLY, 0644);
	return o->fd < 0 ? -1 : 0;
}

/* Unnamed where the file system can (O_TMPFILE); else a hidden file that
 * exists from the start, which a tracer killed before the commit may
 * leave behind. */
static int create_temp(struct output *o)
{
	o->fd = openat(o->dir_fd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
	if (o->fd >= 0)
		return 0;
	if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
		return -errno;
	return with_temp_name(o, open_named, NULL);
}

int place_open(struct output *o, const struct output_opts *opts, char *err,
	       size_t errlen)
{
	struct fs_identity me;
	int rc;

	rc = invoker_fs_enter(opts->as, &me);
	if (rc)
		goto cannot;
	rc = open_dir(o, opts->dir_fd);
	if (!rc) {
		rc = check_target(o, err, errlen);
		if (rc) {
			fs_identity_restore(&me);
			return rc;
		}
		rc = create_temp(o);
	}
	fs_identity_restore(&me);
	if (!rc)
		return 0;
cannot:
	snprintf(err, errlen, "cannot create output '%s': %s", o->path,
		 strerror(-rc));
	return rc;
}

static int link_named(struct output *o, const void *self)
{
	return linkat(AT_FDCWD, self, o->dir_fd, o->tmp_name, AT_SYMLINK_FOLLOW);
}

/* Gives the unnamed file its temporary name. */
static int link_temp(struct output *o)
{
	char self[64];

	snprintf(self, sizeof(self), "/proc/self/fd/%d", o->fd);
	return with_temp_name(o, link_named, self);
}

static int link_in(struct output *o)
{
	struct stat st;
	int rc = 0;

	if (!o->tmp_name[0])
		rc = link_temp(o);
	if (!rc && renameat(o->dir_fd, o->tmp_name, o->dir_fd, o->name))
		rc = -errno;
	if (rc && o->tmp_name[0])
		unlinkat(o->dir_fd, o->tmp_name, 0);
	o->tmp_name[0] = '\0';
	if (!rc && !fstat(o->fd, &st)) {
		o->dev = st.st_dev;
		o->ino = st.st_ino;
	}
	return rc;
}

int place_commit(struct output *o)
{
	struct fs_identity me;
	int rc = invoker_fs_enter(o->as, &me);

	if (!rc) {
		rc = link_in(o);
		fs_identity_restore(&me);
	}
	return rc;
}

int place_reopen(struct output *o)
{
	struct fs_identity me;
	int fd, rc = invoker_fs_enter(o->as, &me);

	if (rc)
		return rc;
	fd = openat(o->dir_fd, o->name, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	rc = fd < 0 ? -errno : fd;
	fs_identity_restore(&me);
	return rc;
}

int place_rename(struct output *o, const char *new_path, char *err,
		 size_t errlen)
{
	const char *slash = strrchr(new_path, '/');
	struct output moved = *o;
	struct fs_identity me;
	int rc;

	moved.path = strdup(new_path);
	moved.name = strdup(slash ? slash + 1 : new_path);
	rc = moved.path && moved.name ? 0 : -ENOMEM;
	if (!rc)
		rc = invoker_fs_enter(o->as, &me);
	if (!rc) {
		rc = check_target(&moved, err, errlen);
		if (!rc && renameat(o->dir_fd, o->name, o->dir_fd, moved.name))
			rc = -errno;
		fs_identity_restore(&me);
	}
	if (rc) {
		if (!*err)
			snprintf(err, errlen, "cannot rename '%s' to '%s': %s",
				 o->path, new_path, strerror(-rc));
		free(moved.path);
		free(moved.name);
		return rc;
	}
	free(o->path);
	free(o->name);
	o->path = moved.path;
	o->name = moved.name;
	return 0;
}

void place_discard(struct output *o)
{
	if (o->tmp_name[0])
		unlinkat(o->dir_fd, o->tmp_name, 0);
}
