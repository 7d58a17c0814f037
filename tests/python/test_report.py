"""dftrace-bpf report, opened in a real browser (Debian's chromium, driven
by selenium, headless): it loads with no console error, every number it
shows equals what `summary --json` says, and its charts have the marks
the data calls for.

The trace is the bundled annotated training job (usdt/examples/minitrain:
epochs, steps, phases, two data-loader workers, checkpoints).
"""
import collections
import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
from conftest import DFT  # noqa: E402

MINITRAIN = os.path.join(ROOT, "build", "examples", "minitrain")

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
except ImportError as e:  # scripts/install-deps installs it
    pytest.skip("python3-selenium is missing: %s" % e, allow_module_level=True)


def run(*args):
    """One of our commands, which must succeed: its stdout."""
    r = subprocess.run(list(args), capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    d = tmp_path_factory.mktemp("report")
    trace = str(d / "t.pfw.gz")
    r = subprocess.run([DFT, "-q", "-o", trace, "--", MINITRAIN, str(d / "data"), "3", "8"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    page = str(d / "report.html")
    r = subprocess.run([DFT, "report", "-q", "-o", page, trace], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr

    def summary(*by):
        args = [DFT, "summary", "-q", "--json", "--top", "0"]
        for b in by:
            args += ["--by", b]
        r = subprocess.run(args + [trace], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)

    return page, summary


@pytest.fixture(scope="module")
def browser(made):
    o = webdriver.ChromeOptions()
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1200,900"):
        o.add_argument(a)
    o.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    d = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=o)
    d.get("file://" + made[0])
    yield d
    d.quit()


def data(el, attr="data-v"):
    return int(el.get_attribute(attr))


def test_loads_without_console_errors(browser):
    assert browser.title == "dftrace-bpf report"
    bad = [l for l in browser.get_log("browser") if l["level"] in ("SEVERE", "WARNING")]
    assert bad == []
    # self-contained: nothing to fetch
    assert browser.execute_script(
        "return performance.getEntriesByType('resource').length") == 0
    src = open(browser.current_url[len("file://"):]).read()
    assert "<script" not in src and "http://" not in src.replace(
        'xmlns="http://www.w3.org/2000/svg"', "")


def test_headline_equals_summary(browser, made):
    h = made[1]("op")["headline"]
    cards = browser.find_elements(By.CSS_SELECTOR, ".card b")
    assert len(cards) == 10
    for c in cards:
        assert data(c) == h[c.get_attribute("data-key")], c.get_attribute("data-key")


COLS = ["calls", "total_ns", "self_ns", "min_ns", "p50_ns", "p99_ns", "max_ns", "bytes"]


@pytest.mark.parametrize("by", ["op", "phase", "process"])
def test_tables_equal_summary(browser, made, by):
    rows = made[1](by)["groupings"][0]["rows"]
    table = browser.find_element(By.CSS_SELECTOR, "table[data-by='%s']" % by)
    trs = table.find_elements(By.TAG_NAME, "tr")[1:]
    assert len(trs) == len(rows)
    for tr, want in zip(trs, rows):  # both by total, then key
        tds = tr.find_elements(By.TAG_NAME, "td")
        assert tds[0].text == want[by]
        assert [data(td) for td in tds[1:]] == [want[c] for c in COLS], want[by]


def test_bandwidth_has_one_line_per_process_that_moved_bytes(browser, made):
    procs = [r for r in made[1]("process")["groupings"][0]["rows"] if r["bytes"] > 0]
    lines = browser.find_elements(By.CSS_SELECTOR, "svg#bandwidth polyline.series")
    assert sorted(l.get_attribute("data-name") for l in lines) == \
        sorted(r["process"] for r in procs)
    assert len(procs) == 3  # the job and its two workers


def test_phase_bars_equal_each_phases_own_time(browser, made):
    for what in ("epoch", "step"):
        rows = made[1](what + ",phase")["groupings"][0]["rows"]
        want = collections.Counter()
        for r in rows:
            if r[what] != "-" and r["region_self_ns"] > 0:
                want[r[what]] += r["region_self_ns"]
        bars = browser.find_elements(By.CSS_SELECTOR, "svg#phases-by-%s rect.bar" % what)
        got = collections.Counter()
        for b in bars:
            got[b.get_attribute("data-bar")] += float(b.get_attribute("data-value"))
        assert set(got) == set(want), what
        for k in want:
            assert got[k] == pytest.approx(want[k], abs=1), (what, k)
    # minitrain DIR 3 8: three epochs of eight steps, numbered 0 to 7 in each
    assert sorted(set(b.get_attribute("data-bar") for b in bars)) == [str(s) for s in range(8)]


def test_top_files_and_latency_histograms(browser, made):
    files = [r for r in made[1]("file")["groupings"][0]["rows"] if r["file"] != "-"]
    by_bytes = sorted((r for r in files if r["bytes"]), key=lambda r: (-r["bytes"], r["file"]))
    bars = browser.find_elements(By.CSS_SELECTOR, "svg#files-by-bytes rect.bar")
    assert [(b.get_attribute("data-name"), int(float(b.get_attribute("data-value"))))
            for b in bars] == [(r["file"], r["bytes"]) for r in by_bytes[:10]]
    ops = {r["op"]: r for r in made[1]("op")["groupings"][0]["rows"]}
    charts = browser.find_elements(By.CSS_SELECTOR, "svg.chart[id^='latency-']")
    assert charts
    for c in charts:
        title = c.find_element(By.XPATH, "./preceding-sibling::figcaption").text
        op = title.split("Latency of ")[1].split(" (")[0]
        counts = [float(b.get_attribute("data-value"))
                  for b in c.find_elements(By.CSS_SELECTOR, "rect.bar")]
        assert sum(counts) == ops[op]["calls"], op


def test_findings_section_equals_summary_findings(tmp_path):
    """The planted problems of tests/workloads/findings.c: the report's
    Findings section, first on the page, lists in the browser what
    summary --findings --json finds, in its order."""
    trace, page = str(tmp_path / "t.pfw.gz"), str(tmp_path / "report.html")
    plants = os.path.join(ROOT, "build", "workloads", "findings")
    run(plants, str(tmp_path), "prepare")
    run(DFT, "-q", "-o", trace, "--", plants, str(tmp_path), "small", "random", "meta", "ckpt",
        "clean")
    run(DFT, "report", "-q", "-o", page, trace)
    want = [(f["rule"], list(f["where"].values())[0], f["ns"])
            for f in json.loads(run(DFT, "summary", "-q", "--findings", "--json",
                                    trace))["findings"]]
    # which plants reach the 5% of wall a finding needs depends on how
    # long each took (a loaded machine stretches the metadata calls);
    # tests/findings.bats says each rule exactly, this the page's order
    assert want and {w[0] for w in want} <= {
        "small_io", "random_access", "metadata_heavy", "checkpoint_blocking"}, want
    o = webdriver.ChromeOptions()
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu"):
        o.add_argument(a)
    d = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=o)
    try:
        d.get("file://" + page)
        items = d.find_elements(By.CSS_SELECTOR, "ol.findings li")
        got = [(i.get_attribute("data-rule"),
                i.get_attribute("data-file") or i.get_attribute("data-phase") or
                i.get_attribute("data-process"), data(i, "data-ns")) for i in items]
        texts = [i.text for i in items]
        first_h2 = d.find_elements(By.TAG_NAME, "h2")[0].text
    finally:
        d.quit()
    assert got == want
    assert all("try: " in t and "% of wall" in t for t in texts), texts
    assert first_h2 == "Findings"
