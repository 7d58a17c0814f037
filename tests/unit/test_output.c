/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Unit tests for user/output.c: plain and gzip round trips, commit and
 * abort, hostile targets (symlinks, directories, devices) and cutting a
 * failed output back to its last flush; and the sink's batches, their
 * lines grouped by thread. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "check.h"
#include "lib/invoker.h"
#include "write/output.h"
#include "write/sink.h"

static char tmpdir[] = "/tmp/dftrace-test-output-XXXXXX";
static char *data;		/* made-up trace lines */
static size_t data_len;
static size_t *line_end;	/* offset just past each line */
static size_t nr_lines;

/* ---- helpers ---------------------------------------------------------- */

static char *path_in(const char *name)
{
	return check_path(tmpdir, name);
}

static void make_data(void)
{
	size_t cap = 4 << 20, i;

	data = malloc(cap);
	line_end = malloc(sizeof(*line_end) * 100000);
	for (i = 0; data_len < cap - 512 && i < 100000; i++) {
		data_len += snprintf(data + data_len, cap - data_len,
			"{\"id\":%zu,\"name\":\"pread\",\"cat\":\"POSIX\",\"pid\":41,"
			"\"tid\":%zu,\"ts\":%zu,\"dur\":%zu,\"ph\":\"X\",\"args\":"
			"{\"fhash\":\"%016zx\",\"ret\":4096}}\n",
			i, 41 + i % 7, 1732350000123456 + i * 37, i % 13,
			(size_t)((i * 0x9e3779b97f4a7c15ULL) >> 5));
		line_end[i] = data_len;
	}
	nr_lines = i;
}

/* Offset of the end of the first line ending at or after off. */
static size_t line_boundary(size_t off)
{
	size_t i;

	for (i = 0; i < nr_lines; i++)
		if (line_end[i] >= off)
			return line_end[i];
	return data_len;
}

static char *slurp(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	char *buf;

	*len = 0;
	if (fd < 0)
		return NULL;
	fstat(fd, &st);
	buf = malloc(st.st_size + 1);
	*len = read(fd, buf, st.st_size) == st.st_size ? (size_t)st.st_size : 0;
	close(fd);
	return buf;
}

/* Inflates one gzip stream.  Returns 1 if it is complete (trailer CRC and
 * length verified by zlib) and nothing follows it, 0 if it is merely cut
 * short at a flush, -1 on corrupt data or trailing bytes. */
static int gunzip(const char *in, size_t in_len, char **out, size_t *out_len)
{
	z_stream zs = { 0 };
	size_t cap = in_len * 20 + 1024;
	int zrc;

	*out = malloc(cap);
	*out_len = 0;
	if (inflateInit2(&zs, 15 + 16) != Z_OK)
		return -1;
	zs.next_in = (unsigned char *)in;
	zs.avail_in = in_len;
	zs.next_out = (unsigned char *)*out;
	zs.avail_out = cap;
	zrc = inflate(&zs, Z_SYNC_FLUSH);
	*out_len = cap - zs.avail_out;
	inflateEnd(&zs);
	if (zrc == Z_STREAM_END)
		return zs.avail_in == 0 ? 1 : -1;
	if ((zrc == Z_OK || zrc == Z_BUF_ERROR) && zs.avail_in == 0)
		return 0;
	return -1;
}

static int same(const char *a, size_t a_len, const char *b, size_t b_len)
{
	return a && a_len == b_len && memcmp(a, b, a_len) == 0;
}

/* Number of directory entries other than . and .. */
static int nr_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	if (d)
		closedir(d);
	return n;
}

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

static void empty_tmpdir(void)
{
	nftw(tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	mkdir(tmpdir, 0700);
}

static void write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd >= 0) {
		if (write(fd, s, strlen(s)) < 0)
			perror("write");
		close(fd);
	}
}

static struct output *open_ok(const char *path, int level)
{
	struct output_opts opts = { .path = path, .gzip_level = level };
	struct output *o = NULL;
	char err[256];
	int rc = output_open(&opts, &o, err, sizeof(err));

	if (rc)
		printf("# output_open: %s\n", err);
	return o;
}

/* Writes data[from, to) in line-sized pieces. */
static int write_range(struct output *o, size_t from, size_t to)
{
	int rc = 0;

	while (from < to && !rc) {
		size_t end = line_boundary(from + 1);

		if (end > to)
			end = to;
		rc = output_write(o, data + from, end - from);
		from = end;
	}
	return rc;
}

/* ---- round trips ------------------------------------------------------ */

static void test_round_trip(int level)
{
	const char *path = path_in(level < 0 ? "rt.pfw" : "rt.pfw.gz");
	struct output *o = open_ok(path, level);
	size_t half = line_boundary(data_len / 2), len, plain_len;
	char err[256], *file, *plain;
	struct stat st;
	int rc;

	if (!o) {
		CHECK(0, "level %d: open", level);
		return;
	}
	CHECK(access(path, F_OK) != 0 && nr_entries(tmpdir) == 0,
	      "level %d: before commit nothing is in the directory (an "
	      "unnamed file: a killed tracer leaves nothing)", level);
	CHECK(output_commit(o, err, sizeof(err)) == 0, "level %d: commit", level);
	CHECK(lstat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	      (st.st_mode & 07777) == 0644 && nr_entries(tmpdir) == 1,
	      "level %d: after commit the path is a 0644 file, no temporary",
	      level);

	write_range(o, 0, half);
	CHECK(output_flush(o) == 0, "level %d: flush", level);
	file = slurp(path, &len);
	if (level < 0) {
		CHECK(same(file, len, data, half),
		      "level -1: after flush the file holds all lines so far");
	} else {
		rc = gunzip(file, len, &plain, &plain_len);
		CHECK(rc == 0 && same(plain, plain_len, data, half),
		      "level %d: file cut at a flush inflates to all lines so far",
		      level);
		free(plain);
	}
	free(file);

	write_range(o, half, data_len);
	CHECK(output_bytes_in(o) == data_len, "level %d: bytes_in", level);
	rc = output_close(o, err, sizeof(err));
	CHECK(rc == 0, "level %d: close (%s)", level, err);

	file = slurp(path, &len);
	if (level < 0) {
		CHECK(same(file, len, data, data_len),
		      "level -1: file equals the %zu bytes written", data_len);
	} else {
		rc = gunzip(file, len, &plain, &plain_len);
		CHECK(rc == 1 && same(plain, plain_len, data, data_len),
		      "level %d: one complete gzip stream of the %zu bytes "
		      "(%zu compressed)", level, data_len, len);
		free(plain);
	}
	free(file);
	empty_tmpdir();
}

/* A plain file only ever grows by whole lines, whatever the buffer does:
 * a tracer killed at any moment leaves no torn line. */
static void test_whole_lines(void)
{
	const char *path = path_in("lines.pfw");
	struct output *o = open_ok(path, -1);
	size_t from = 0, torn = 0, big = line_boundary(1500000);
	char err[256];
	struct stat st;

	output_commit(o, err, sizeof(err));
	while (from < data_len) {
		size_t end = line_boundary(from + 1 + (from % 5000));

		output_write(o, data + from, end - from);
		from = end;
		if (!stat(path, &st) && st.st_size && data[st.st_size - 1] != '\n')
			torn++;
	}
	CHECK(torn == 0, "after every write the file ends at a line end "
	      "(%zu times not)", torn);
	output_abort(o);
	o = open_ok(path, -1);
	output_commit(o, err, sizeof(err));
	output_write(o, data, big);	/* more than the buffer holds */
	CHECK(!stat(path, &st) && (size_t)st.st_size == big,
	      "one write larger than the buffer goes straight to the file");
	output_close(o, err, sizeof(err));
	empty_tmpdir();
}

static void test_bytes_out(void)
{
	const char *path = path_in("bo.pfw.gz");
	struct output *o = open_ok(path, 1);
	char err[256];
	uint64_t out = 0;
	struct stat st;

	output_commit(o, err, sizeof(err));
	write_range(o, 0, data_len);
	output_flush(o);
	out = output_bytes_out(o);
	CHECK(stat(path, &st) == 0 && (uint64_t)st.st_size == out && out > 0 &&
	      out < data_len / 4, "bytes_out is the compressed size on disk");
	CHECK(strcmp(output_path(o), path) == 0, "output_path");
	output_close(o, err, sizeof(err));
	empty_tmpdir();
}

static void test_empty(void)
{
	const char *path = path_in("empty.pfw.gz");
	struct output *o = open_ok(path, 6);
	char err[256], *file, *plain;
	size_t len, plain_len;

	output_commit(o, err, sizeof(err));
	CHECK(output_flush(o) == 0 && output_close(o, err, sizeof(err)) == 0,
	      "gzip output with no data closes");
	file = slurp(path, &len);
	CHECK(gunzip(file, len, &plain, &plain_len) == 1 && plain_len == 0,
	      "and is a valid empty gzip file");
	free(file);
	free(plain);
	empty_tmpdir();
}

/* "-" writes to fd 1; point it at a file for the test's sake. */
static void test_stdout(void)
{
	const char *path = path_in("stdout.gz");
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
	int saved = dup(STDOUT_FILENO);
	char err[256], *file, *plain;
	size_t len, plain_len;
	struct output *o;
	int rc;

	fflush(stdout);
	dup2(fd, STDOUT_FILENO);
	close(fd);
	o = open_ok("-", 1);
	rc = output_commit(o, err, sizeof(err));
	write_range(o, 0, line_boundary(100000));
	output_flush(o);
	write_range(o, line_boundary(100000), line_boundary(200000));
	rc |= output_close(o, err, sizeof(err));
	dup2(saved, STDOUT_FILENO);
	close(saved);
	CHECK(rc == 0, "'-': open, commit (no-op), close");
	CHECK(fcntl(STDOUT_FILENO, F_GETFD) == 0, "'-': stdout stays open");
	file = slurp(path, &len);
	CHECK(gunzip(file, len, &plain, &plain_len) == 1 &&
	      same(plain, plain_len, data, line_boundary(200000)),
	      "'-': stdout got one complete gzip stream");
	free(file);
	free(plain);
	empty_tmpdir();
}

/* ---- commit and abort -------------------------------------------------- */

static void test_abort(void)
{
	const char *path = path_in("old.pfw");
	struct output *o;
	char err[256], want[512], *file;
	size_t len;
	int rc;

	write_file(path, "older trace\n");
	o = open_ok(path, 1);
	write_range(o, 0, 100000);
	output_flush(o);
	output_abort(o);
	file = slurp(path, &len);
	CHECK(same(file, len, "older trace\n", 12) && nr_entries(tmpdir) == 1,
	      "abort before commit leaves the older file and no temporary");
	free(file);

	o = open_ok(path, -1);
	write_range(o, 0, 1000);
	rc = output_close(o, err, sizeof(err));
	file = slurp(path, &len);
	CHECK(rc == -EINVAL && same(file, len, "older trace\n", 12) &&
	      nr_entries(tmpdir) == 1,
	      "close before commit discards the output like abort");
	snprintf(want, sizeof(want), "output '%s' closed before commit; "
		 "discarded", path);
	CHECK_STREQ(err, want, "close before commit says so");
	free(file);

	o = open_ok(path, -1);
	output_commit(o, err, sizeof(err));
	write_range(o, 0, 1000);
	output_abort(o);
	file = slurp(path, &len);
	CHECK(same(file, len, data, 0) && nr_entries(tmpdir) == 1,
	      "abort after commit keeps the committed file, drops unflushed data");
	free(file);

	output_abort(NULL);
	CHECK(output_close(NULL, err, sizeof(err)) == 0,
	      "abort and close are NULL-safe");
	empty_tmpdir();
}

/* ---- hostile targets --------------------------------------------------- */

static void test_symlink(void)
{
	const char *victim = path_in("victim");
	const char *path = path_in("link.pfw");
	struct output *o;
	char err[256], *file;
	size_t len;
	struct stat st;

	write_file(victim, "precious\n");
	if (symlink(victim, path)) {
		CHECK(0, "symlink: %s", strerror(errno));
		return;
	}
	o = open_ok(path, -1);
	CHECK(o != NULL, "a symlink to a regular file is accepted");
	if (!o)
		return;
	write_range(o, 0, line_boundary(1000));
	output_commit(o, err, sizeof(err));
	output_close(o, err, sizeof(err));
	file = slurp(victim, &len);
	CHECK(same(file, len, "precious\n", 9), "the symlink's target is untouched");
	free(file);
	file = slurp(path, &len);
	CHECK(lstat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	      same(file, len, data, line_boundary(1000)),
	      "the path is now a regular file with the trace");
	free(file);

	unlink(path);
	if (symlink(path_in("nowhere"), path) == 0) {
		o = open_ok(path, -1);
		output_commit(o, err, sizeof(err));
		output_close(o, err, sizeof(err));
		CHECK(lstat(path, &st) == 0 && S_ISREG(st.st_mode) &&
		      access(path_in("nowhere"), F_OK) != 0,
		      "a dangling symlink is replaced, not followed");
	}
	empty_tmpdir();
}

static void expect_open_error(const char *path, int want_rc, const char *want)
{
	struct output_opts opts = { .path = path, .gzip_level = -1 };
	struct output *o = (struct output *)1;
	char err[512], msg[512];
	int before = nr_entries(tmpdir);
	int rc = output_open(&opts, &o, err, sizeof(err));

	snprintf(msg, sizeof(msg), want, path);
	CHECK(rc == want_rc && o == NULL, "open '%s' fails with %d (got %d)",
	      path, want_rc, rc);
	CHECK_STREQ(err, msg, "its message");
	CHECK(nr_entries(tmpdir) == before, "and leaves nothing behind");
}

static void test_bad_targets(void)
{
	struct output_opts opts = { .path = path_in("x"), .gzip_level = 10 };
	struct output *o;
	char err[256];
	char dir_slash[600];

	mkdir(path_in("sub"), 0755);
	expect_open_error(path_in("sub"), -EISDIR, "output '%s' is a directory");
	snprintf(dir_slash, sizeof(dir_slash), "%s/", path_in("sub"));
	expect_open_error(dir_slash, -EISDIR, "output '%s' is a directory");
	expect_open_error(path_in("nope/trace.pfw"), -ENOENT,
			  "cannot create output '%s': No such file or directory");
	write_file(path_in("file"), "x");
	expect_open_error(path_in("file/trace.pfw"), -ENOTDIR,
			  "cannot create output '%s': Not a directory");
	mkfifo(path_in("fifo"), 0644);
	expect_open_error(path_in("fifo"), -EINVAL,
			  "output '%s' is not a regular file");
	symlink("/dev/null", path_in("devnull"));
	expect_open_error(path_in("devnull"), -EINVAL,
			  "output '%s' is not a regular file (use '-' for stdout)");
	CHECK(access("/dev/null", W_OK) == 0, "/dev/null is still there");
	symlink(path_in("sub"), path_in("dirlink"));
	expect_open_error(path_in("dirlink"), -EISDIR,
			  "output '%s' is a directory");

	CHECK(output_open(&opts, &o, err, sizeof(err)) == -EINVAL && o == NULL,
	      "gzip level 10 is refused: %s", err);
	empty_tmpdir();
}

static void test_relative(void)
{
	struct output_opts opts = { .path = "rel.pfw", .gzip_level = -1 };
	struct output *o;
	char cwd[512], err[256];
	struct stat st = { 0 };
	int rc;

	if (!getcwd(cwd, sizeof(cwd)) || chdir(tmpdir)) {
		CHECK(0, "chdir");
		return;
	}
	rc = output_open(&opts, &o, err, sizeof(err));
	if (!rc)
		rc = output_commit(o, err, sizeof(err));
	if (!rc)
		rc = output_close(o, err, sizeof(err));
	CHECK(rc == 0 && stat(path_in("rel.pfw"), &st) == 0,
	      "a relative path lands in the working directory");
	if (chdir(cwd))
		perror("chdir");
	opts.path = "";
	CHECK(output_open(&opts, &o, err, sizeof(err)) == -EINVAL,
	      "an empty path is refused");
	CHECK_STREQ(err, "empty output path", "and called that");
	empty_tmpdir();
}

/* Opens, commits and closes path as who; 0 or the first error. */
static int write_as(const struct invoker *who, const char *path, char *err,
		    size_t errlen)
{
	struct output_opts opts = { .path = path, .gzip_level = 1, .as = who };
	struct output *o;
	int rc = output_open(&opts, &o, err, errlen);

	if (rc)
		return rc;
	write_range(o, 0, line_boundary(1000));
	rc = output_commit(o, err, errlen);
	if (rc) {
		output_abort(o);
		return rc;
	}
	return output_close(o, err, errlen);
}

/* Under sudo the file is made as the invoking user: where that user may
 * not write, nothing is made and nothing is replaced. */
static void test_as_invoker(void)
{
	gid_t group = 65534;
	struct invoker nobody = { .uid = 65534, .gid = 65534, .groups = &group,
				  .ngroups = 1, .other = true };
	char err[512], want[600], *file;
	struct stat st = { 0 };
	size_t len;
	int rc;

	int ngroups_before = getgroups(0, NULL);

	if (geteuid() != 0) {
		CHECK(1, "# skip: the invoking user's identity needs root");
		return;
	}
	chmod(tmpdir, 0755);	/* mkdtemp's 0700 would stop the user at once */
	mkdir(path_in("theirs"), 0755);
	CHECK(chown(path_in("theirs"), 65534, 65534) == 0, "chown");
	rc = write_as(&nobody, path_in("theirs/t.pfw.gz"), err, sizeof(err));
	CHECK(rc == 0 && stat(path_in("theirs/t.pfw.gz"), &st) == 0 &&
	      st.st_uid == 65534 && st.st_gid == 65534,
	      "in the user's directory the file is made, and is the user's (%s)",
	      err);

	mkdir(path_in("rootdir"), 0755);
	write_file(path_in("rootdir/precious"), "precious\n");
	chmod(path_in("rootdir/precious"), 0600);
	rc = write_as(&nobody, path_in("rootdir/precious"), err, sizeof(err));
	snprintf(want, sizeof(want), "cannot create output '%s': %s",
		 path_in("rootdir/precious"), strerror(EACCES));
	CHECK(rc == -EACCES, "a root-only directory refuses the user's file");
	CHECK_STREQ(err, want, "with the usual permission error");
	file = slurp(path_in("rootdir/precious"), &len);
	CHECK(stat(path_in("rootdir/precious"), &st) == 0 && st.st_uid == 0 &&
	      (st.st_mode & 07777) == 0600 && same(file, len, "precious\n", 9) &&
	      nr_entries(path_in("rootdir")) == 1,
	      "the root file is untouched and nothing else is there");
	free(file);
	rc = write_as(&nobody, path_in("rootdir/new"), err, sizeof(err));
	CHECK(rc == -EACCES && nr_entries(path_in("rootdir")) == 1,
	      "nor can the user add a file there");
	/* A directory of one of the user's supplementary groups. */
	mkdir(path_in("group"), 0770);
	CHECK(chown(path_in("group"), 0, 4242) == 0 &&
	      chmod(path_in("group"), 0770) == 0, "chown");
	rc = write_as(&nobody, path_in("group/t.pfw.gz"), err, sizeof(err));
	CHECK(rc == -EACCES, "a group directory refuses a user outside it");
	{
		gid_t groups[] = { 65534, 4242 };
		struct invoker member = nobody;

		member.groups = groups;
		member.ngroups = 2;
		rc = write_as(&member, path_in("group/t.pfw.gz"), err, sizeof(err));
		CHECK(rc == 0, "and takes the file of a member (%s)", err);
	}
	CHECK(getegid() == 0 && (uid_t)setfsuid(-1) == 0 && (gid_t)setfsgid(-1) == 0 &&
	      getgroups(0, NULL) == ngroups_before,
	      "the tracer is itself again afterwards, groups too");
	empty_tmpdir();
}

/* A suspended output is a complete file with its descriptor closed; on
 * resume the stream goes on, and the end result is one gzip stream. */
static void test_suspend(int level)
{
	const char *path = path_in(level < 0 ? "sus.pfw" : "sus.pfw.gz");
	struct output *o = open_ok(path, level);
	size_t third = line_boundary(data_len / 3), len, plain_len;
	char err[256], *file, *plain = NULL;
	int rc;

	output_commit(o, err, sizeof(err));
	write_range(o, 0, third);
	CHECK(output_suspend(o) == 0 && output_suspended(o),
	      "level %d: suspend", level);
	file = slurp(path, &len);
	rc = level < 0 ? same(file, len, data, third) :
			 gunzip(file, len, &plain, &plain_len) == 1 &&
				 same(plain, plain_len, data, third);
	CHECK(rc, "level %d: while suspended the file is complete", level);
	free(file);
	free(plain);
	plain = NULL;
	CHECK(output_resume(o, err, sizeof(err)) == 0 && !output_suspended(o),
	      "level %d: resume", level);
	write_range(o, third, 2 * third);
	output_suspend(o);
	/* resumed by the write itself this time */
	write_range(o, 2 * third, data_len);
	rc = output_close(o, err, sizeof(err));
	file = slurp(path, &len);
	if (level >= 0)
		rc |= gunzip(file, len, &plain, &plain_len) != 1 ||
		      !same(plain, plain_len, data, data_len);
	else
		rc |= !same(file, len, data, data_len);
	CHECK(rc == 0, "level %d: the whole trace, %s", level,
	      level < 0 ? "as written" : "one complete gzip stream");
	free(file);
	free(plain);
	empty_tmpdir();
}

static void test_replaced_while_suspended(void)
{
	const char *path = path_in("rep.pfw.gz");
	struct output *o = open_ok(path, 1);
	char err[256], want[512];

	output_commit(o, err, sizeof(err));
	write_range(o, 0, line_boundary(1000));
	output_suspend(o);
	unlink(path);
	write_file(path, "planted\n");
	snprintf(want, sizeof(want), "cannot reopen output '%s': it was "
		 "replaced or cut while closed", path);
	CHECK(output_resume(o, err, sizeof(err)) == -ESTALE,
	      "a file replaced while suspended is not reopened");
	CHECK_STREQ(err, want, "and says so");
	output_close(o, err, sizeof(err));
	CHECK(nr_entries(tmpdir) == 1, "the planted file is left alone");
	empty_tmpdir();
}

static void test_rename_and_long_names(void)
{
	char name[256], long_path[600];
	struct output *o = open_ok(path_in("before.pfw"), -1);
	char err[256];
	struct stat st;

	output_commit(o, err, sizeof(err));
	CHECK(output_rename(o, path_in("after.pfw"), err, sizeof(err)) == 0 &&
	      access(path_in("before.pfw"), F_OK) != 0 &&
	      strcmp(output_path(o), path_in("after.pfw")) == 0,
	      "rename moves the file and its name");
	mkdir(path_in("adir"), 0755);
	CHECK(output_rename(o, path_in("adir"), err, sizeof(err)) == -EISDIR,
	      "rename never replaces a directory");
	write_range(o, 0, line_boundary(100));
	output_suspend(o);
	output_close(o, err, sizeof(err));
	CHECK(lstat(path_in("after.pfw"), &st) == 0 &&
	      st.st_size == (off_t)line_boundary(100),
	      "a renamed, suspended file reopens under its new name");

	memset(name, 'n', 255);
	name[255] = 0;
	snprintf(long_path, sizeof(long_path), "%s/%s", tmpdir, name);
	o = open_ok(long_path, 1);
	CHECK(o && output_commit(o, err, sizeof(err)) == 0 &&
	      output_close(o, err, sizeof(err)) == 0 &&
	      access(long_path, F_OK) == 0,
	      "a 255-byte file name works (the temporary name is short)");
	empty_tmpdir();
}

/* ---- failures --------------------------------------------------------- */

enum fail_at { FAIL_MID_STREAM, FAIL_IN_FLUSH, FAIL_IN_CLOSE };

/* Writes and flushes up to `good`, arms the simulated full disk after a few
 * more bytes, then fails at the given step.  The file must then hold
 * exactly data[0, good), readable. */
static void test_failure(int level, enum fail_at at, int err_no, size_t good)
{
	static const char *const at_name[] = { "mid-stream", "in flush",
					       "in close" };
	const char *path = path_in("fail.pfw");
	struct output *o = open_ok(path, level);
	char err[256], want[512], *file, *plain;
	size_t len, plain_len, more;
	int rc;

	output_commit(o, err, sizeof(err));
	write_range(o, 0, good);
	if (good)
		output_flush(o);
	output_test_fail_writes(o, 1000, err_no);
	/* More than the 1 MiB buffer, so a write must drain it mid-stream. */
	more = at == FAIL_MID_STREAM ? data_len : line_boundary(good + 200000);
	rc = write_range(o, good, more);
	if (at == FAIL_IN_FLUSH)
		rc = output_flush(o);
	if (at != FAIL_IN_CLOSE) {
		uint64_t in = output_bytes_in(o);

		CHECK(rc == -err_no && output_failed(o),
		      "level %d, %s: the failing call returns -%d",
		      level, at_name[at], err_no);
		CHECK(output_write(o, "{}\n", 3) == -err_no &&
		      output_flush(o) == -err_no && output_bytes_in(o) == in,
		      "level %d, %s: later calls fail the same, do nothing",
		      level, at_name[at]);
	}
	rc = output_close(o, err, sizeof(err));
	file = slurp(path, &len);
	if (err_no == ENOSPC)
		snprintf(want, sizeof(want), "disk full writing '%s': trace cut "
			 "at the last flush (%zu bytes kept)", path, len);
	else
		snprintf(want, sizeof(want), "cannot write '%s': %s; trace cut "
			 "at the last flush (%zu bytes kept)", path,
			 strerror(err_no), len);
	CHECK(rc == -err_no, "level %d, %s: close returns -%d", level,
	      at_name[at], err_no);
	CHECK_STREQ(err, want, "level %d, %s: close says the bytes kept on disk",
		    level, at_name[at]);

	if (level < 0) {
		CHECK(same(file, len, data, good),
		      "level -1, %s: file holds exactly the %zu flushed bytes",
		      at_name[at], good);
	} else {
		rc = gunzip(file, len, &plain, &plain_len);
		CHECK(rc == 1 && same(plain, plain_len, data, good),
		      "level %d, %s: file is a complete gzip of exactly the "
		      "%zu flushed bytes", level, at_name[at], good);
		free(plain);
	}
	CHECK(nr_entries(tmpdir) == 1, "level %d, %s: no temporary left",
	      level, at_name[at]);
	free(file);
	empty_tmpdir();
}

static void test_failures(void)
{
	size_t good = line_boundary(300000);
	int levels[] = { -1, 1, 9 };
	unsigned int i;

	for (i = 0; i < sizeof(levels) / sizeof(levels[0]); i++) {
		test_failure(levels[i], FAIL_MID_STREAM, ENOSPC, good);
		test_failure(levels[i], FAIL_IN_FLUSH, ENOSPC, good);
		test_failure(levels[i], FAIL_IN_CLOSE, ENOSPC, good);
	}
	/* Before any flush: gzip keeps an empty but valid file. */
	test_failure(-1, FAIL_MID_STREAM, ENOSPC, 0);
	test_failure(1, FAIL_MID_STREAM, ENOSPC, 0);
	test_failure(1, FAIL_IN_CLOSE, EIO, 0);
	test_failure(6, FAIL_IN_FLUSH, EIO, good);
}

static void put_line(struct sink *s, uint32_t tid, const char *text)
{
	jb_mem(&s->buf, text, strlen(text));
	jb_char(&s->buf, '\n');
	sink_line_end(s, tid);
}

/* A batch goes out metadata first, then each thread's lines in the order
 * written, the threads in the order they came, then "end"; what was not
 * marked as a line stays where it was at either end. */
static void test_sink_groups(void)
{
	static const char want[] = "[\nM1\nM2\nM3\na1\na2\na3\nb1\nb2\nc1\nend\n]\n";
	struct output_opts opts = { .path = path_in("g.pfw"), .gzip_level = -1 };
	struct sink *s = NULL;
	char err[256], *got;
	size_t len;

	CHECK(sink_open(&opts, &s, err, sizeof(err)) == 0, "a sink opens");
	if (!s)
		return;
	JB_LIT(&s->buf, "[\n");
	put_line(s, SINK_META, "M1");
	put_line(s, 7, "a1");
	put_line(s, 9, "b1");
	put_line(s, SINK_META, "M2");
	put_line(s, 7, "a2");
	put_line(s, 7, "a3");
	put_line(s, 3, "c1");
	put_line(s, 9, "b2");
	put_line(s, SINK_META, "M3");
	put_line(s, SINK_LAST, "end");
	JB_LIT(&s->buf, "]\n");
	CHECK(output_commit(s->out, err, sizeof(err)) == 0 &&
	      sink_close(s, err, sizeof(err)) == 0, "it closes");
	got = slurp(opts.path, &len);
	CHECK(got && same(got, len, want, sizeof(want) - 1), "lines grouped: '%.*s'",
	      got ? (int)len : 0, got ? got : "");
	free(got);
}

/* Over many batches and more threads than a batch groups: every line
 * once, each thread's in order, and far fewer changes of thread. */
static void test_sink_many_threads(void)
{
	enum { LINES = 60000, THREADS = 40 };
	struct output_opts opts = { .path = path_in("m.pfw"), .gzip_level = 1 };
	uint32_t next[THREADS + 1] = { 0 }, last = 0, changes_in = 0, changes_out = 0;
	struct sink *s = NULL;
	char err[256], line[96], *got, *text = NULL, *p;
	size_t len, text_len = 0, lines = 0;
	bool ordered = true;

	CHECK(sink_open(&opts, &s, err, sizeof(err)) == 0, "a sink opens");
	if (!s)
		return;
	srand(7);
	for (int i = 0; i < LINES; i++) {
		uint32_t tid = 1 + (rand() % 8 ? rand() % 3 : rand() % THREADS);

		changes_in += tid != last;
		last = tid;
		snprintf(line, sizeof(line), "%u %u %.*s", tid, next[tid]++, 40, "0123456789012345678901234567890123456789");
		put_line(s, tid, line);
		if (sink_maybe_drain(s))
			break;
	}
	CHECK(output_commit(s->out, err, sizeof(err)) == 0 &&
	      sink_close(s, err, sizeof(err)) == 0, "it closes");
	got = slurp(opts.path, &len);
	if (!got || gunzip(got, len, &text, &text_len) != 1) {
		CHECK(0, "the file gunzips");
		free(got);
		return;
	}
	memset(next, 0, sizeof(next));
	last = 0;
	for (p = text; p < text + text_len; p = strchr(p, '\n') + 1, lines++) {
		unsigned tid, seq;

		if (sscanf(p, "%u %u", &tid, &seq) != 2 || tid > THREADS || seq != next[tid]++) {
			ordered = false;
			break;
		}
		changes_out += tid != last;
		last = tid;
	}
	CHECK(ordered && lines == LINES, "every line once, each thread's in order (%zu lines)", lines);
	CHECK(changes_out * 4 < changes_in, "changes of thread: %u written, %u out", changes_in,
	      changes_out);
	free(got);
	free(text);
}

int main(void)
{
	umask(022);
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	make_data();
	test_round_trip(-1);
	test_round_trip(0);
	test_round_trip(1);
	test_round_trip(6);
	test_bytes_out();
	test_whole_lines();
	test_empty();
	test_stdout();
	test_abort();
	test_symlink();
	test_bad_targets();
	test_relative();
	test_as_invoker();
	for (int level = -1; level <= 6; level += 7)
		test_suspend(level);
	test_replaced_while_suspended();
	test_rename_and_long_names();
	test_failures();
	test_sink_groups();
	test_sink_many_threads();
	nftw(tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(data);
	free(line_end);
	return check_done();
}
