#!/usr/bin/env python3
"""Two FIFOs joined to a TCP peer, for a workload whose ranks talk
through FIFOs (tests/workloads/collective.c) when they run on two hosts:

  fifolink.py listen PORT TO FROM
  fifolink.py connect HOST PORT TO FROM   (tries for a minute)

What the workload writes into the FIFO TO goes to the peer; what the
peer sends comes out of the FIFO FROM. Both are opened read-write, so
that neither open waits for the workload. Ends when the peer closes."""
import os
import socket
import sys
import threading
import time


def peer(argv):
    if argv[0] == "listen":
        srv = socket.create_server(("", int(argv[1])))
        conn, _ = srv.accept()
        srv.close()
        return conn, argv[2:]
    host, port = argv[1], int(argv[2])
    for _ in range(120):
        try:
            return socket.create_connection((host, port)), argv[3:]
        except OSError:
            time.sleep(0.5)
    sys.exit("fifolink: cannot connect to %s:%d" % (host, port))


def main():
    conn, (to, frm) = peer(sys.argv[1:])
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    out, inp = os.open(to, os.O_RDWR), os.open(frm, os.O_RDWR)

    def outgoing():
        while True:
            b = os.read(out, 4096)
            if not b:
                return
            conn.sendall(b)

    threading.Thread(target=outgoing, daemon=True).start()
    while True:
        b = conn.recv(4096)
        if not b:
            return
        os.write(inp, b)


if __name__ == "__main__":
    main()
