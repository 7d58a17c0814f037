#!/usr/bin/env bats
# dftrace-bpf merge: any trace, or several, as one strict Chrome Trace Event
# file. Checked against the workloads' ground truth and the fixtures'
# facts (tests/lib/fixtures.py); torch.profiler's real output is merged
# in tests/python/test_merge_torch.py.

load lib/common
load lib/ncclranks

CHROME="$ROOT/tests/lib/chrome.py"
FIXTURES="$ROOT/tests/lib/fixtures.py"

cpy() { "$PY" "$CHROME" "$@"; }
fixture() { "$PY" "$FIXTURES" "$@"; }

# merged ARG...: merge into $T/view.json (unless -o is given); must succeed
merged() {
	run "$DFT" merge -q "$@"
	if [ "$status" != 0 ]; then
		echo "# merge $* exited $status: $output"
		return 1
	fi
}

strict() {
	run cpy validate "$1"
	echo "$output"
	[ "$status" = 0 ]
}

# jq-like: one field of the JSON in $output
jfield() { "$PY" -c 'import json,sys; d=json.loads(sys.argv[1]); print(eval(sys.argv[2]))' "$1" "$2"; }

@test "merge: one trace becomes viewer-ready: strict JSON, paths on the events, every I/O call of the workload" {
	traced -- "$WL/io" basic "$D"
	merged -o "$T/view.json" "$TRACE"
	strict "$T/view.json"
	run cpy check-io "$T/view.json" "$TRUTH" --under "$D"
	echo "$output"
	[ "$status" = 0 ]
	# no hash tables left for a viewer to join: FH, SH, HH are used up
	run cpy events "$T/view.json" --name FH
	[ -z "$output" ]
}

@test "merge: timestamps keep the ns: a 0-us call no longer starts in its neighbour's us" {
	traced -- "$WL/io" basic "$D"
	merged -o "$T/view.json" "$TRACE"
	# every event at the time the tracer measured: args.ns10d is D…DSS, the
	# duration in 10 ns and the 10-ns steps after ts; and both ends keep
	# the µs that ts and dur say
	run "$PY" -c '
import json, sys
sys.path.insert(0, "'"$ROOT"'/tests/lib")
import chrome
from trace import Trace
doc, t = chrome.load(sys.argv[1]), Trace.load(sys.argv[2])
base = doc["baseTimeNanoseconds"]
def span(e):
    d, s = divmod(e["args"]["ns10d"], 100)
    assert (e["ts"] * 1000 + s * 10 + d * 10) // 1000 == e["ts"] + e["dur"], e
    return e["ts"] * 1000 + s * 10, d * 10
want = {e["id"]: span(e) for e in t.xevents if e.get("cat") != "dftracer"}
got = {e["args"]["event_id"]: (round(e["ts"] * 1000) + base, round(e["dur"] * 1000))
       for e in doc["traceEvents"] if e["ph"] == "X"}
assert got == want, [(k, got.get(k), v) for k, v in want.items() if got.get(k) != v][:5]
frac = sum(1 for e in doc["traceEvents"] if e["ph"] == "X" and e["ts"] != int(e["ts"]))
assert frac > len(got) // 2, (frac, len(got))
print(len(got))
' "$T/view.json" "$TRACE"
	echo "$output"
	[ "$status" = 0 ]
}

@test "merge: a 0-us torch op gets 1 ns, so speedscope never ends it before its parent begins" {
	# torch 1.13 writes 0-us children in their parent's first us; speedscope
	# sorts an end before a begin at the same time. Kineto's own clock, so
	# the torch trace merges alone.
	cat >"$T/torch.json" <<-'EOF'
	{"traceEvents":[
	{"name":"aten::zeros","ph":"X","pid":7,"tid":7,"ts":10,"dur":3},
	{"name":"aten::empty","ph":"X","pid":7,"tid":7,"ts":10,"dur":0},
	{"name":"aten::zero_","ph":"X","pid":7,"tid":7,"ts":11,"dur":0},
	{"name":"aten::fill_","ph":"X","pid":7,"tid":7,"ts":13,"dur":0}],
	"baseTimeNanoseconds":1700000000000000000}
	EOF
	merged -o "$T/view.json" "$T/torch.json"
	strict "$T/view.json"
	run "$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(" ".join("%s:%s+%s" % (e["name"], e["ts"], e["dur"]) for e in d["traceEvents"] if e["ph"] == "X"))' "$T/view.json"
	# one at its parent's end follows it: 1 ns too
	expect_eq "ops" "$output" "aten::zeros:0+3 aten::empty:0+0.001 aten::zero_:1+0.001 aten::fill_:3+0.001"
}

@test "merge: a number last in a nested object or array of args is kept" {
	cat >"$T/torch.json" <<-'EOF'
	{"traceEvents":[
	{"name":"a","ph":"X","pid":7,"tid":7,"ts":1,"dur":1,"args":{"x":[1,2],"y":{"z":3,"w":{"v":0}}}}],
	"baseTimeNanoseconds":1700000000000000000}
	EOF
	merged -o "$T/view.json" "$T/torch.json"
	strict "$T/view.json"
	run "$PY" -c '
import json, sys
print(json.dumps([e["args"] for e in json.load(open(sys.argv[1]))["traceEvents"] if e["ph"] == "X"]))' "$T/view.json"
	expect_eq "args" "$output" '[{"x": [1, 2], "y": {"z": 3, "w": {"v": 0}}}]'
}

@test "merge: CM marks become instant events at their time" {
	mkdir -p "$D/mt"
	traced -- "$ROOT/build/examples/minitrain" "$D/mt" 2 1
	merged -o "$T/view.json" "$TRACE"
	strict "$T/view.json"
	want=$(zcat "$TRACE" | grep -c '"name":"CM"')
	[ "$want" -gt 0 ]
	run "$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
marks = [e for e in d["traceEvents"] if e["ph"] == "i" and e.get("args", {}).get("value")]
for e in marks:
    assert round(e["ts"] * 1000) + d["baseTimeNanoseconds"] == int(e["args"]["value"]) * 1000, e
    assert e["name"] == e["args"]["name"]
print(len(marks))
' "$T/view.json"
	expect_eq "instant events" "$output" "$want"
}

@test "merge: a -D directory is every process of the run, gzipped when OUT ends in .gz" {
	dft -q -D "$T/out" -- "$WL/proc" tree "$D"
	[ "$DFT_STATUS" = 0 ]
	n=$(ls "$T/out" | wc -l)
	[ "$n" -ge 2 ]
	merged -o "$T/view.json.gz" "$T/out"
	[ "$(head -c2 "$T/view.json.gz" | od -An -tx1 | tr -d ' ')" = 1f8b ]
	strict "$T/view.json.gz"
	pids=$(awk -F'\t' '$1=="exit" {print $2}' "$TRUTH" | sort -u)
	[ -n "$pids" ]
	for p in $pids; do
		cpy names "$T/view.json.gz" | grep -q "^process_name $p 0 .* \[$p\] @$(hostname)$" ||
			{ echo "# no process_name for $p"; cpy names "$T/view.json.gz"; return 1; }
	done
}

@test "merge: DFTracer's own traces, with or without brackets and commas, v1 or v2 hashes" {
	for shape in bracket commas bare; do
		fixture dftracer "$T/$shape.pfw" --shape "$shape" >"$T/$shape.facts"
	done
	fixture dftracer "$T/v1.pfw" --v1 >"$T/v1.facts"
	for f in bracket commas bare v1; do
		merged -o "$T/$f.json" "$T/$f.pfw"
		strict "$T/$f.json"
		run "$PY" -c '
import json, sys
d, facts = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
ev = d["traceEvents"]
x = [e for e in ev if e["ph"] == "X"]
assert len(x) == facts["x"], len(x)
reads = {}
for e in x:
    if e["name"] == "read":
        reads[e["args"]["fname"]] = reads.get(e["args"]["fname"], 0) + e["args"]["ret"]
assert reads == facts["reads"], reads
fwd = next(e for e in x if e["name"] == "forward")
assert round(fwd["ts"] * 1000) + d["baseTimeNanoseconds"] == facts["forward_us"] * 1000
cm = next(e for e in ev if e["name"] == "epoch.start")
assert cm["ph"] == "i" and round(cm["ts"] * 1000) + d["baseTimeNanoseconds"] == facts["cm_us"] * 1000
names = [e["args"]["name"] for e in ev if e["name"] == "process_name"]
assert names == ["rank 3 \u00b7 train.py [4242] @node07"], names
' "$T/$f.json" "$T/$f.facts"
		echo "$f: $output"
		[ "$status" = 0 ]
	done
}

@test "merge: ranks and hosts never collide: equal pids of two hosts are two processes" {
	fixture dftracer "$T/a.pfw" --host node01 --rank 0 --pid 4242 >/dev/null
	fixture dftracer "$T/b.pfw" --host node02 --rank 1 --pid 4242 >/dev/null
	fixture dftracer "$T/c.pfw" --host node01 --rank 2 --pid 5151 >/dev/null
	merged -o "$T/view.json" "$T/a.pfw" "$T/b.pfw" "$T/c.pfw"
	strict "$T/view.json"
	run cpy names "$T/view.json"
	echo "$output"
	[ "$(grep -c '^process_name' <<<"$output")" = 3 ]
	grep -q "^process_name 4242 0 rank 0 · train.py \[4242\] @node01$" <<<"$output"
	grep -q "^process_name 5151 0 rank 2 · train.py \[5151\] @node01$" <<<"$output"
	# the second host's 4242 got an id of its own, named after the original
	other=$(sed -n 's/^process_name \([0-9]*\) 0 rank 1 · train.py \[4242\] @node02$/\1/p' <<<"$output")
	[ -n "$other" ] && [ "$other" != 4242 ]
	# each keeps its own events; threads are remapped with their process
	for p in 4242 5151 "$other"; do
		n=$(cpy events "$T/view.json" --pid "$p" --name read | wc -l)
		expect_eq "reads of pid $p" "$n" 2
	done
	tids=$(cpy events "$T/view.json" --name read | "$PY" -c '
import json, sys
print(" ".join(sorted({"%d:%d" % (e["pid"], e["tid"]) for e in map(json.loads, sys.stdin)})))')
	echo "$tids"
	[ "$(wc -w <<<"$tids")" = 3 ]
	grep -q "4242:4243" <<<"$tids" && grep -q "5151:5152" <<<"$tids"
	other_tid=$(tr ' ' '\n' <<<"$tids" | sed -n "s/^$other://p")
	[ -n "$other_tid" ] && [ "$other_tid" != 4243 ] && [ "$other_tid" != "$other" ]
}

@test "merge: Kineto traces land on the trace's clock, by baseTimeNanoseconds or absolute times; the rank comes from distributedInfo or the file name" {
	traced -- "$WL/io" basic "$D"
	mv "$TRACE" "$T/trace-1-of-2.pfw.gz"
	pid=$(awk -F'\t' '$1=="io" {print $3; exit}' "$TRUTH")
	start_us=$(zcat "$T/trace-1-of-2.pfw.gz" | sed -n 's/.*"name":"open".*"ts":\([0-9]*\),.*/\1/p' | head -1)
	[ -n "$start_us" ]
	for kind in base absolute; do
		opt=(); [ "$kind" = base ] && opt=(--base)
		fixture kineto "$T/k-$kind.json" --pid "$pid" --rank 1 --start-us "$start_us" "${opt[@]}" >"$T/k.facts"
		# tensorboard_trace_handler's name, gzipped: the rank is distributedInfo's
		gzip -c "$T/k-$kind.json" >"$T/vm_$pid.$kind.pt.trace.json.gz"
		merged -o "$T/view-$kind.json" "$T/trace-1-of-2.pfw.gz" "$T/vm_$pid.$kind.pt.trace.json.gz"
		strict "$T/view-$kind.json"
		run "$PY" -c '
import json, sys
d, facts = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
mm = [e for e in d["traceEvents"] if e["name"] == "aten::mm"]
assert len(mm) == 1, mm
assert round(mm[0]["ts"] * 1000) + d["baseTimeNanoseconds"] == facts["mm_ns"], (mm, facts)
assert mm[0]["pid"] == int(sys.argv[3])
names = [e["args"]["name"] for e in d["traceEvents"] if e["name"] == "process_name"]
assert "rank 1 \u00b7 io [%s] @%s" % (sys.argv[3], sys.argv[4]) in names, names
' "$T/view-$kind.json" "$T/k.facts" "$pid" "$(hostname)"
		echo "$kind: $output"
		[ "$status" = 0 ]
	done
}

@test "merge: a tracer started as one rank says so in its start event" {
	RANK=5 WORLD_SIZE=8 traced -- "$WL/io" basic "$D"
	merged -o "$T/view.json" "$TRACE"
	pid=$(awk -F'\t' '$1=="io" {print $3; exit}' "$TRUTH")
	cpy names "$T/view.json" | grep -q "^process_name $pid 0 rank 5 · io \[$pid\] @"
}

# bad INPUT-SETUP WANT: the merge fails with one line naming the file
# (and line), and a file already at the output path is left as it was.
bad_input() {
	echo keep >"$T/view.json"
	run "$DFT" merge -q -o "$T/view.json" "$@"
	[ "$status" != 0 ]
	printf '%s\n' "$output" >"$T/err"
	cat "$T/err"
	[ "$(wc -l <"$T/err")" = 1 ]
	grep -qE '^dftrace-bpf merge: [^A-Z]' "$T/err"
	[ "$(cat "$T/view.json")" = keep ]
}

@test "merge: 5,016 inputs at an fd limit of 1024, 16 of them 4.7 MB, in at most 64 MB a core: every event, the same on 1 and 2 cores" {
	mkdir "$T/many"
	fixture many "$T/many" 5000 --big 16 >"$T/facts"
	for j in 1 2; do
		# a hard limit too: what is not raised stays
		(ulimit -n 1024 && /usr/bin/time -f %M -o "$T/rss$j" "$DFT" merge -q -j "$j" \
			-o "$T/all$j.json" "$T/many") 2>"$T/err" || { cat "$T/err"; return 1; }
		rss=$(tail -1 "$T/rss$j")
		echo "# max RSS on $j cores: ${rss} KiB"
		[ "$rss" -le $((j * 65536)) ]
	done
	cmp "$T/all1.json" "$T/all2.json"
	"$PY" -c '
import collections, json, sys
d, want = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
x = collections.Counter(e["pid"] for e in d["traceEvents"] if e["ph"] == "X")
assert (sum(x.values()), len(x)) == (want["events"], want["processes"]), (sum(x.values()), len(x))
assert sorted(set(x.values())) == [4, 24000], sorted(set(x.values()))
' "$T/all1.json" "$T/facts"
}

@test "merge: strings with a NUL, control bytes, invalid UTF-8, invalid escapes or a lone surrogate come out strict JSON" {
	fixture hostile-strings "$T/h.pfw" "$T/h.json" >"$T/facts"
	merged -o "$T/view.json" "$T/h.pfw" "$T/h.json"
	# strict: UTF-8, no raw control byte, no lone surrogate, every number JSON's
	"$PY" -c '
import json, sys
def no_lone(s):
    s.encode("utf-8")  # a lone surrogate does not encode
    return s
def walk(v):
    if isinstance(v, dict):
        return {no_lone(k): walk(x) for k, x in v.items()}
    if isinstance(v, list):
        return [walk(x) for x in v]
    return no_lone(v) if isinstance(v, str) else v
def number(s):
    raise ValueError("not a JSON number: " + s)
text = open(sys.argv[1], "rb").read().decode("utf-8")
d = walk(json.loads(text, strict=True, parse_constant=number))
x = [e for e in d["traceEvents"] if e["ph"] == "X"]
assert len(x) == json.load(open(sys.argv[2]))["x"], len(x)
# what was valid stays as it was
assert {"readok\u00e9\n", "aten::ok\u00e9\n"} <= {e["name"] for e in x}, x
' "$T/view.json" "$T/facts"
	strict "$T/view.json"
}

@test "merge: torch traces a trace recorded: a FIFO, a directory, a missing or cut one are left out with one warning each; --no-discover takes none" {
	fixture kineto "$T/good.json" --pid 4243 --start-us 1753123070000020 >/dev/null
	head -c 100 "$T/good.json" >"$T/cut.json"
	mkfifo "$T/fifo.json"
	mkdir "$T/dir.json"
	# the traced program chose the names: one clears the screen
	esc="$T/"$'\e[2J\e]0;pwned\a'.json
	fixture recorded-torch "$T/t.pfw" "$T/fifo.json" "$T/dir.json" "$T/missing.json" \
		"$T/cut.json" "$T/good.json" "$esc" >/dev/null
	# never waits on the FIFO's writer (a generous bound, not a timing)
	run timeout 60 "$DFT" merge -o "$T/view.json" "$T/t.pfw"
	echo "$output"
	[ "$status" = 0 ]
	expect_eq "warnings" "$(grep -c '^dftrace-bpf merge: warning: left out a torch trace a trace recorded: ' <<<"$output")" 5
	grep -qF "cannot open '$T/\x1b[2J\x1b]0;pwned\x07.json': No such file or directory" <<<"$output"
	! grep -q $'\e' <<<"$output"
	grep -qF "cannot open '$T/fifo.json': not a regular file" <<<"$output"
	grep -qF "cannot open '$T/dir.json': not a regular file" <<<"$output"
	grep -qF "cannot open '$T/missing.json': No such file or directory" <<<"$output"
	grep -qF "'$T/cut.json'" <<<"$output"
	grep -qF "with '$T/good.json', the torch trace a trace recorded (--no-discover: without)" <<<"$output"
	strict "$T/view.json"
	xnames() { "$PY" -c 'import json, sys
print(" ".join(sorted(e["name"] for e in json.load(open(sys.argv[1]))["traceEvents"]
	if e["ph"] == "X" and e["name"] != "torch_trace")))' "$1"; }
	expect_eq "events" "$(xnames "$T/view.json")" "aten::mm read"
	merged --no-discover -o "$T/own.json" "$T/t.pfw"
	[ -z "$output" ]
	expect_eq "events, --no-discover" "$(xnames "$T/own.json")" "read"
}

@test "merge: a recorded torch trace that is gone: where it was, which trace recorded it, how to give it; given elsewhere under its name, it is used" {
	fixture kineto "$T/k.json" --pid 4243 --start-us 1753123070000020 >/dev/null
	fixture recorded-torch "$T/r.pfw" "$T/gone/torch.json" >/dev/null
	run "$DFT" merge -o "$T/view.json" "$T/r.pfw"
	echo "$output"
	[ "$status" = 0 ]
	expect_eq "lines" "$output" "dftrace-bpf merge: warning: left out a torch trace a trace recorded: cannot open '$T/gone/torch.json': No such file or directory
dftrace-bpf merge: hint: '$T/r.pfw' recorded it there; if it is elsewhere now, give it as an input: dftrace-bpf merge -o $T/view.json $T/r.pfw DIR/torch.json"
	mkdir "$T/moved"
	mv "$T/k.json" "$T/moved/torch.json"
	merged -o "$T/view.json" "$T/r.pfw" "$T/moved/torch.json"
	[ -z "$output" ]
	grep -q '"aten::mm"' "$T/view.json"
}

@test "merge: a directory given with a trailing slash names its files with one slash" {
	mkdir "$T/traces"
	fixture dftracer "$T/traces/a.pfw" --pid 11 >/dev/null
	merged -o "$T/traces/all.pfw.gz" "$T/traces/"
	run "$DFT" merge -o "$T/again.json" "$T/traces//"
	echo "$output"
	[ "$status" = 0 ]
	expect_eq "note" "$output" "dftrace-bpf merge: note: skipping '$T/traces/all.pfw.gz', an earlier merge's output"
}

@test "merge, report, summary: an output that is an input, or an input named twice, is one line; an earlier merge in a directory is skipped" {
	mkdir "$T/traces"
	fixture dftracer "$T/traces/a.pfw" --pid 11 >/dev/null
	fixture dftracer "$T/traces/b.pfw" --pid 12 >/dev/null
	gzip -c "$T/traces/a.pfw" >"$T/x.pfw.gz"
	cp "$T/traces/b.pfw" "$T/t.pfw"
	ln -s "$T/t.pfw" "$T/link.pfw"
	sums() { md5sum "$T/x.pfw.gz" "$T/t.pfw" "$T/traces/a.pfw" "$T/traces/b.pfw"; }
	before=$(sums)
	# the output is an input: by its name, through a link, in a directory
	run "$DFT" merge -q -o "$T/x.pfw.gz" "$T/x.pfw.gz"
	[ "$status" = 1 ]
	expect_eq "merge" "$output" "dftrace-bpf merge: the output '$T/x.pfw.gz' is the input '$T/x.pfw.gz': give another -o"
	run "$DFT" report -q -o "$T/link.pfw" "$T/t.pfw"
	[ "$status" = 1 ]
	expect_eq "report" "$output" "dftrace-bpf report: the output '$T/link.pfw' is the input '$T/t.pfw': give another -o"
	run "$DFT" merge -q -o "$T/traces/b.pfw" "$T/traces"
	[ "$status" = 1 ]
	[[ "$output" == "dftrace-bpf merge: the output '$T/traces/b.pfw' is the input '$T/traces/"*"b.pfw': give another -o" ]]
	# an input twice: the same name, a link, a file and its directory
	for cmd in "merge -o $T/out" "report -o $T/out" summary; do
		run "$DFT" $cmd -q "$T/t.pfw" "$T/link.pfw"
		[ "$status" = 1 ]
		cmd=${cmd%% *}
		expect_eq "$cmd" "$output" "dftrace-bpf $cmd: '$T/t.pfw' and '$T/link.pfw' are the same file: give each input once"
	done
	run "$DFT" summary -q "$T/traces/a.pfw" "$T/traces"
	[ "$status" = 1 ]
	[ "${#lines[@]}" = 1 ]
	[[ "$output" == *"are the same file: give each input once" ]]
	expect_eq "inputs untouched" "$(sums)" "$before"
	# a recorded torch trace that is the output is left out
	fixture kineto "$T/torch.json" --pid 4243 --start-us 1753123070000020 >/dev/null
	fixture recorded-torch "$T/r.pfw" "$T/torch.json" >/dev/null
	run "$DFT" merge -o "$T/torch.json" "$T/r.pfw"
	[ "$status" = 0 ]
	expect_eq "recorded output" "$output" "dftrace-bpf merge: warning: left out a torch trace a trace recorded: '$T/torch.json' is the output"
	summary_calls() { "$DFT" summary -q --json "$T/traces" | "$PY" -c 'import json, sys; print(sum(r["calls"] for r in json.load(sys.stdin)["groupings"][0]["rows"]))'; }
	calls=$(summary_calls)
	# a directory's own merge, run again: the same events each time
	events() { "$PY" -c 'import gzip, json, sys; print(len(json.load(gzip.open(sys.argv[1]))["traceEvents"]))' "$1"; }
	for i in 1 2 3; do
		run "$DFT" merge -q -o "$T/traces/all.pfw.gz" "$T/traces"
		[ "$status" = 0 ]
		[ "$i" = 1 ] && first=$(events "$T/traces/all.pfw.gz") && continue
		expect_eq "events, run $i" "$(events "$T/traces/all.pfw.gz")" "$first"
		[[ "$output" == "dftrace-bpf merge: note: skipping '$T/traces/"*"all.pfw.gz', an earlier merge's output" ]]
	done
	# and summary does not count it
	expect_eq "summary's calls" "$(summary_calls 2>/dev/null)" "$calls"
}

@test "merge: bad input is one line naming the file and line, and nothing is written" {
	traced -- "$WL/io" basic "$D"
	head -c 2000 "$TRACE" >"$T/cut.pfw.gz"
	bad_input --strict "$T/cut.pfw.gz"
	grep -qE "^dftrace-bpf merge: '$T/cut.pfw.gz':[0-9]+: gzip stream cut short" "$T/err"

	zcat "$TRACE" | sed '7s/.*/{"name":"open","ph":"X",/' >"$T/badline.pfw"
	bad_input "$T/badline.pfw"
	grep -qE "^dftrace-bpf merge: '$T/badline.pfw':7: " "$T/err"

	head -c 4096 "$WL/io" >"$T/binary.pfw"
	bad_input "$T/binary.pfw"
	grep -q "^dftrace-bpf merge: '$T/binary.pfw':1: neither a .pfw trace nor a Chrome trace" "$T/err"

	echo '{"displayTimeUnit":"ns"}' >"$T/object.json"
	bad_input "$T/object.json"
	grep -q "^dftrace-bpf merge: '$T/object.json':1: " "$T/err"

	bad_input "$T/missing.pfw"
	grep -q "^dftrace-bpf merge: cannot open '$T/missing.pfw': No such file" "$T/err"
}

@test "merge: torch's relative times and a trace without anchors cannot be aligned: one line naming both" {
	traced -- "$WL/io" basic "$D"
	# torch without Kineto: a bare list, pid "CPU functions", µs from its start
	echo '[{"name":"aten::mm","ph":"X","ts":100,"dur":5,"tid":1,"pid":"CPU functions","args":{}}]' \
		>"$T/torch.json"
	bad_input "$T/torch.json" "$TRACE"
	grep -q "cannot align '$T/torch.json' with '$TRACE'" "$T/err"
}

@test "merge: usage errors" {
	run "$DFT" merge
	[ "$status" = 64 ]
	run "$DFT" merge -o "$T/x.json"
	[ "$status" = 64 ]
	[[ "$output" == *"nothing to merge"* ]]
	run "$DFT" merge "$TRACE"
	[ "$status" = 64 ]
	[[ "$output" == *"no output"* ]]
}

coll() { "$PY" "$ROOT/tests/lib/collectives.py" "$@"; }

# aligned VIEW HOST PAIRS TRUTH TRUTH [GAP]: HOST, moved 37 ms ahead, was
# put back within the ranks' spread (spread, from their truths) + 100 us,
# by PAIRS pairs, inside the bound it said; unless GAP is "no-gap", the
# merged calls' ends as close (where the truth is taken at the probes:
# Python's own clock reads, around its calls, are not)
aligned() {
	local pairs corr low high gap
	spread=$(coll spread "$4" "$5")
	read -r pairs corr low high < <(coll clock "$1" "$2")
	echo "# spread $spread ns; correction $corr ns [$low, $high], $pairs pairs"
	expect_eq "pairs" "$pairs" "$3"
	(( corr + 37000000 <= spread + 100000 && -37000000 - corr <= spread + 100000 ))
	(( low <= -37000000 && -37000000 <= high ))
	[ "${6:-}" != no-gap ] || return 0
	gap=$(coll gap "$1")
	echo "# merged ends: $gap ns apart at most"
	(( gap <= spread + 100000 ))
}

# ranked HOST RANK: trace `collective RANK 40` as host HOST (its own UTS
# namespace) into $T/HOST.pfw.gz, its truth into $T/HOST.truth
ranked() {
	local to=$T/f01 from=$T/f10
	[ "$2" = 0 ] || { to=$T/f10 from=$T/f01; }
	unshare -u sh -c 'hostname "$1" && exec "$2" -q -o "$3" -- "$4" "$5" 40 "$6" "$7"' sh \
		"$1" "$DFT" "$T/$1.pfw.gz" "$WL/collective" "$2" "$to" "$from" >"$T/$1.truth"
}

@test "merge: hosts' clocks lined up from their all_reduce regions: 37 ms (and a 5,000 ppm drift) recovered within the ranks' spread + 100 us, inside the bound said; a host without collectives keeps its clock" {
	mkfifo "$T/f01" "$T/f10"
	ranked hostB 1 &
	BG_PIDS+=("$!")
	ranked hostA 0
	wait "${BG_PIDS[-1]}"
	unshare -u sh -c 'hostname hostC && exec "$1" -q -o "$2" -- true' sh "$DFT" "$T/hostC.pfw.gz"
	# hostB's clock 37 ms ahead: every ts 37,000 us later
	coll shift "$T/hostB.pfw.gz" "$T/hostB-ahead.pfw.gz" 37000 >/dev/null
	run "$DFT" merge -o "$T/view.json" "$T/hostA.pfw.gz" "$T/hostB-ahead.pfw.gz" "$T/hostC.pfw.gz"
	expect_eq "status" "$status" 0
	printf '%s\n' "$output" | sed 's/^/# /'
	grep -qx "dftrace-bpf merge: host 'hostA': the reference clock" <<<"$output"
	grep -qx "dftrace-bpf merge: host 'hostC': no collective in common with 'hostA': its clock kept" <<<"$output"
	strict "$T/view.json"
	# the correction and its bound against the truth; the merged ends
	aligned "$T/view.json" hostB 40 "$T/hostA.truth" "$T/hostB.truth"
	expect_eq "hostC's pairs" "$(coll clock "$T/view.json" hostC | cut -d' ' -f1)" 0
	# hostB's clock also 5,000 ppm fast: the drift fitted, the ends as close
	coll shift "$T/hostB.pfw.gz" "$T/hostB-fast.pfw.gz" 37000 5000 >/dev/null
	run "$DFT" merge -o "$T/fast.json" "$T/hostA.pfw.gz" "$T/hostB-fast.pfw.gz"
	expect_eq "status" "$status" 0
	printf '%s\n' "$output" | sed 's/^/# /'
	grep -q "^dftrace-bpf merge: host 'hostB': clock -[0-9.]* ms and a drift of -[0-9.]* ppm fitted" <<<"$output"
	gap=$(coll gap "$T/fast.json")
	echo "# drift: merged ends $gap ns apart at most; truth's spread $spread ns"
	(( gap <= spread + 100000 ))
	# trusted clocks: nothing moved, nothing said
	run "$DFT" merge --no-align-hosts -o "$T/kept.json" "$T/hostA.pfw.gz" "$T/hostB-ahead.pfw.gz"
	expect_eq "status" "$status" 0
	expect_eq "said with --no-align-hosts" "$(grep -c "host '" <<<"$output")" 0
	! grep -q host_clocks "$T/kept.json"
}

@test "merge: NCCL's all_reduce calls, each ended by its stream's synchronise and paired by communicator, line two hosts up: 37 ms (and a drift) recovered within the ranks' spread + 100 us, inside the bound said" {
	nccl_job ncclA ncclB
	# the communicators' ids: world's and split's the same in both ranks,
	# each rank's local one its own; every all_reduce says its own
	"$PY" - "$T/ncclA.pfw.gz" "$T/ncclB.pfw.gz" <<-'EOF'
	import gzip, json, sys
	made = []
	for path in sys.argv[1:]:
	    ids, calls = {}, {}
	    for line in gzip.open(path, "rt"):
	        line = line.strip().rstrip(",")
	        if not line.startswith("{"):
	            continue
	        e = json.loads(line)
	        a = e.get("args", {})
	        if e.get("name") == "ncclCommInitRank":
	            ids[(e["name"], a.get("comm_size"))] = a["comm_id"]
	        elif e.get("name") == "ncclCommSplit":  # its ranks unsaid
	            ids[(e["name"], 2)] = a["comm_id"]
	        elif e.get("name") == "ncclAllReduce":
	            calls[a["comm_id"]] = calls.get(a["comm_id"], 0) + 1
	    made.append((ids, calls))
	(a, ca), (b, cb) = made
	assert sorted(a) == sorted(b) == [("ncclCommInitRank", 1), ("ncclCommInitRank", 2),
	                                  ("ncclCommSplit", 2)], (a, b)
	world, split = ("ncclCommInitRank", 2), ("ncclCommSplit", 2)
	local = ("ncclCommInitRank", 1)
	assert a[world] == b[world] and a[split] == b[split] and a[world] != a[split], (a, b)
	assert len({a[local], b[local], a[world], a[split]}) == 4, (a, b)
	assert ca[a[world]] == cb[b[world]] == 40, (ca, cb)
	# the local calls: (i + 2 * rank) % 3 a round, 40 rounds
	assert ca[a[local]] == sum(i % 3 for i in range(40)), ca
	assert cb[b[local]] == sum((i + 2) % 3 for i in range(40)), cb
	EOF
	coll shift "$T/ncclB.pfw.gz" "$T/ncclB-ahead.pfw.gz" 37000 >/dev/null
	run "$DFT" merge -o "$T/view.json" "$T/ncclA.pfw.gz" "$T/ncclB-ahead.pfw.gz"
	expect_eq "status" "$status" 0
	printf '%s\n' "$output" | sed 's/^/# /'
	# the world's 40 calls pair; the local ones, on communicators of their
	# own, pair with nothing
	aligned "$T/view.json" ncclB 40 "$T/ncclA.truth" "$T/ncclB.truth" no-gap
	coll shift "$T/ncclB.pfw.gz" "$T/ncclB-fast.pfw.gz" 37000 5000 >/dev/null
	run "$DFT" merge -o "$T/fast.json" "$T/ncclA.pfw.gz" "$T/ncclB-fast.pfw.gz"
	expect_eq "status" "$status" 0
	printf '%s\n' "$output" | sed 's/^/# /'
	grep -q "^dftrace-bpf merge: host 'ncclB': clock -[0-9.]* ms and a drift of -[0-9.]* ppm fitted" <<<"$output"
}

@test "merge: --torch's torch.distributed all_reduce calls, paired by process group, line two hosts up: 37 ms recovered within the ranks' spread + 100 us, inside the bound said; an async_op call is no region" {
	/usr/bin/python3 -c 'import torch.distributed' 2>/dev/null || skip "no torch under /usr/bin/python3"
	local job=$ROOT/tests/python/workloads/ranks.py rank host
	for rank in 1 0; do
		host=torch$rank
		unshare -u sh -c 'hostname "$1" && shift && exec "$@"' sh "$host" \
			"$DFT" -q --torch -o "$T/$host.pfw.gz" -- /usr/bin/python3 "$job" "$T" "$rank" 30 3 \
			>"$T/$host.truth" 2>"$T/$host.err" &
		BG_PIDS+=("$!")
	done
	wait "${BG_PIDS[-1]}" && wait "${BG_PIDS[-2]}" || { cat "$T"/torch*.err; return 1; }
	coll shift "$T/torch1.pfw.gz" "$T/torch1-ahead.pfw.gz" 37000 >/dev/null
	run "$DFT" merge -o "$T/view.json" "$T/torch0.pfw.gz" "$T/torch1-ahead.pfw.gz"
	expect_eq "status" "$status" 0
	printf '%s\n' "$output" | sed 's/^/# /'
	# every third round async_op=True: 20 regions on the world's group
	# ("0") a rank; the local groups' (each rank's own: "1" and "2", made
	# in that order by both) 30 a rank, in another order in each
	"$PY" - "$T/torch0.pfw.gz" "$T/torch1.pfw.gz" <<-'EOF'
	import gzip, json, sys
	seen = []
	for path in sys.argv[1:]:
	    calls = {}
	    for line in gzip.open(path, "rt"):
	        line = line.strip().rstrip(",")
	        if not line.startswith("{"):
	            continue
	        e = json.loads(line)
	        if e.get("cat") == "comm" and e.get("name") == "all_reduce":
	            g = e.get("args", {}).get("comm_id")
	            calls[g] = calls.get(g, 0) + 1
	    seen.append(calls)
	assert seen == [{"0": 20, "1": 30}, {"0": 20, "2": 30}], seen
	EOF
	# the world's 20 pair, the local ones with nothing
	aligned "$T/view.json" torch1 20 "$T/torch0.truth" "$T/torch1.truth" no-gap
}

@test "summary and report: two hosts' traces on one clock from their collectives, as merge puts them" {
	mkfifo "$T/f01" "$T/f10"
	ranked hostB 1 &
	BG_PIDS+=("$!")
	ranked hostA 0
	wait "${BG_PIDS[-1]}"
	coll shift "$T/hostB.pfw.gz" "$T/hostB-ahead.pfw.gz" 37000 >/dev/null
	# the span of the run: as on the one true clock, not 37 ms longer
	true_span=$("$DFT" summary "$T/hostA.pfw.gz" "$T/hostB.pfw.gz" | head -1)
	run "$DFT" summary "$T/hostA.pfw.gz" "$T/hostB-ahead.pfw.gz"
	expect_eq "status" "$status" 0
	echo "# truth: $true_span; aligned: ${lines[0]}"
	"$PY" - "$true_span" "${lines[0]}" <<-'EOF'
	import re, sys
	def ms(line):
	    v, unit = re.search(r"over ([0-9.]+) (ms|s)", line).groups()
	    return float(v) * (1000 if unit == "s" else 1)
	t, a = ms(sys.argv[1]), ms(sys.argv[2])
	assert abs(a - t) <= 0.5, (t, a)
	EOF
	run "$DFT" report -o "$T/r.html" "$T/hostA.pfw.gz" "$T/hostB-ahead.pfw.gz"
	expect_eq "report's status" "$status" 0
}
