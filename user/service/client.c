// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include "capture/env.h"
#include "capture/torchenv.h"
#include "service/proto.h"
#include "service/serve.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

struct request {
	struct proto_header h;
	char args[PROTO_MAX_BYTES];
	int fds[PROTO_MAX_FDS];
	int nfds;
};

/* One line on stderr, after "dftrace-bpf: ": 1, the exit status. */
static int say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int say(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "dftrace-bpf: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	return 1;
}

static int connect_service(void)
{
	const char *path = getenv(SERVICE_SOCKET_ENV);
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd;

	if (!path || !*path)
		path = SERVICE_SOCKET;
	if (strlen(path) >= sizeof(a.sun_path))
		return -ENAMETOOLONG;
	strcpy(a.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

/* The tracer's options, NUL after each, and what is sent with them. */
static int build(struct request *q, int argc, char **argv)
{
	size_t at = 0;

	q->h = (struct proto_header){ .magic = PROTO_MAGIC, .version = PROTO_VERSION };
	for (int i = 0; i < argc; i++) {
		size_t n = strlen(argv[i]) + 1;

		if (q->h.argc == PROTO_MAX_ARGS || n > sizeof(q->args) - at)
			return -E2BIG;
		memcpy(q->args + at, argv[i], n);
		at += n;
		q->h.argc++;
	}
	q->h.len = at;
	q->fds[0] = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	q->fds[1] = 1;
	q->fds[2] = 2;
	q->nfds = 3;
	return q->fds[0] < 0 ? -errno : 0;
}

static int send_request(int sock, const struct request *q)
{
	union {
		char buf[CMSG_SPACE(PROTO_MAX_FDS * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov[2] = { { (void *)&q->h, sizeof(q->h) },
				{ (void *)q->args, q->h.len } };
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = 2, .msg_control = u.buf,
			      .msg_controllen = CMSG_SPACE(q->nfds * sizeof(int)) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
	ssize_t n;

	memset(u.buf, 0, sizeof(u.buf));
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(q->nfds * sizeof(int));
	memcpy(CMSG_DATA(cm), q->fds, q->nfds * sizeof(int));
	n = sendmsg(sock, &msg, MSG_NOSIGNAL);
	return n == (ssize_t)(sizeof(q->h) + q->h.len) ? 0 : -EPROTO;
}

/* The command, started and held until the service traces it: it runs
 * as we do, where we do. go: the pipe it waits on. */
static pid_t start_command(char **cmd, int *go)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid == 0) {
		int32_t tracer;
		char n[16];

		close(p[1]);
		if (read(p[0], &tracer, sizeof(tracer)) != sizeof(tracer))
			_exit(127); /* never let go: not traced */
		close(p[0]);
		snprintf(n, sizeof(n), "%d", (int)tracer);
		setenv("DFTRACE_BPF_TRACER", n, 1);
		execvp(cmd[0], cmd);
		fprintf(stderr, "dftrace-bpf: cannot run '%s': %s\n", cmd[0], strerror(errno));
		_exit(127);
	}
	close(p[0]);
	*go = p[1];
	return pid;
}

static volatile sig_atomic_t stop_asked;

static void on_stop(int sig)
{
	(void)sig;
	stop_asked = 1;
}

/* The service's tracer gone (its trace no longer counts against our
 * limit): status. */
static int gone(int sock, int status)
{
	char b[64];
	ssize_t n;

	while ((n = recv(sock, b, sizeof(b), 0)) > 0 || (n < 0 && errno == EINTR))
		;
	return status;
}

/* The replies, until DONE: the tracer's status, or -1 with the service's
 * word (or its silence) said. */
static int await_done(int sock, int *go, pid_t cmd)
{
	struct proto_reply r;
	bool shut = false;

	for (;;) {
		ssize_t n = recv(sock, &r, sizeof(r), MSG_WAITALL);

		if (n < 0 && errno == EINTR) {
			if (stop_asked && !shut)
				shut = !shutdown(sock, SHUT_WR); /* the trace ends */
			continue;
		}
		if (n != sizeof(r))
			return say("the service ended the trace without a word"), -1;
		if (r.kind == PROTO_READY && *go >= 0) {
			(void)!write(*go, &r.value, sizeof(r.value));
			close(*go);
			*go = -1;
		} else if (r.kind == PROTO_DONE) {
			return gone(sock, r.value);
		} else if (r.kind == PROTO_ERROR && r.value >= 0 && r.value <= PROTO_MAX_ERROR) {
			char why[PROTO_MAX_ERROR + 1];

			n = recv(sock, why, r.value, MSG_WAITALL);
			why[n > 0 ? n : 0] = 0;
			if (cmd > 0)
				kill(cmd, SIGKILL);
			return say("the service refused: %s", why), -1;
		}
	}
}

static int command_status(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return 1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int client_main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_stop };
	static struct request q;
	static struct env env;
	char **cmd = NULL;
	int nopts = argc - 1, sock, go = -1, status, err;
	pid_t pid = -1;

	/* --help, --version and bad options answered here, as they are
	 * with root */
	env_parse(&env, argc, argv);
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			nopts = i - 1;
			cmd = argv[i + 1] ? argv + i + 1 : NULL;
			break;
		}
	if (env.torch) { /* the command starts here: its environment too */
		char why[512];

		if (torch_environment(why, sizeof(why))) {
			fprintf(stderr, "dftrace-bpf: %s\n", why);
			return 1;
		}
	}
	sock = connect_service();
	if (sock < 0)
		return say("permission denied: tracing needs root or CAP_BPF and CAP_PERFMON, "
			   "or the service at '%s' (dftrace-bpf serve): %s",
			   getenv(SERVICE_SOCKET_ENV) ? getenv(SERVICE_SOCKET_ENV) : SERVICE_SOCKET,
			   strerror(-sock));
	err = build(&q, nopts, argv + 1);
	if (err)
		return say("too many arguments for the service");
	if (cmd) {
		pid = start_command(cmd, &go);
		q.fds[q.nfds] = pid > 0 ? (int)syscall(SYS_pidfd_open, pid, 0) : -1;
		if (q.fds[q.nfds] < 0)
			return say("cannot start '%s': %s", cmd[0], strerror(errno));
		q.nfds++;
		q.h.flags |= PROTO_CHILD;
		q.h.child = pid;
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	/* a service that refuses before it reads (a limit) has said why */
	if (send_request(sock, &q) && errno != EPIPE && errno != ECONNRESET) {
		if (pid > 0)
			kill(pid, SIGKILL);
		return say("cannot send the request to the service");
	}
	status = await_done(sock, &go, pid);
	if (pid > 0) {
		int cmd_status;

		if (go >= 0)
			close(go); /* never let go: it ends, untraced */
		cmd_status = command_status(pid);
		/* under sudo, -- CMD exits as CMD did; a tracer that failed says so */
		status = status == 0 ? cmd_status : status < 0 ? 1 : status;
	}
	return status < 0 ? 1 : status;
}
