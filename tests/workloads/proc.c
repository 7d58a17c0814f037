/* Process-tree workloads.
 *
 *   proc tree DIR     one child of each kind: raw fork(2), glibc fork()
 *                     (the clone syscall), vfork, a raw clone() process,
 *                     pthreads (named with prctl), a child that re-execs
 *                     this program, and a double fork whose grandchild is
 *                     orphaned.  Each child's first traced syscall is a write
 *                     of a distinct size to a file its parent opened, so a
 *                     child whose first events are missed shows up at once.
 *   proc storm DIR NFD NTHREAD NFORK
 *                     NFD files open at once, NTHREAD threads, NFORK forks
 *   proc fdrace DIR NTHREAD ROUNDS
 *                     NTHREAD threads open, write and close their own
 *                     files ROUNDS times at once: fds taken as freed
 *
 * Records: io (every file syscall under DIR), spawn (parent pid/tid, the
 * expected event name, child pid or tid), exec, exit (the wait(2) status
 * that waitpid saw, or that exit(N) gives: N << 8), task (a task that must appear), tname (a thread name).
 */
#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include "workload.h"

#define R(x) ({ long r_ = (long)(x); r_ < 0 ? -(long)errno : r_; })

static char *buf;
static const char *D;

static long xopen(const char *path, int flags)
{
	long fd = wl_ok(R(open(path, flags, 0644)), path);

	wl_io(path, "open", "openat", fd);
	return fd;
}

static void xclose(const char *path, long fd)
{
	wl_io(path, "close", "close", R(close(fd)));
}

/* Wait for a direct child and report how it exited. */
static void reap(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, __WALL) != pid)
		wl_die("waitpid %d", pid);
	if (!WIFEXITED(st)) {
		errno = ECHILD;
		wl_die("child %d did not exit normally (%#x)", pid, st);
	}
	wl_emit("exit\t%d\t%d\n", pid, st); /* the raw wait(2) status */
}

/* -------------------------------------------------------------- tree -- */
struct child_file {
	const char *name;
	char *path;
	long fd;
	size_t n;
};

static struct child_file cf[] = {
	{ "fork.dat", 0, 0, 1001 },	/* raw fork(2) */
	{ "libcfork.dat", 0, 0, 1002 },	/* glibc fork(): clone(2) */
	{ "vfork.dat", 0, 0, 1003 },
	{ "clone.dat", 0, 0, 1004 },
	{ "exec_inherit.dat", 0, 0, 1005 }, /* written after exec, fd 41 */
	{ "dfork.dat", 0, 0, 1007 },	/* the orphaned grandchild */
};
enum { CF_FORK, CF_LIBC, CF_VFORK, CF_CLONE, CF_EXEC, CF_DFORK, CF_N };

/* A child's first action: the write, then the record of it. */
static void first_write(int i)
{
	long r = R(write(cf[i].fd, buf, cf[i].n));

	wl_io(cf[i].path, "write", "write", r);
}

static int clone_fn(void *arg)
{
	(void)arg;
	first_write(CF_CLONE);
	return 14;
}

/* One write to path, opened with flags and closed. */
static void write_file(const char *path, int flags, size_t n)
{
	long fd = xopen(path, flags);

	wl_io(path, "write", "write", R(write(fd, buf, n)));
	xclose(path, fd);
}

#define NTREE_THREADS 4
struct tinfo {
	int i;
	pid_t tid;
};

static void *tree_thread(void *arg)
{
	struct tinfo *t = arg;
	char name[16], path[PATH_MAX];

	t->tid = wl_tid();
	snprintf(name, sizeof(name), "wl-worker-%d", t->i);
	if (prctl(PR_SET_NAME, name) < 0)
		wl_die("prctl");
	wl_emit("tname\t%d\t%d\t%s\n", wl_pid(), t->tid, name);
	snprintf(path, sizeof(path), "%s/thread_%d.dat", D, t->i);
	write_file(path, O_CREAT | O_WRONLY | O_TRUNC, 2000 + t->i);
	return NULL;
}

static void tree(void)
{
	char *stack, arg[16];
	pthread_t th[NTREE_THREADS];
	struct tinfo ti[NTREE_THREADS];
	pid_t pid, me = wl_pid(), mytid = wl_tid();
	pid_t kids[8];
	int nk = 0, pp[2], i;

	for (i = 0; i < CF_N; i++) {
		cf[i].path = wl_path(D, cf[i].name);
		cf[i].fd = xopen(cf[i].path, O_CREAT | O_WRONLY | O_TRUNC);
	}

	/* raw fork(2): nothing of glibc runs in the child before the write */
	pid = syscall(SYS_fork);
	if (pid < 0)
		wl_die("fork");
	if (pid == 0) {
		first_write(CF_FORK);
		syscall(SYS_exit_group, 11);
	}
	wl_emit("spawn\t%d\t%d\tfork\t%d\n", me, mytid, pid);
	kids[nk++] = pid;

	/* glibc fork(): the clone syscall */
	pid = fork();
	if (pid < 0)
		wl_die("fork");
	if (pid == 0) {
		first_write(CF_LIBC);
		_exit(12);
	}
	wl_emit("spawn\t%d\t%d\tclone\t%d\n", me, mytid, pid);
	kids[nk++] = pid;

	pid = vfork();
	if (pid < 0)
		wl_die("vfork");
	if (pid == 0) {
		first_write(CF_VFORK);
		_exit(13);
	}
	wl_emit("spawn\t%d\t%d\tvfork\t%d\n", me, mytid, pid);
	kids[nk++] = pid;

	stack = malloc(256 * 1024);
	if (!stack)
		wl_die("malloc");
	pid = clone(clone_fn, stack + 256 * 1024, SIGCHLD, NULL);
	if (pid < 0)
		wl_die("clone");
	wl_emit("spawn\t%d\t%d\tclone\t%d\n", me, mytid, pid);
	kids[nk++] = pid;

	/* exec: the child re-execs us; the new image writes to fd 41, which
	 * it inherited without opening it */
	if (syscall(SYS_dup2, cf[CF_EXEC].fd, 41) != 41)
		wl_die("dup2");
	wl_io(cf[CF_EXEC].path, "dup2", "dup2", 41);
	pid = fork();
	if (pid < 0)
		wl_die("fork");
	if (pid == 0) {
		char *argv[] = { "proc", "exec-child", (char *)D, NULL };

		execv("/proc/self/exe", argv);
		wl_die("execv");
	}
	wl_emit("spawn\t%d\t%d\tclone\t%d\n", me, mytid, pid);
	kids[nk++] = pid;

	/* double fork: the grandchild outlives its parent and is reparented
	 * outside the traced tree; we learn it is done when the pipe closes */
	if (pipe(pp) < 0)
		wl_die("pipe");
	pid = fork();
	if (pid < 0)
		wl_die("fork");
	if (pid == 0) {
		pid_t c = wl_pid(), g = fork();

		if (g < 0)
			wl_die("fork");
		if (g == 0) {
			while (getppid() == c)
				wl_msleep(1);
			first_write(CF_DFORK);
			wl_emit("exit\t%d\t%d\n", wl_pid(), 17 << 8);
			_exit(17);
		}
		wl_emit("spawn\t%d\t%d\tclone\t%d\n", c, c, g);
		_exit(16);
	}
	close(pp[1]);
	wl_emit("spawn\t%d\t%d\tclone\t%d\n", me, mytid, pid);
	kids[nk++] = pid;

	/* threads */
	for (i = 0; i < NTREE_THREADS; i++) {
		ti[i].i = i;
		if (pthread_create(&th[i], NULL, tree_thread, &ti[i]))
			wl_die("pthread_create");
	}
	for (i = 0; i < NTREE_THREADS; i++) {
		pthread_join(th[i], NULL);
		wl_emit("spawn\t%d\t%d\tclone\t%d\n", me, mytid, ti[i].tid);
		wl_emit("task\t%d\t%d\n", me, ti[i].tid);
	}

	for (i = 0; i < nk; i++)
		reap(kids[i]);
	while (read(pp[0], arg, sizeof(arg)) > 0)
		;
	close(pp[0]);
	for (i = 0; i < CF_N; i++)
		xclose(cf[i].path, cf[i].fd);
}

/* The re-exec'd child of tree(): fd 41 is the inherited exec_inherit.dat. */
static void exec_child(void)
{
	char *path = wl_path(D, "exec_inherit.dat");
	char *np = wl_path(D, "exec_new.dat");
	long r = R(write(41, buf, 1005)), fd;

	wl_io(path, "write", "write", r);
	wl_emit("exec\t%d\n", wl_pid());
	fd = xopen(np, O_CREAT | O_WRONLY | O_TRUNC);
	wl_io(np, "write", "write", R(write(fd, buf, 1006)));
	xclose(np, fd);
	xclose(path, 41);
	exit(15);
}

/* ----------------------------------------------------- file threads -- */
/* nthread threads at once, each writing D/<prefix>NNN (its number) once
 * a round: open, write (its number + 1 bytes), close. */
static struct {
	pthread_barrier_t bar;
	const char *prefix;
	int rounds;
} ft;

static void *file_thread(void *arg)
{
	long i = (long)arg;
	char path[PATH_MAX];

	pthread_barrier_wait(&ft.bar);
	snprintf(path, sizeof(path), "%s/%s%03ld", D, ft.prefix, i);
	for (int r = 0; r < ft.rounds; r++)
		write_file(path, O_CREAT | O_WRONLY | O_APPEND, i % 100 + 1);
	return (void *)(long)wl_tid();
}

static void file_threads(int nthread, int rounds, const char *prefix)
{
	pthread_t *th = calloc(nthread, sizeof(*th));
	pid_t me = wl_pid(), mytid = wl_tid();
	pthread_attr_t attr;

	if (nthread < 1 || rounds < 1 || !th)
		wl_die("file threads: %d threads, %d rounds", nthread, rounds);
	ft.prefix = prefix;
	ft.rounds = rounds;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 128 * 1024);
	pthread_barrier_init(&ft.bar, NULL, nthread);
	for (long i = 0; i < nthread; i++)
		if (pthread_create(&th[i], &attr, file_thread, (void *)i))
			wl_die("pthread_create %ld", i);
	for (int i = 0; i < nthread; i++) {
		void *tid;

		pthread_join(th[i], &tid);
		wl_emit("spawn\t%d\t%d\tclone\t%ld\n", me, mytid, (long)tid);
		wl_emit("task\t%d\t%ld\n", me, (long)tid);
	}
	pthread_barrier_destroy(&ft.bar);
	free(th);
}

/* ------------------------------------------------------------- storm -- */
static void storm(int nfd, int nthread, int nfork)
{
	struct rlimit rl;
	char **paths = calloc(nfd, sizeof(*paths));
	long *fds = calloc(nfd, sizeof(*fds)), ffd;
	pid_t me = wl_pid(), mytid = wl_tid(), kids[50];
	char *p;
	int i, j;

	if (!paths || !fds)
		wl_die("calloc");
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		wl_die("getrlimit");
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur < (rlim_t)nfd + 64)
		wl_die("RLIMIT_NOFILE %lu is too low for %d fds",
		       (unsigned long)rl.rlim_cur, nfd);

	p = wl_path(D, "fds");
	wl_io(p, "mkdir", "mkdir", R(syscall(SYS_mkdir, p, 0755)));
	p = wl_path(D, "thr");
	wl_io(p, "mkdir", "mkdir", R(syscall(SYS_mkdir, p, 0755)));

	/* nfd files open at the same time */
	for (i = 0; i < nfd; i++) {
		if (asprintf(&paths[i], "%s/fds/f%04d", D, i) < 0)
			wl_die("asprintf");
		fds[i] = xopen(paths[i], O_CREAT | O_WRONLY | O_TRUNC);
	}
	for (i = 0; i < nfd; i++)
		wl_io(paths[i], "write", "write",
		      R(write(fds[i], buf, i % 50 + 1)));
	for (i = 0; i < nfd; i++)
		xclose(paths[i], fds[i]);

	/* nthread threads alive at once */
	file_threads(nthread, 1, "thr/t");

	/* nfork children, 50 at a time; each child's first action is an
	 * appending write to a shared file */
	p = wl_path(D, "forks.dat");
	ffd = xopen(p, O_CREAT | O_WRONLY | O_TRUNC | O_APPEND);
	for (i = 0; i < nfork; i += 50) {
		int n = nfork - i < 50 ? nfork - i : 50;

		for (j = 0; j < n; j++) {
			pid_t pid = fork();

			if (pid < 0)
				wl_die("fork");
			if (pid == 0) {
				long r = R(write(ffd, buf, (i + j) % 64 + 1));

				wl_io(p, "write", "write", r);
				_exit((i + j) % 200);
			}
			wl_emit("spawn\t%d\t%d\tclone\t%d\n", me, mytid, pid);
			kids[j] = pid;
		}
		for (j = 0; j < n; j++)
			reap(kids[j]);
	}
	xclose(p, ffd);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: proc tree|storm|fdrace DIR [NFD NTHREAD NFORK | NTHREAD ROUNDS]\n");
		return 2;
	}
	D = argv[2]; /* absolute and canonical */
	buf = wl_buf(65536);
	if (strcmp(argv[1], "tree") == 0)
		tree();
	else if (strcmp(argv[1], "exec-child") == 0)
		exec_child();
	else if (strcmp(argv[1], "storm") == 0 && argc == 6)
		storm(atoi(argv[3]), atoi(argv[4]), atoi(argv[5]));
	else if (strcmp(argv[1], "fdrace") == 0 && argc == 5)
		/* one's close and another's open race for the same fd */
		file_threads(atoi(argv[3]), atoi(argv[4]), "race_");
	else {
		fprintf(stderr, "proc: bad arguments\n");
		return 2;
	}
	return 0;
}
