#!/usr/bin/env bats
# --format v2: DFTracer 2.1.1's layout (one object a line, integer "ph" and
# "type", totals as aggregated records with args.dft_cnt). Every record is
# checked against the format's documentation (tests/lib/v2.py, written
# from it), the workloads' own counts hold, and every reader here takes v2
# as it takes v1: the same run written both ways reads the same.

load lib/common

REPLAY="$ROOT/build/bench/replay"

# calls_by KEYS TRACE: TSV "KEYS... calls bytes" of the events on $D, a
# total counting its calls (v2: args.dft_cnt, read by trace.py as calls)
calls_by() {
	tpy events "$2" --under "$D" --fields "$1,args.calls,args.ret,name" |
		awk -F'\t' -v n="$(tr -cd , <<<"$1" | wc -c)" '{
			k = $1; for (i = 2; i <= n + 1; i++) k = k "\t" $i
			c = $(n + 2) == "-" ? 1 : $(n + 2); calls[k] += c
			if ($(n + 4) ~ /read|write/ && $(n + 3) > 0) bytes[k] += $(n + 3)
		} END { for (k in calls) print k "\t" calls[k] "\t" bytes[k] + 0 }' | sort
}

@test "format v2: every record conforms to DFTracer's v2, and the io workload's calls and bytes are exact" {
	TRACE=$T/t.pfw traced --format v2 -- "$WL/io" basic "$D"
	TRACE=$T/t.pfw valid
	TRACE=$T/t.pfw check_truth --under "$D"
	# no brackets, an integer ph and type on every line; the end last
	run grep -c '^\[$\|^\]$' "$T/t.pfw"
	expect_eq "bracket lines" "$output" 0
	run grep -vc '"type":[0-9][0-9]*,.*"ph":[1-4][,}]' "$T/t.pfw"
	expect_eq "lines without an integer type and ph" "$output" 0
	tail -n 1 "$T/t.pfw" | grep -q '^{"id":[0-9]*,"name":"end","cat":"dftracer","type":1,'
	# calls and bytes per file and op, as the workload made them
	tpy bytes "$T/t.pfw" --by path,name --under "$D" >"$T/got"
	tpy truth-bytes "$TRUTH" --by path,name --under "$D" >"$T/want"
	diff "$T/want" "$T/got"
}

@test "format v2: the end says the layers used, the options in cfg, the build; POSIX is 3, PROC and the tracer's own 1" {
	TRACE=$T/t.pfw traced --format v2 -- "$WL/io" basic "$D"
	run tpy events "$T/t.pfw" --all --name end --cat dftracer --json --fields args.used,args.cfg,args.build,args.app,args.num_events
	"$PY" -c '
import json, sys
e = json.loads(sys.argv[1])
assert e["args.used"] == {"LIBC_IO": 1}, e
assert e["args.cfg"]["format"] == "v2" and e["args.cfg"]["log_file"] == sys.argv[2], e
assert e["args.build"]["cuda"] == 1 and e["args.app"] == {}, e
' "$output" "$T/t.pfw"
	grep -q '"name":"open","cat":"POSIX","type":3,' "$T/t.pfw"
	grep -q '"name":"exec","cat":"PROC","type":1,' "$T/t.pfw"
	grep -q '^{"name":"FH","cat":"dftracer","type":1,"pid":[0-9]*,"tid":[0-9]*,"ph":4,"args":{"hhash":"' "$T/t.pfw"
}

@test "format v2: -D writes each process's file in v2, and --flight's dumps are v2 too" {
	dft -q --format v2 -D "$T/out" -- sh -c '"$1" basic "$2"' sh "$WL/io" "$D"
	[ "$DFT_STATUS" = 0 ] || { cat "$T/dft.err"; return 1; }
	TRACE=$T/out valid
	TRACE=$T/out check_truth --under "$D"
	for f in "$T"/out/*.pfw.gz; do
		zcat "$f" | head -n 1 | grep -q '^{"name":"[A-Z][A-Z]","cat":"dftracer","type":1,'
	done
	dft -q --format v2 --flight 5 --trigger exit -D "$T/fl" -- sh -c '"$1" abort "$2"; exit 0' sh "$WL/flight" "$D"
	[ "$DFT_STATUS" = 0 ] || { cat "$T/dft.err"; return 1; }
	TRACE=$T/fl/flight-1-exit.pfw.gz valid
	zcat "$T/fl/flight-1-exit.pfw.gz" | grep -q '"name":"flight","cat":"dftracer","type":1,'
	run tpy bytes "$T/fl/flight-1-exit.pfw.gz" --by path,name --under "$D/last.dat" --name write
	expect_eq "the aborted child's write, in the dump" "$output" "$(printf '%s\twrite\t1\t4096' "$D/last.dat")"
}

@test "format v2 --profile: totals are aggregated records whose dft_cnt gives every call per phase, op and file" {
	traced -- "$WL/steps" "$D" 6
	calls_by args.phase_cat,args.phase,name,path "$TRACE" >"$T/full"
	traced --format v2 --profile=0.05 -- "$WL/steps" "$D" 6
	valid
	calls_by args.phase_cat,args.phase,name,path "$TRACE" >"$T/prof"
	diff "$T/full" "$T/prof"
	grep -qP "^compute\tstep\tpread\t$D/step-03.dat\t1\t1003$" "$T/prof"
	# every total is ph 3: no id, no dur of its own; dur_sum, dur_min and
	# dur_max (bounds, marked) where it folded more than one call
	zcat "$TRACE" >"$T/t.pfw"
	run grep -c '"folded":' "$T/t.pfw"
	total=$output
	run grep -c '^{"name":"[^"]*","cat":"[^"]*","type":[0-9]*,"ts":[0-9]*,"ph":3,"pid":[0-9]*,"tid":[0-9]*,"args":{"hhash":"[0-9a-f]*",.*"dft_cnt":' "$T/t.pfw"
	expect_eq "aggregated records" "$output" "$total"
	[ "$total" -gt 10 ]
	grep '"ph":3' "$T/t.pfw" | grep -v '"dft_cnt":1,' | grep -v '"dur_sum":[0-9]*,"dur_min":[0-9]*,"dur_max":[0-9]*,"dur_bounds":"log2"' | grep . && false
	true
}

@test "format v2: summary, report's findings and merge read the same run written in v1 and in v2 alike" {
	head -c 1048576 /dev/urandom >"$D/f"
	DFTRACE_BPF_RECORD="$T/rec" traced --profile=0.05 -- "$WL/steps" "$D" 6
	# one recording, written both ways with the same times
	for f in v1 v2; do
		DFT_REPLAY_CLOCK_OFFSET=1795971000000000000 "$REPLAY" --format $f "$T/rec" "$T/$f.pfw.gz" >/dev/null
	done
	TRACE=$T/v2.pfw.gz valid
	run grep -c '"ph":3' <(zcat "$T/v2.pfw.gz")
	[ "$output" -gt 10 ]
	for by in op phase,op file,op epoch,step; do
		"$DFT" summary -q --json --findings --by "$by" "$T/v1.pfw.gz" >"$T/s1.json"
		"$DFT" summary -q --json --findings --by "$by" "$T/v2.pfw.gz" >"$T/s2.json"
		cmp "$T/s1.json" "$T/s2.json"
	done
	# merge: the same events at the same times (each replay is its own pid)
	for f in v1 v2; do
		"$DFT" merge -q -o "$T/m$f.json" "$T/$f.pfw.gz"
	done
	"$PY" -c '
import json, sys
def events(p):
    return sorted((e.get("name"), e.get("cat"), e["ph"], e.get("ts"), e.get("dur"))
                  for e in json.load(open(p))["traceEvents"]
                  if e["ph"] != "M" and e.get("cat") != "dftracer")
a, b = events(sys.argv[1]), events(sys.argv[2])
assert a == b and len(a) > 40, (len(a), len(b), [x for x in zip(a, b) if x[0] != x[1]][:3])
' "$T/mv1.json" "$T/mv2.json"
}

@test "format v2: DFTracer's own v2 records, as its documentation shows them, are read: complete, counter, aggregated, metadata, end" {
	# the shapes of docs/trace_format.rst's examples, values of our own
	cat >"$T/dft.pfw" <<'EOF'
{"name":"HH","cat":"dftracer","type":1,"pid":41,"tid":41,"ph":4,"args":{"hhash":"00000000000000aa","name":"node7","value":"00000000000000aa"}}
{"name":"FH","cat":"dftracer","type":1,"pid":41,"tid":41,"ph":4,"args":{"hhash":"00000000000000aa","name":"/data/a.npz","value":"00000000000000f1"}}
{"name":"PR","cat":"dftracer","type":1,"pid":41,"tid":41,"ph":4,"args":{"hhash":"00000000000000aa","name":"core_affinity","value":[0,1,2,3]}}
{"id":1,"name":"start","cat":"dftracer","type":1,"pid":41,"tid":41,"ts":1727286231000000,"dur":0,"ph":1,"args":{"hhash":"00000000000000aa"}}
{"id":2,"name":"CUSTOM_BLOCK","cat":"CPP_APP","type":9,"pid":41,"tid":82,"ts":1727286231145121,"dur":1000054,"ph":1,"args":{"hhash":"00000000000000aa","p_idx":1,"level":2}}
{"id":3,"name":"read","cat":"POSIX","type":3,"pid":41,"tid":82,"ts":1727286231145200,"dur":40,"ph":1,"args":{"hhash":"00000000000000aa","ret":4096,"fhash":"00000000000000f1","p_idx":2,"level":3}}
{"name":"cpu","cat":"sys","type":7,"ts":1727286231145121,"ph":2,"pid":41,"tid":0,"args":{"hhash":"00000000000000aa","user_pct":12.5,"idle_pct":83.1}}
{"name":"openat","cat":"POSIX","type":3,"ts":1727286232000000,"ph":3,"pid":41,"tid":41,"args":{"hhash":"00000000000000aa","dft_cnt":2,"dur_min":379,"dur_max":444,"dur_sum":823,"flags_min":0,"flags_max":65,"flags_sum":65}}
{"name":"creat64","cat":"POSIX","type":3,"ts":1727286232000000,"ph":3,"pid":41,"tid":41,"args":{"hhash":"00000000000000aa","dft_cnt":1,"dur":185,"mode":2}}
{"name":"pread","cat":"POSIX","type":3,"ts":1727286232000000,"ph":3,"pid":41,"tid":41,"args":{"hhash":"00000000000000aa","dft_cnt":3,"dur":20,"ret":8192,"fhash":"00000000000000f1"}}
{"name":"write","cat":"POSIX","type":3,"ts":1727286232000000,"ph":3,"pid":41,"tid":41,"args":{"hhash":"00000000000000aa","dft_cnt":4,"dur_min":5,"dur_max":9,"dur_sum":26,"ret_min":100,"ret_max":400,"ret_sum":1000}}
{"id":4,"name":"end","cat":"dftracer","type":1,"pid":41,"tid":41,"ts":1727286233000000,"dur":0,"ph":1,"args":{"hhash":"00000000000000aa","num_events":6,"cfg":{"enable":1,"aggregation_enable":1},"build":{"mpi":1},"used":{"CPP_APP":1,"LIBC_IO":1},"app":{"model":"resnet50"}}}
EOF
	run "$DFT" summary -q --json --by op "$T/dft.pfw"
	[ "$status" = 0 ] || { echo "# $output"; false; }
	"$PY" -c '
import json, sys
rows = {r["op"]: r for r in json.loads(sys.argv[1])["groupings"][0]["rows"]}
want = {"openat": (2, 823000, 0), "creat64": (1, 185000, 0), "pread": (3, 60000, 3 * 8192),
        "write": (4, 26000, 1000), "read": (1, 40000, 4096)}
for op, (calls, ns, nbytes) in want.items():
    r = rows[op]
    assert (r["calls"], r["total_ns"], r["bytes"]) == (calls, ns, nbytes), (op, r)
assert "cpu" not in rows, rows  # a counter sample is no call
' "$output"
	# the file named by its FH; merge takes it too
	"$DFT" summary -q --by file "$T/dft.pfw" | grep -q '/data/a.npz'
	"$DFT" merge -q -o "$T/m.json" "$T/dft.pfw"
	"$PY" -c '
import json, sys
ev = [e for e in json.load(open(sys.argv[1]))["traceEvents"] if e.get("name") == "pread"]
assert len(ev) == 1 and ev[0]["ph"] == "X" and ev[0]["dur"] == 60, ev
' "$T/m.json"
	# and trace.py reads it as DFTracer's (checker and all; not our layer choices)
	"$PY" -S -c '
import sys; sys.path.insert(0, sys.argv[2]); import v2, json
for line in open(sys.argv[1]):
    o = json.loads(line)
    assert not v2.check(o, len(line), ours=False), (line, v2.check(o, len(line), ours=False))
' "$T/dft.pfw" "$ROOT/tests/lib"
}

@test "format v2: the checker refuses what v2 forbids (letters for ph, brackets, a field out of order, a lone min)" {
	"$PY" -S -c '
import sys; sys.path.insert(0, sys.argv[1]); import v2
ok = {"id": 1, "name": "read", "cat": "POSIX", "type": 3, "pid": 1, "tid": 1, "ts": 5, "dur": 1, "ph": 1,
      "args": {"hhash": "00000000000000aa", "ret": 3}}
assert v2.check(ok, 100) == [], v2.check(ok, 100)
bad = [dict(ok, ph="X"), dict(ok, type=0), {k: ok[k] for k in ["name", "id"] + [k for k in ok if k not in ("name", "id")]},
       dict(ok, args={"ret": 3}), dict(ok, cat="POSIX", type=6)]
agg = {"name": "read", "cat": "POSIX", "type": 3, "ts": 5, "ph": 3, "pid": 1, "tid": 1,
       "args": {"hhash": "00000000000000aa", "dft_cnt": 2, "dur_min": 3}}
bad += [agg, dict(agg, args={"hhash": "00000000000000aa", "dft_cnt": 1, "dur_min": 1, "dur_max": 1, "dur_sum": 1}),
        dict(agg, args={"hhash": "00000000000000aa", "dft_cnt": 2, "dur_min": 5, "dur_max": 9, "dur_sum": 3}),
        dict(agg, id=4), dict(ok, name="end", cat="dftracer", type=1)]
for b in bad:
    assert v2.check(b, 100), b
assert v2.check(ok, 20000), "a line over 16 KiB"
' "$ROOT/tests/lib"
	printf '[\n{"id":1,"name":"start","cat":"dftracer","type":1,"pid":1,"tid":1,"ts":1,"dur":0,"ph":1,"args":{"hhash":"00000000000000aa"}}\n' >"$T/b.pfw"
	run tpy validate "$T/b.pfw"
	[ "$status" = 1 ]
}

@test "format: an unknown --format is a usage error naming it" {
	run "$DFT" --format v3 -- true
	[ "$status" = 64 ] || [ "$status" = 2 ] || { echo "# status $status"; false; }
	[[ "${lines[0]}" == *"unknown format 'v3': v1 or v2"* ]]
}
