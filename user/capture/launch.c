// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>
#include "capture/launch.h"
#include "lib/invoker.h"

static void child(char **argv, const struct launch *l, int go_fd, int err_fd)
{
	char go;
	int e = invoker_become(l->as);

	/* The tracer raised its own limit; the command runs as untraced. */
	if (!e && l->nofile && setrlimit(RLIMIT_NOFILE, l->nofile))
		e = -errno;
	if (!e && l->stdout_to_stderr && dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
		e = -errno;
	/* The command runs as it would untraced: the tracer's handlers go
	 * at exec, but its SIGPIPE, ignored, would stay; and what was
	 * ignored when the tracer started must be again. */
	signal(SIGPIPE, SIG_DFL);
	for (int sig = 1; sig < NSIG; sig++) {
		if (sigismember(&l->ignored, sig) == 1)
			signal(sig, SIG_IGN);
	}
	sigprocmask(SIG_SETMASK, &l->blocked, NULL);

	if (!e && read(go_fd, &go, 1) != 1)
		_exit(127); /* the tracer gave up on us */
	if (!e) {
		execvp(argv[0], argv);
		e = -errno;
	}
	e = -e;
	if (write(err_fd, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(e == ENOENT ? 127 : 126);
}

int launch_prepare(char **argv, struct launch *l, char *err, size_t errlen)
{
	int go[2], res[2];

	l->pid = -1;
	if (pipe2(go, O_CLOEXEC) || pipe2(res, O_CLOEXEC)) {
		snprintf(err, errlen, "cannot create pipe: %s", strerror(errno));
		return -errno;
	}
	fflush(NULL);
	l->pid = fork();
	if (l->pid < 0) {
		snprintf(err, errlen, "cannot fork: %s", strerror(errno));
		return -errno;
	}
	if (l->pid == 0) {
		close(go[1]);
		close(res[0]);
		child(argv, l, go[0], res[1]);
	}
	close(go[0]);
	close(res[1]);
	l->go_fd = go[1];
	l->err_fd = res[0];
	return 0;
}

int launch_start(struct launch *l, char *err, size_t errlen)
{
	int child_errno = 0;
	ssize_t n;

	/* A child that failed before waiting has already sent its errno. */
	if (write(l->go_fd, "g", 1) != 1)
		child_errno = EIO;
	close(l->go_fd);
	l->go_fd = -1;
	do
		n = read(l->err_fd, &child_errno, sizeof(child_errno));
	while (n < 0 && errno == EINTR);
	close(l->err_fd);
	l->err_fd = -1;
	if (n == 0)
		return 0; /* exec closed the pipe: running */
	snprintf(err, errlen, "%s", strerror(child_errno ? child_errno : EIO));
	waitpid(l->pid, NULL, 0);
	l->pid = -1;
	return -(child_errno ? child_errno : EIO);
}

void launch_abort(struct launch *l)
{
	if (!l || l->pid <= 0)
		return;
	kill(l->pid, SIGKILL);
	waitpid(l->pid, NULL, 0);
	l->pid = -1;
	if (l->go_fd >= 0)
		close(l->go_fd);
	if (l->err_fd >= 0)
		close(l->err_fd);
}

static bool executable_file(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode) && !access(path, X_OK);
}

/* The file execvp() will run: it searches PATH (an empty entry is the
 * current directory) unless the name has a slash. */
static bool find_command(const char *cmd, char *buf, size_t len)
{
	const char *p = getenv("PATH");

	if (strchr(cmd, '/')) {
		snprintf(buf, len, "%s", cmd);
		return executable_file(buf);
	}
	for (p = p ? p : "/usr/bin:/bin";; p++) {
		size_t n = strcspn(p, ":");

		snprintf(buf, len, "%.*s/%s", (int)(n ? n : 1), n ? p : ".", cmd);
		if (executable_file(buf))
			return true;
		p += n;
		if (!*p)
			return false;
	}
}

bool launch_program(const char *cmd, char *out, size_t len)
{
	char buf[PATH_MAX], real[PATH_MAX];

	/* realpath() may leave a partial path behind when it fails */
	if (!find_command(cmd, buf, sizeof(buf)) || !realpath(buf, real) ||
	    strlen(real) >= len) {
		out[0] = 0;
		return false;
	}
	strcpy(out, real);
	return true;
}
