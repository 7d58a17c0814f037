"""make bench's verdicts (tests/bench/spread.py) on runs made up here:
what a row may say of a difference, given its spread. No timing."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "bench"))
import spread  # noqa: E402

UNTRACED = [100, 104, 110]  # spread (110 - 100) / 104: 9.6%


def verdict(other, **kw):
    return spread.judge(UNTRACED, other, **kw)[2]


def test_a_traced_side_faster_beyond_the_spread_is_a_bench_defect():
    assert verdict([80, 82, 84]).startswith("bench defect")
    # rates: more is faster
    assert verdict([130, 131, 132], higher=True).startswith("bench defect")


def test_a_difference_inside_the_spread_is_said_to_be():
    assert verdict([98, 100, 102]) == "inside the noise"
    assert verdict([104, 108, 112]) == "inside the noise"


def test_a_difference_beyond_the_spread_is_no_verdict_without_a_target():
    assert verdict([130, 131, 132]) == ""


def test_a_target_is_decided_only_where_the_spread_allows():
    # +1.9% against a 2% target, a 9.6% spread: no decision
    assert verdict([104, 106, 108], target=0.02) == "inside the noise: no decision"
    # +25%: over a 5% target by more than the spread
    assert verdict([128, 130, 131], target=0.05) == "over target"
    # the same runs against a 40% target
    assert verdict([128, 130, 131], target=0.40) == "within target"


def test_the_noise_is_the_wider_sides_spread():
    cost, noise, _ = spread.judge(UNTRACED, [100, 150, 200])
    assert abs(cost - (150 / 104 - 1)) < 1e-12
    assert abs(noise - 100 / 150) < 1e-12


def test_costs_near_zero_are_judged_in_their_own_unit():
    # an annotation untraced costs about 0 ns over a bare call
    cost, noise, v = spread.judge([-3, 0.2, 0.5], [2100, 2300, 2800], absolute=True)
    assert (cost, noise, v) == (2299.8, 700, "")
    assert spread.judge([-3, 0.2, 0.5], [-900, -800, -700], absolute=True)[2].startswith("bench defect")


def test_fewer_than_three_runs_a_side_give_no_verdict():
    assert spread.judge([100, 101], [50, 51])[2] == "too few runs to judge"


def test_the_command_line_prints_min_median_max_and_the_verdict(tmp_path):
    runs = tmp_path / "runs"
    runs.write_text("u 100\nt 128\nu 104\nt 130\nu 110\nt 131\n")
    script = os.path.join(os.path.dirname(__file__), "..", "bench", "spread.py")
    out = lambda *a: subprocess.run([sys.executable, script, *a], capture_output=True, text=True,
                                    check=True).stdout.strip()
    assert out("mmm", str(runs), "t") == "128 130 131"
    assert out("judge", str(runs), "u", "t", "--target", "5") == "+25.0% (spread 9.6%): over target"


def test_a_medians_interval_is_two_order_statistics_at_95_percent_or_more():
    lo, hi, conf = spread.median_interval([9, 1, 8, 2, 7, 3, 6, 4, 5])
    assert (lo, hi) == (2, 8) and abs(conf - (1 - 2 * 10 / 512)) < 1e-12
    # 6 rounds: the extremes, at 96.9%; 5 are too few
    assert spread.median_interval([1, 2, 3, 4, 5, 6])[:2] == (1, 6)
    assert spread.median_interval([1, 2, 3, 4, 5]) is None


def test_rounds_that_drift_alike_decide_what_the_sides_ranges_cannot():
    # the machine slows by a third over the rounds; the traced run of each
    # round is 1% over its untraced one
    base = [100, 110, 120, 130, 140, 150, 160, 125, 105]
    other = [b * 1.01 for b in base]
    assert spread.judge(base, other, target=0.02)[2] == "inside the noise: no decision"
    cost, ci, verdict = spread.paired(base, other, target=0.02)
    assert abs(cost - 0.01) < 1e-9 and verdict == "within target"
    assert spread.paired(base, [b * 1.10 for b in base], target=0.05)[2] == "over target"


def test_paired_rounds_say_no_decision_where_the_target_is_inside_the_interval():
    base = [100] * 9
    other = [97, 99, 100, 101, 102, 103, 104, 106, 110]
    assert spread.paired(base, other, target=0.02)[2] == "no decision: the target is inside the interval"
    assert spread.paired(base, [90, 91, 92, 93, 94, 95, 96, 97, 98])[2].startswith("bench defect")
    assert spread.paired(base[:5], other[:5])[2] == "too few rounds to judge"
