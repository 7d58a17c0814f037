// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <argp.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cmd/inputs.h"
#include "lib/vec.h"

static int add_path(struct inputs *in, const char *path)
{
	char *p = strdup(path);

	if (!p || VEC_PUSH(in->paths, in->n, in->cap, p)) {
		free(p);
		return -ENOMEM;
	}
	return 0;
}

static int trace_name(const struct dirent *d)
{
	size_t len = strlen(d->d_name);

	return d->d_name[0] != '.' &&
	       ((len > 4 && !strcmp(d->d_name + len - 4, ".pfw")) ||
		(len > 7 && !strcmp(d->d_name + len - 7, ".pfw.gz")));
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int add_dir(struct inputs *in, const char *dir, char *err, size_t errlen)
{
	struct dirent **list;
	int n = scandir(dir, &list, trace_name, by_name), rc = 0;
	char path[4096];

	if (n < 0) {
		rc = -errno;
		snprintf(err, errlen, "cannot read directory '%s': %s", dir, strerror(errno));
		return rc;
	}
	if (!n)
		snprintf(err, errlen, "no .pfw or .pfw.gz files in '%s'", dir);
	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, list[i]->d_name);
		if (!rc)
			rc = add_path(in, path);
		free(list[i]);
	}
	free(list);
	return n ? rc : -ENOENT;
}

int inputs_add(struct inputs *in, const char *arg, char *err, size_t errlen)
{
	struct stat st;

	if (!stat(arg, &st) && S_ISDIR(st.st_mode))
		return add_dir(in, arg, err, errlen);
	return add_path(in, arg);
}

void inputs_free(struct inputs *in)
{
	for (uint32_t i = 0; i < in->n; i++)
		free(in->paths[i]);
	free(in->paths);
	*in = (struct inputs){ 0 };
}

void inputs_arg(struct inputs *in, const char *arg, struct argp_state *state)
{
	char err[512] = "";

	if (inputs_add(in, arg, err, sizeof(err)))
		argp_failure(state, 1, 0, "%s", err[0] ? err : "out of memory");
}
