#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The spread of make bench's interleaved runs, and what a difference
between two sides may be taken to say.

A file of runs holds one line a run: "SIDE VALUE [VALUE...]".
  spread.py mmm FILE SIDE [COLUMN] [SCALE]   "min median max" of a side
  spread.py judge FILE BASE SIDE [--higher] [--target PCT]
        the side's cost over the base, as a share of the base's median
        (--higher: the values are rates, more is faster), and its verdict

The spread of a side is its max - min over its median; a difference is
judged against the wider of the two sides' spreads (the noise), with at least MIN_RUNS
runs a side:
  - traced faster than untraced by more than the noise: "bench defect"
    (a tracer adds work: such a figure says the runs were not alike);
  - with a target: "within target" or "over target" when the cost is
    further from the target than the noise, else "inside the noise: no
    decision"; without one, "inside the noise" when the cost is smaller
    than the noise.

Where the sides took their turns in rounds (one run of each a round, in
the file's order), paired() judges a side by its cost over the base in
each round instead: a machine that drifts between minutes slows both
runs of a round alike, which the sides' whole ranges can't tell apart.
Its interval is the median's, distribution-free: between two order
statistics of the rounds' costs, at 95% or more (9 rounds: the 2nd and
8th, 96.1%); it needs 6 rounds.

Bench code imports it too (PYTHONPATH=tests/bench)."""
import math
import statistics
import sys


# fewer runs a side than this make no spread worth the name
MIN_RUNS = 3


def load(path):
    runs = {}
    with open(path) as f:
        for line in f:
            w = line.split()
            if len(w) >= 2:
                runs.setdefault(w[0], []).append([float(x) for x in w[1:]])
    return runs


def column(runs, side, col=0):
    return [r[col] for r in runs.get(side, []) if len(r) > col]


def mmm(xs):
    return min(xs), statistics.median(xs), max(xs)


def spread(xs):
    """max - min over the median: how far apart alike runs came out"""
    med = statistics.median(xs)
    return (max(xs) - min(xs)) / med if med else float("inf")


def judge(base, other, higher=False, target=None, absolute=False):
    """(cost, noise, verdict): cost is the other side's extra over the
    base as a share (0.05 = 5% slower), noise the wider spread; with
    absolute, in the values' own unit (for costs near 0 untraced, such
    as an annotation's over a bare call): the difference of medians,
    against the wider max - min."""
    mb, mo = statistics.median(base), statistics.median(other)
    if absolute:
        cost = mb - mo if higher else mo - mb
        noise = max(max(base) - min(base), max(other) - min(other))
    else:
        cost = mb / mo - 1 if higher else mo / mb - 1
        noise = max(spread(base), spread(other))
    if min(len(base), len(other)) < MIN_RUNS:
        return cost, noise, "too few runs to judge"
    if cost < -noise:
        return cost, noise, "bench defect: traced faster than untraced beyond the spread"
    if target is None:
        return cost, noise, "inside the noise" if abs(cost) <= noise else ""
    if abs(cost - target) <= noise:
        return cost, noise, "inside the noise: no decision"
    return cost, noise, "within target" if cost < target else "over target"


def per_call(base, other, n):
    """other over base in ns a call of n calls: (the medians' difference,
    the fastest and the slowest run's over the base's median, the noise
    and the verdict as judge() gives them)"""
    mb = statistics.median(base)
    _, noise, verdict = judge(base, other)
    return ((statistics.median(other) - mb) / n, (min(other) - mb) / n,
            (max(other) - mb) / n, noise, verdict)


# the least confidence an interval for a median is given at
CONFIDENCE = 0.95


def median_interval(xs):
    """(lo, hi, confidence): the widest pair of order statistics of xs
    that holds their median with at least CONFIDENCE; None with too few"""
    xs, n = sorted(xs), len(xs)
    below = 0.0  # P(Binomial(n, 1/2) <= k - 1), as k grows
    best = None
    for k in range(1, n // 2 + 1):
        below += math.comb(n, k - 1) / 2 ** n
        if 1 - 2 * below < CONFIDENCE:
            break
        best = (xs[k - 1], xs[n - k], 1 - 2 * below)
    return best


def against_one_point(ci, what="rounds"):
    """a median's interval of costs in points (median_interval's)
    against a target of +1 point: the verdict a row prints"""
    if not ci:
        return "too few " + what
    if ci[0] <= 1 <= ci[1]:
        return "no decision: 1 point is inside the interval"
    return "within target" if ci[1] < 1 else "over target"


def interval_text(ci):
    """" [lo, hi] at NN%" for a median_interval, "" for none"""
    return " [%+.1f, %+.1f] at %.0f%%" % (ci[0], ci[1], ci[2] * 100) if ci else ""


def paired(base, other, higher=False, target=None):
    """(median cost, interval, verdict) of other over base round by round
    (run i of each is round i); the interval as median_interval's"""
    n = min(len(base), len(other))
    costs = [(b / o - 1 if higher else o / b - 1) for b, o in zip(base[:n], other[:n])]
    ci = median_interval(costs)
    if not costs or ci is None:
        return (statistics.median(costs) if costs else 0.0), ci, "too few rounds to judge"
    cost, (lo, hi) = statistics.median(costs), ci[:2]
    if hi < 0:
        return cost, ci, "bench defect: traced faster than untraced in the interval"
    if target is None:
        return cost, ci, ""
    if hi < target:
        return cost, ci, "within target"
    if lo > target:
        return cost, ci, "over target"
    return cost, ci, "no decision: the target is inside the interval"


def main(argv):
    if len(argv) >= 3 and argv[0] == "mmm":
        col = int(argv[3]) if len(argv) > 3 else 0
        scale = float(argv[4]) if len(argv) > 4 else 1
        xs = column(load(argv[1]), argv[2], col)
        if not xs:
            sys.exit("spread: no runs of '%s' in '%s'" % (argv[2], argv[1]))
        print(" ".join("%g" % (x * scale) for x in mmm(xs)))
        return 0
    if len(argv) >= 4 and argv[0] == "judge":
        runs = load(argv[1])
        target = float(argv[argv.index("--target") + 1]) / 100 if "--target" in argv else None
        base, other = column(runs, argv[2]), column(runs, argv[3])
        if not base or not other:
            sys.exit("spread: no runs of '%s' or '%s' in '%s'" % (argv[2], argv[3], argv[1]))
        cost, noise, verdict = judge(base, other, "--higher" in argv, target)
        print("%+.1f%% (spread %.1f%%)%s" % (cost * 100, noise * 100, ": " + verdict if verdict else ""))
        return 0
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
