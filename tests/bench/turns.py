#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Sides that take turns run by run, each side's tracer alive the whole
time, for the costs make bench's whole runs can't resolve.

  turns.py OUT EPOCHS WARM BLOCKS ROUNDS SIDE=COMMAND [SIDE=COMMAND...]

Each COMMAND (split as a shell would, not run by one) ends in
`ioloop turns FILE N`: it says "ready" once its loop can start (under a
tracer: once the tracer is attached), runs N calls for each "x" it is
sent and says how long they took, and hands its turns on to a new child
process for each "n".

An epoch: the driver starts the sides one after another, in an order
rotated each epoch; sends them turns, one side at a time, for WARM
seconds, unrecorded; then runs BLOCKS blocks, each in new processes (an
"n" to each side) of ROUNDS rounds, the order of the sides rotated each
round, and writes a line "SIDE NS BLOCK" a turn to OUT (spread.load's
form, BLOCK counted across epochs); then closes their stdin and waits
for them. EPOCHS epochs.

Why: on a machine whose speed drifts over seconds (a VM's host), two
whole runs a few seconds apart differ by more than a tracer's mode does.
Turns of a tenth of a second, in one long-lived tracer a side, pair the
sides within the drift. Each process runs under its own tracer, so each
also passes the other tracer's filter on each syscall (the same code in
every mode): alike on both sides. Left out: a tracer's first seconds,
not its steady state (--flight's window fills for its SECONDS, and this
VM's first writes to a new ring's pages cost a sending tracer more than
later ones). A process keeps an offset of its own for its life (where
its pages and its kernel stack lie) and the tracer started first runs
its programs first: so each block has new processes, each epoch the
other order, and a difference is judged by its median in each block,
across blocks (block_costs).

Exits non-zero, after ending every side it started, if a side fails."""
import shlex
import statistics
import subprocess
import sys
import time


def ready(side, proc):
    line = proc.stdout.readline()
    if line.strip() != "ready":
        raise RuntimeError("side '%s' did not start: %r" % (side, line))


def start(side, command):
    proc = subprocess.Popen(shlex.split(command), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, bufsize=1)
    ready(side, proc)
    return proc


def send(proc, what):
    proc.stdin.write(what)
    proc.stdin.flush()


def turn(side, proc):
    send(proc, "x")
    w = proc.stdout.readline().split()
    if len(w) != 2 or w[0] != "loop_ns":
        raise RuntimeError("side '%s' said %r, not its loop_ns" % (side, " ".join(w)))
    return int(w[1])


def end(procs, kill):
    rc = 0
    for side, proc in procs:
        if kill and proc.poll() is None:
            proc.terminate()
        try:
            proc.stdin.close()
        except OSError:
            pass
        if proc.wait() != 0 and not kill:
            print("turns: side '%s' exited %d" % (side, proc.returncode), file=sys.stderr)
            rc = 1
    return rc


def rounds_of(f, block, rounds, procs):
    # the order turns on from block to block: each side first as often
    for r in range(block * rounds, (block + 1) * rounds):
        for i in range(len(procs)):
            side, proc = procs[(i + r) % len(procs)]
            f.write("%s %d %d\n" % (side, turn(side, proc), block))


def epoch(f, e, warm, blocks, rounds, sides):
    procs = []
    try:
        for i in range(len(sides)):
            side, command = sides[(i + e) % len(sides)]
            procs.append((side, start(side, command)))
        procs.sort(key=lambda sp: [s for s, _ in sides].index(sp[0]))
        t0 = time.monotonic()
        while time.monotonic() - t0 < warm:
            for side, proc in procs:
                turn(side, proc)
        for b in range(blocks):
            for side, proc in procs:
                send(proc, "n")
                ready(side, proc)
            rounds_of(f, e * blocks + b, rounds, procs)
    except (RuntimeError, OSError, ValueError) as err:
        print("turns: %s" % err, file=sys.stderr)
        end(procs, True)
        return 1
    return end(procs, False)


def block_costs(runs, base, side, n):
    """the median of side's time over base's, in ns a call of n calls,
    round by round, a value for each block of a turns.py file"""
    by_block = {}
    for b, o in zip(runs.get(base, []), runs.get(side, [])):
        by_block.setdefault(b[1], []).append((o[0] - b[0]) / n)
    return [statistics.median(d) for _, d in sorted(by_block.items())]


def main(argv):
    if len(argv) < 6 or any("=" not in a for a in argv[5:]):
        sys.exit(__doc__)
    out, epochs, warm = argv[0], int(argv[1]), float(argv[2])
    blocks, rounds = int(argv[3]), int(argv[4])
    sides = [a.split("=", 1) for a in argv[5:]]
    with open(out, "a") as f:
        for e in range(epochs):
            if epoch(f, e, warm, blocks, rounds, sides):
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
