/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * dftrace-bpf serve: the root service through which users without root
 * trace their own work (issue 38), and the client side of it, which the
 * tracer becomes when it may not load BPF itself.
 *
 * The service forks a tracer for each client: its own BPF programs,
 * ring and limits, run with the client's identity for every file it
 * makes (as under sudo: SUDO_UID, SUDO_GID and SUDO_USER are set from
 * the kernel's word on the client, never from the client's), in the
 * client's working directory, writing to the client's stdout and stderr.
 * A client's command runs as the client's own child, started by the
 * client: the service traces it as -p, once it has proven it is that
 * child and the client's.
 */
#ifndef SERVICE_SERVE_H
#define SERVICE_SERVE_H

#define SERVICE_SOCKET "/run/dftrace-bpf/socket"
#define SERVICE_POLICY "/etc/dftrace-bpf/policy"
/* The socket a client connects to, if set. */
#define SERVICE_SOCKET_ENV "DFTRACE_BPF_SOCKET"

int serve_main(int argc, char **argv);
/* The tracer's command line, through the service: the exit status. */
int client_main(int argc, char **argv);

#endif
