// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <argp.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cmd/inputs.h"
#include "lib/pfor.h"
#include "lib/gz.h"
#include "lib/hash.h"
#include "lib/vec.h"

static struct input_id id_of(const char *path)
{
	struct stat st;

	return stat(path, &st) ? (struct input_id){ 0, 0 } :
				 (struct input_id){ st.st_dev, st.st_ino };
}

static bool same_id(struct input_id a, struct input_id b)
{
	return a.ino && a.dev == b.dev && a.ino == b.ino;
}

/* The input that is file id, or -1; *h: where it would be keyed. */
static int64_t find_id(const struct inputs *in, struct input_id id, uint64_t *h)
{
	uint64_t idx;

	/* equal hashes of different files: the next hash value is tried */
	for (*h = dft_hash64(&id, sizeof(id)); hmap_get(&in->by_id, *h, &idx); ++*h)
		if (same_id(in->ids[idx - 1], id))
			return idx - 1;
	return -1;
}

static int add_path(struct inputs *in, const char *path, char *err, size_t errlen)
{
	struct input_id id = id_of(path);
	int64_t twice = -1;
	uint64_t h = 0;
	char *p;

	if (id.ino && (twice = find_id(in, id, &h)) >= 0) {
		snprintf(err, errlen, "'%s' and '%s' are the same file: give each input once",
			 in->paths[twice], path);
		return -EINVAL;
	}
	p = strdup(path);
	if (!p || vec_reserve((void **)&in->ids, &in->ids_cap, in->n + 1, sizeof(*in->ids)) ||
	    (id.ino && hmap_put(&in->by_id, h, in->n + 1)) ||
	    VEC_PUSH(in->paths, in->n, in->cap, p)) {
		free(p);
		return -ENOMEM;
	}
	in->ids[in->n - 1] = id;
	return 0;
}

/* An earlier merge's output: it begins as merge writes one, with
 * {"traceEvents":[ (a trace begins with '[' or its first event, a
 * torch.profiler trace with other keys), gzipped or not. */
static bool merged_before(const char *path)
{
	static const char head[] = "{\"traceEvents\":[";
	unsigned char raw[4096];
	const unsigned char *in = raw;
	char text[sizeof(head) - 1];
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	size_t len, got = 0;
	struct stat st;
	ssize_t n = fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) ? -1 :
		    read(fd, raw, sizeof(raw));

	if (fd >= 0)
		close(fd);
	if (n < 2)
		return false;
	len = n;
	if (raw[0] == 0x1f && raw[1] == 0x8b) {
		struct gz_reader *z = gz_reader_new();
		bool done = false;
		ssize_t made = 1;

		while (z && got < sizeof(text) && made > 0 && !done) {
			made = gz_reader_get(z, &in, &len, text + got, sizeof(text) - got, &done);
			got += made > 0 ? made : 0;
		}
		gz_reader_free(z);
	} else {
		got = len < sizeof(text) ? len : sizeof(text);
		memcpy(text, raw, got);
	}
	return got == sizeof(text) && !memcmp(text, head, got);
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

static int add_dir(struct inputs *in, const char *dir, const char *who, char *err,
		   size_t errlen)
{
	struct dirent **list;
	int n = scandir(dir, &list, trace_name, by_name), rc = 0;
	size_t dlen = strlen(dir);
	char path[4096];

	while (dlen > 1 && dir[dlen - 1] == '/') /* traces/ names traces/x, not traces//x */
		dlen--;
	if (n < 0) {
		rc = -errno;
		snprintf(err, errlen, "cannot read directory '%s': %s", dir, strerror(errno));
		return rc;
	}
	if (!n)
		snprintf(err, errlen, "no .pfw or .pfw.gz files in '%s'", dir);
	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%.*s/%s", (int)dlen, dir, list[i]->d_name);
		if (!rc && merged_before(path))
			fprintf(stderr, "%s: note: skipping '%s', an earlier merge's output\n",
				who, path);
		else if (!rc)
			rc = add_path(in, path, err, errlen);
		free(list[i]);
	}
	free(list);
	return n ? rc : -ENOENT;
}

int inputs_add(struct inputs *in, const char *arg, const char *who, char *err,
	       size_t errlen)
{
	struct stat st;

	if (!stat(arg, &st) && S_ISDIR(st.st_mode))
		return add_dir(in, arg, who, err, errlen);
	return add_path(in, arg, err, errlen);
}

int inputs_check_output(const struct inputs *in, const char *output, char *err,
			size_t errlen)
{
	uint64_t h;
	int64_t i = strcmp(output, "-") ? find_id(in, id_of(output), &h) : -1;

	if (i < 0)
		return 0;
	snprintf(err, errlen, "the output '%s' is the input '%s': give another -o",
		 output, in->paths[i]);
	return -EEXIST;
}

bool inputs_same_file(const char *a, const char *b)
{
	return same_id(id_of(a), id_of(b));
}

void inputs_free(struct inputs *in)
{
	for (uint32_t i = 0; i < in->n; i++)
		free(in->paths[i]);
	free(in->paths);
	free(in->ids);
	hmap_free(&in->by_id);
	*in = (struct inputs){ 0 };
}

void inputs_jobs(struct inputs *in, const char *arg, struct argp_state *state)
{
	char *end;
	long n = strtol(arg, &end, 10);

	if (end == arg || *end || n < 1 || n > PFOR_MAX_JOBS)
		argp_error(state, "bad --jobs '%s': a number of cores, 1 to %d", arg,
			   PFOR_MAX_JOBS);
	in->jobs = n;
}

void inputs_arg(struct inputs *in, const char *arg, struct argp_state *state)
{
	char err[512] = "";

	if (inputs_add(in, arg, state->name, err, sizeof(err)))
		argp_failure(state, 1, 0, "%s", err[0] ? err : "out of memory");
}
