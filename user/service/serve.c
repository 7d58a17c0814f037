// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "capture/env.h"
#include "capture/tracer.h"
#include "lib/hmap.h"
#include "lib/termsafe.h"
#include "service/peer.h"
#include "service/policy.h"
#include "service/proto.h"
#include "service/serve.h"

/* A request that does not come whole within this is refused. */
#define REQUEST_TIMEOUT_S 2

struct serve_opts {
	const char *socket, *policy;
};

static const struct argp_option serve_options[] = {
	{ "socket", 's', "PATH", 0, "The socket clients connect to (default "
	  SERVICE_SOCKET ")", 0 },
	{ "policy", 'P', "FILE", 0, "Who may trace what (default " SERVICE_POLICY
	  "; a missing file: each user their own processes alone)", 0 },
	{},
};

static error_t parse_serve(int key, char *arg, struct argp_state *state)
{
	struct serve_opts *o = state->input;

	switch (key) {
	case 's':
		o->socket = arg;
		break;
	case 'P':
		o->policy = arg;
		break;
	case ARGP_KEY_ARG:
		argp_error(state, "unexpected argument '%s'", arg);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const char serve_doc[] =
"The root service through which users without root trace their own work:\n"
"dftrace-bpf run without the privilege to load BPF connects to it. Each\n"
"client's trace is its own tracer, run with the client's identity for the\n"
"files it makes; the kernel says who a client is (SO_PEERCRED). A user may\n"
"trace the command they start and their own processes (all their uids\n"
"theirs, no capabilities, dumpable); -a, --uid of another user, --comm and\n"
"--cgroup of others' processes only where the policy says so. One line a\n"
"trace on stderr: who, what, when, how it ended.\n";

static int log_fd = 2;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	char text[2048], safe[4 * sizeof(text)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	termsafe(safe, sizeof(safe), text);
	dprintf(log_fd, "dftrace-bpf serve: %s\n", safe);
}

/* ---- one client, in a child of the service ---- */

struct client {
	int conn;
	unsigned int id;
	struct peer peer;
	const struct policy *policy;
	struct proto_request req;
	char args[PROTO_MAX_BYTES];
	int fds[PROTO_MAX_FDS];
	int nfds;
	int child_pidfd;	/* the client's command's, or -1 */
	int pidfds[ENV_MAX_PIDS];	/* of the -p targets checked */
	pid_t pids[ENV_MAX_PIDS];
	int npidfds;
};

static void reply(const struct client *c, enum proto_reply_kind kind, int32_t value)
{
	struct proto_reply r = { kind, value };

	(void)!send(c->conn, &r, sizeof(r), MSG_NOSIGNAL);
}

static void refuse(const struct client *c, const char *why)
{
	size_t n = strlen(why);

	if (n > PROTO_MAX_ERROR)
		n = PROTO_MAX_ERROR;
	reply(c, PROTO_ERROR, (int32_t)n);
	(void)!send(c->conn, why, n, MSG_NOSIGNAL);
	say("trace %u refused: %s", c->id, why);
}

/* The header and, with it, the descriptors. */
static int recv_header(struct client *c, char *err, size_t errlen)
{
	union {
		char buf[CMSG_SPACE(PROTO_MAX_FDS * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { &c->req.h, sizeof(c->req.h) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			      .msg_controllen = sizeof(u.buf) };
	ssize_t n = recvmsg(c->conn, &msg, MSG_CMSG_CLOEXEC | MSG_WAITALL);

	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; CMSG_LEN((i + 1) * sizeof(int)) <= cm->cmsg_len; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(fd));
			if (c->nfds < PROTO_MAX_FDS)
				c->fds[c->nfds++] = fd;
			else
				close(fd);
		}
	}
	if (n != (ssize_t)sizeof(c->req.h) || msg.msg_flags & (MSG_CTRUNC | MSG_TRUNC)) {
		snprintf(err, errlen, "bad request: %s", n < 0 && errno == EAGAIN ?
			 "not sent whole in time" : "cut short");
		return -EPROTO;
	}
	return proto_check_header(&c->req.h, err, errlen);
}

static int recv_request(struct client *c, char *err, size_t errlen)
{
	struct timeval t = { REQUEST_TIMEOUT_S, 0 };
	struct stat st;
	int want, rc;
	ssize_t n;

	setsockopt(c->conn, SOL_SOCKET, SO_RCVTIMEO, &t, sizeof(t));
	rc = recv_header(c, err, errlen);
	if (rc)
		return rc;
	n = c->req.h.len ? recv(c->conn, c->args, c->req.h.len, MSG_WAITALL) : 0;
	if (n != (ssize_t)c->req.h.len) {
		snprintf(err, errlen, "bad request: its arguments %s", n < 0 && errno == EAGAIN ?
			 "not sent whole in time" : "cut short");
		return -EPROTO;
	}
	rc = proto_parse_args(&c->req.h, c->args, n, &c->req, err, errlen);
	want = PROTO_FDS + !!(c->req.h.flags & PROTO_CHILD);
	if (!rc && c->nfds != want) {
		snprintf(err, errlen, "bad request: %d descriptors, not %d", c->nfds, want);
		return -EPROTO;
	}
	if (!rc && (fstat(c->fds[0], &st) || !S_ISDIR(st.st_mode))) {
		snprintf(err, errlen, "bad request: no working directory");
		return -EPROTO;
	}
	c->child_pidfd = c->req.h.flags & PROTO_CHILD ? c->fds[3] : -1;
	return rc;
}

/* Refused, said on the client's stderr (the tracer's): one line. */
static int refused(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int refused(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "dftrace-bpf: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	return -EPERM;
}

/* --cgroup of the client's: the processes in it now that are not the
 * client's are said, and not traced (dft_scope.owner_only). */
static void others_in_cgroup(const struct client *c, const struct env *env)
{
	struct scope_opts every = env->scope;
	int n = 0, others = 0;
	char why[256];
	pid_t *pids;

	every.k.owner_only = 0;
	pids = scope_processes(&every, getpid(), &n);
	for (int i = 0; i < n; i++)
		others += peer_may_trace(&c->peer, pids[i], 0, -1, why, sizeof(why)) == -EPERM;
	free(pids);
	if (others && !env->quiet)
		fprintf(stderr, "dftrace-bpf: %d process%s in '%s' %s not %s's: not traced\n",
			others, others > 1 ? "es" : "", env->scope.cgroup_path,
			others > 1 ? "are" : "is", c->peer.name);
}

/* A scope of the client's own processes, and from then on only theirs:
 * not another user's process root moves into its cgroup later, nor a
 * setuid one of its user's (every uid must be the client's). */
static int check_scope(const struct client *c, struct env *env)
{
	struct dft_scope *k = &env->scope.k;

	if (!env->scope.on || policy_host_wide(c->policy, c->peer.uid, c->peer.groups,
					       c->peer.ngroups))
		return 0;
	if (k->all || k->ncomms)
		return refused("'-a' and '--comm' trace every user's processes: the service's "
			       "policy does not let '%s' do that", c->peer.name);
	for (int i = 0; i < k->nuids; i++)
		if (k->uids[i] != c->peer.uid)
			return refused("'--uid' of another user: the service's policy does not "
				       "let '%s' do that", c->peer.name);
	if (k->cgroup_level)
		others_in_cgroup(c, env);
	k->owner_only = 1;
	k->owner_uid = c->peer.uid;
	return 0;
}

/* For the tests: $DFTRACE_BPF_TEST_CHECKED, in the service's own
 * environment (taken at its start: a tracer's is the client's), names a
 * directory where the tracer, its targets checked, says so (DIR/checked)
 * and waits for DIR/go (a minute at most) before it attaches to them:
 * the window a pid could be reused in. */
static char *test_window_dir;

static void test_window(void)
{
	const char *dir = test_window_dir;
	char path[4096];
	int fd;

	if (!dir || snprintf(path, sizeof(path), "%s/checked", dir) >= (int)sizeof(path))
		return;
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0)
		close(fd);
	snprintf(path, sizeof(path), "%s/go", dir);
	for (int i = 0; i < 6000 && access(path, F_OK); i++)
		usleep(10000);
}

static int check(void *ctx, struct env *env)
{
	struct client *c = ctx;
	const struct policy *p = c->policy;
	char why[256];
	int rc;

	if (env->command)
		return refused("a command is started by the client, not the service");
	if (env->ringbuf_size > p->max_ring_bytes)
		return refused("'-b' of more than %llu MiB: the service's limit",
			       (unsigned long long)(p->max_ring_bytes >> 20));
	if (env->flight_on && env->flight.mem > p->max_flight_bytes)
		return refused("'--flight-mem' of more than %llu MiB: the service's limit",
			       (unsigned long long)(p->max_flight_bytes >> 20));
	rc = check_scope(c, env);
	for (int i = 0; i < env->npids && !rc; i++) {
		bool child = c->child_pidfd >= 0 && env->pids[i] == c->req.h.child;
		int fd = child ? c->child_pidfd : peer_pidfd(env->pids[i]);

		if (fd >= 0) { /* kept: attached() proves the pid still this one */
			c->pidfds[c->npidfds] = fd;
			c->pids[c->npidfds++] = env->pids[i];
		}
		if (peer_may_trace(&c->peer, env->pids[i], child ? c->peer.pid : 0, fd, why,
				   sizeof(why)))
			rc = refused("cannot trace process %d: %s", (int)env->pids[i], why);
	}
	if (!rc)
		test_window();
	return rc;
}

/* The tracer attached to the targets by number, after the check: each
 * still the process checked (alive now, so its pid was never reused). */
static int attached(void *ctx)
{
	const struct client *c = ctx;

	for (int i = 0; i < c->npidfds; i++)
		if (!peer_alive(c->pidfds[i]))
			return refused("process %d exited before its trace began; nothing "
				       "traced", (int)c->pids[i]);
	return 0;
}

static void ready(void *ctx)
{
	const struct client *c = ctx;

	reply(c, PROTO_READY, (int32_t)getpid());
}

/* The client gone, or done sending: its trace ends (SIGTERM, as a user
 * ends a tracer). */
static void *watch(void *arg)
{
	const struct client *c = arg;
	struct pollfd p = { c->conn, POLLIN | POLLRDHUP, 0 };

	while (poll(&p, 1, -1) < 0 && errno == EINTR)
		;
	kill(getpid(), SIGTERM);
	return NULL;
}

static int start_watch(struct client *c)
{
	sigset_t all, old;
	pthread_t t;
	int rc;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&t, NULL, watch, c);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!rc)
		pthread_detach(t);
	return -rc;
}

/* The tracer's world: the client's identity (as sudo gives it), working
 * directory, stdout and stderr; nothing else of the service's. */
static int become_clients(struct client *c)
{
	char n[24];

	clearenv();
	setenv("PATH", "/usr/sbin:/usr/bin:/sbin:/bin", 1);
	snprintf(n, sizeof(n), "%u", (unsigned)c->peer.uid);
	setenv("SUDO_UID", n, 1);
	snprintf(n, sizeof(n), "%u", (unsigned)c->peer.gid);
	setenv("SUDO_GID", n, 1);
	setenv("SUDO_USER", c->peer.name, 1);
	if (fchdir(c->fds[0]) || dup2(c->fds[1], 1) < 0 || dup2(c->fds[2], 2) < 0)
		return -errno;
	return 0;
}

static void log_request(const struct client *c)
{
	char line[1024];
	size_t at = 0;

	for (int i = 0; i < c->req.argc && at < sizeof(line); i++)
		at += snprintf(line + at, sizeof(line) - at, " %s", c->req.argv[i]);
	say("trace %u: '%s' (uid %u, pid %d):%s%s", c->id, c->peer.name,
	    (unsigned)c->peer.uid, (int)c->peer.pid, line,
	    c->req.h.flags & PROTO_CHILD ? " (and its command)" : "");
}

static int serve_client(struct client *c)
{
	char err[512] = "", pid[16], *argv[PROTO_MAX_ARGS + 4];
	struct tracer_hooks hooks = { check, attached, ready, c };
	int argc = 0, status;

	if (recv_request(c, err, sizeof(err))) {
		refuse(c, err);
		return 1;
	}
	log_request(c);
	argv[argc++] = "dftrace-bpf";
	if (c->req.h.flags & PROTO_CHILD) { /* first: a -p the client gave comes after */
		snprintf(pid, sizeof(pid), "%d", (int)c->req.h.child);
		argv[argc++] = ENV_HELD_OPTION;
		argv[argc++] = pid;
	}
	for (int i = 0; i < c->req.argc; i++)
		argv[argc++] = c->req.argv[i];
	argv[argc] = NULL;
	if (become_clients(c) || start_watch(c)) {
		refuse(c, "cannot set up the client's trace");
		return 1;
	}
	status = tracer_run(argc, argv, &hooks);
	reply(c, PROTO_DONE, status);
	say("trace %u ended: exit %d", c->id, status);
	return status;
}

/* ---- the service ---- */

/* A user's starts in the current minute. */
struct starts {
	uint64_t minute;
	uint32_t n;
};

struct service {
	int listen_fd;
	struct policy policy;
	struct hmap by_uid;	/* uid -> traces running */
	struct hmap uid_of;	/* pid of a trace -> its uid */
	struct hmap starts;	/* uid -> struct starts, packed */
	unsigned int next_id;
};

/* Whether uid may start another trace this minute (counted if so). A
 * minute's count replaces the last: the map holds a word a user. */
static bool may_start(struct service *s, uid_t uid)
{
	uint64_t now = (uint64_t)time(NULL) / 60, v = 0;
	struct starts st = { 0 };

	if (hmap_get(&s->starts, uid, &v))
		st = (struct starts){ v >> 32, (uint32_t)v };
	if (st.minute != (now & 0xffffffff))
		st = (struct starts){ now & 0xffffffff, 0 };
	if (st.n >= s->policy.max_starts)
		return false;
	st.n++;
	hmap_put(&s->starts, uid, st.minute << 32 | st.n);
	return true;
}

static volatile sig_atomic_t stopping;

static void on_stop(int sig)
{
	(void)sig;
	stopping = 1;
}

static int listen_on(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char dir[sizeof(a.sun_path)], *slash;
	int fd;

	if (strlen(path) >= sizeof(a.sun_path)) {
		say("socket path '%s' too long", path);
		return -1;
	}
	strcpy(a.sun_path, path);
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = 0;
		if (mkdir(dir, 0755) && errno != EEXIST) {
			say("cannot make '%s': %s", dir, strerror(errno));
			return -1;
		}
	}
	unlink(path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) || chmod(path, 0666) ||
	    listen(fd, 64)) {
		say("cannot listen on '%s': %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* systemd's socket (dftrace-bpf-serve.socket), if it started us: fd 3. */
static int socket_from_systemd(void)
{
	const char *pid = getenv("LISTEN_PID"), *n = getenv("LISTEN_FDS");

	if (!pid || !n || atoi(pid) != getpid() || atoi(n) != 1)
		return -1;
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	fcntl(3, F_SETFD, FD_CLOEXEC);
	return 3;
}

static void reap(struct service *s)
{
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		uint64_t uid, n;

		if (!hmap_del(&s->uid_of, pid, &uid))
			continue;
		if (hmap_get(&s->by_uid, uid, &n) && n > 1)
			hmap_put(&s->by_uid, uid, n - 1);
		else
			hmap_del(&s->by_uid, uid, &n);
	}
}

static void accept_one(struct service *s, int conn)
{
	struct client c = { .conn = conn, .id = ++s->next_id, .policy = &s->policy,
			    .child_pidfd = -1 };
	char why[256];
	uint64_t running = 0;
	pid_t pid;

	if (peer_of(conn, &c.peer, why, sizeof(why))) {
		refuse(&c, why);
		return;
	}
	reap(s); /* a trace that has just ended is not counted */
	hmap_get(&s->by_uid, c.peer.uid, &running);
	if (running >= s->policy.max_traces) {
		snprintf(why, sizeof(why), "'%s' runs %llu traces already, the service's "
			 "limit", c.peer.name, (unsigned long long)running);
		refuse(&c, why);
		return;
	}
	if (!may_start(s, c.peer.uid)) {
		snprintf(why, sizeof(why), "'%s' started %u traces this minute, the service's "
			 "limit", c.peer.name, s->policy.max_starts);
		refuse(&c, why);
		return;
	}
	pid = fork();
	if (pid == 0) {
		close(s->listen_fd);
		signal(SIGTERM, SIG_DFL);
		signal(SIGCHLD, SIG_DFL);
		_exit(serve_client(&c) & 0xff);
	}
	if (pid < 0) {
		refuse(&c, "cannot start a tracer");
		return;
	}
	hmap_put(&s->uid_of, pid, c.peer.uid);
	hmap_put(&s->by_uid, c.peer.uid, running + 1);
}

int serve_main(int argc, char **argv)
{
	static const struct argp argp = { serve_options, parse_serve, "", serve_doc,
					  NULL, NULL, NULL };
	struct serve_opts o = { SERVICE_SOCKET, SERVICE_POLICY };
	struct sigaction sa = { .sa_handler = on_stop };
	struct service s = { 0 };
	char err[512];

	argp_parse(&argp, argc, argv, 0, NULL, &o);
	if (getenv("DFTRACE_BPF_TEST_CHECKED"))
		test_window_dir = strdup(getenv("DFTRACE_BPF_TEST_CHECKED"));
	log_fd = dup(2);
	if (policy_load(&s.policy, o.policy, err, sizeof(err))) {
		say("%s", err);
		return 1;
	}
	s.listen_fd = socket_from_systemd();
	if (s.listen_fd < 0)
		s.listen_fd = listen_on(o.socket);
	else
		o.socket = "systemd's socket";
	if (s.listen_fd < 0)
		return 1;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	say("listening on '%s'", o.socket);
	while (!stopping) {
		struct pollfd p = { s.listen_fd, POLLIN, 0 };
		int conn;

		reap(&s);
		if (poll(&p, 1, 500) <= 0)
			continue;
		conn = accept4(s.listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (conn < 0)
			continue;
		accept_one(&s, conn);
		close(conn);
	}
	say("stopped");
	if (s.listen_fd != 3)
		unlink(o.socket);
	close(s.listen_fd);
	hmap_free(&s.by_uid);
	hmap_free(&s.uid_of);
	hmap_free(&s.starts);
	return 0;
}
