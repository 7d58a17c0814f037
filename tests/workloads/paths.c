/* paths DIR: file names that are hard to write as JSON, and path lengths at
 * the kernel's limit.
 *
 * in DIR/hostile, DIR/long and DIR/toolong:
 *  - a file whose name holds quotes, backslashes, a newline, a tab, control
 *    bytes, DEL, valid multibyte UTF-8 and invalid UTF-8; one write of 77
 *    bytes to it ("hostile" record, path in hex)
 *  - a file whose absolute path is exactly 4095 bytes (PATH_MAX - 1, the
 *    longest the kernel accepts), made with mkdirat/openat; io records
 *  - opens of absolute paths of 4096 and 5000 bytes: ENAMETOOLONG
 *    ("toolong" records)
 */
#include "workload.h"

#define R(x) ({ long r_ = (long)(x); r_ < 0 ? -(long)errno : r_; })

static const char hostile[] =
	"q\"uo'te\\back\\\\slash\nnew\tline\x01\x02\x1b[31m\x7f"
	" caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 "	/* é € 😀 */
	"bad:\xff\xfe|\xc0\xaf|\xed\xa0\x80|\xe2\x82|\x80 end";

static void hex(char *out, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", (unsigned char)s[i]);
	out[2 * n] = 0;
}

int main(int argc, char **argv)
{
	const char *D;
	char *p, *h, *hd, *ld, *td, comp[256];
	size_t len;
	long fd, dfd, nfd;

	if (argc != 2) {
		fprintf(stderr, "usage: paths DIR\n");
		return 2;
	}
	/* three subdirectories, so that a test can account for each alone */
	if (asprintf(&hd, "%s/hostile", argv[1]) < 0 ||
	    asprintf(&ld, "%s/long", argv[1]) < 0 ||
	    asprintf(&td, "%s/toolong", argv[1]) < 0)
		wl_die("asprintf");
	wl_io(hd, "mkdir", "mkdir", wl_ok(R(syscall(SYS_mkdir, hd, 0755)), "mkdir"));
	wl_io(ld, "mkdir", "mkdir", wl_ok(R(syscall(SYS_mkdir, ld, 0755)), "mkdir"));
	wl_io(td, "mkdir", "mkdir", wl_ok(R(syscall(SYS_mkdir, td, 0755)), "mkdir"));
	D = ld;
	p = malloc(8192);
	h = malloc(16384 + 1);
	if (!p || !h)
		wl_die("malloc");

	/* hostile name */
	snprintf(p, 8192, "%s/%s", hd, hostile);
	fd = wl_ok(R(open(p, O_CREAT | O_WRONLY | O_TRUNC, 0644)), "hostile");
	if (write(fd, wl_buf(77), 77) != 77)
		wl_die("write hostile");
	close(fd);
	hex(h, p, strlen(p));
	wl_emit("hostile\t%d\t%s\t77\n", wl_pid(), h);

	/* a path of exactly 4095 bytes: D/LLL.../LLL.../.../fff */
	dfd = wl_ok(R(open(D, O_PATH | O_DIRECTORY)), "open D");
	wl_io(D, "open", "openat", dfd);
	strcpy(p, D);
	len = strlen(p);
	memset(comp, 'L', 200);
	comp[200] = 0;
	while (4095 - len > 1 + 200 + 1 + 50) {
		p[len++] = '/';
		strcpy(p + len, comp);
		len += 200;
		wl_io(p, "mkdir", "mkdirat", R(syscall(SYS_mkdirat, dfd, comp, 0755)));
		nfd = wl_ok(R(openat(dfd, comp, O_PATH | O_DIRECTORY)), "openat");
		wl_io(p, "open", "openat", nfd);
		*strrchr(p, '/') = 0;
		wl_io(p, "close", "close", R(close(dfd)));
		p[len - 201] = '/';
		dfd = nfd;
	}
	wl_io(p, "close", "close", R(close(dfd)));
	p[len++] = '/';
	memset(p + len, 'f', 4095 - len);
	p[4095] = 0;
	if (strlen(p) != 4095) {
		errno = EINVAL;
		wl_die("path length %zu", strlen(p));
	}
	fd = wl_ok(R(open(p, O_CREAT | O_WRONLY | O_TRUNC, 0644)), "4095");
	wl_io(p, "open", "openat", fd);
	wl_io(p, "write", "write", R(write(fd, wl_buf(55), 55)));
	wl_io(p, "close", "close", R(close(fd)));

	/* 4096 and 5000 bytes: too long */
	strcpy(p, td);
	len = strlen(p);
	while (len + 201 < 4096) {
		p[len++] = '/';
		memset(p + len, 'M', 200);
		len += 200;
	}
	p[len++] = '/';
	for (int n = 4096; n <= 5000; n += 904) {
		memset(p + len, 'g', n - len);
		p[n] = 0;
		fd = R(open(p, O_RDONLY));
		if (fd != -ENAMETOOLONG)
			wl_die("open of %d bytes gave %ld", n, fd);
		hex(h, p, n < 8000 ? n : 8000);
		wl_emit("toolong\t%d\t%d\t%s\t%ld\n", wl_pid(), wl_tid(), h, fd);
	}
	return 0;
}
