/* Minimal TAP producer for the C unit tests: one "ok"/"not ok" line per
 * check, so tests/run can count them like bats output. */
#ifndef CHECK_H
#define CHECK_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_n, check_failed;

#define CHECK(cond, ...)                                                  \
	do {                                                              \
		++check_n;                                                \
		if (cond) {                                               \
			printf("ok %d - ", check_n);                      \
		} else {                                                  \
			++check_failed;                                   \
			printf("not ok %d - %s:%d: ", check_n, __FILE__,  \
			       __LINE__);                                 \
		}                                                         \
		printf(__VA_ARGS__);                                      \
		printf("\n");                                             \
	} while (0)

#define CHECK_STREQ(got, want, ...)                                       \
	do {                                                              \
		const char *g_ = (got), *w_ = (want);                     \
		CHECK(g_ && strcmp(g_, w_) == 0, __VA_ARGS__);            \
		if (!g_ || strcmp(g_, w_) != 0)                           \
			printf("#   got:  '%s'\n#   want: '%s'\n",         \
			       g_ ? g_ : "(null)", w_);                   \
	} while (0)

/* dir/name in one of four rotating buffers (a test may hold a few). */
static inline char *check_path(const char *dir, const char *name)
{
	static char buf[4][512];
	static int next;
	char *p = buf[next++ % 4];

	snprintf(p, sizeof(buf[0]), "%s/%s", dir, name);
	return p;
}

/* Removes a test's temporary folder (made by mkdtemp) and all in it. */
static inline void check_rm_tree(const char *dir)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", dir);
}

static inline int check_done(void)
{
	printf("1..%d\n", check_n);
	return check_failed ? 1 : 0;
}
#endif
