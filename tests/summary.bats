#!/usr/bin/env bats
# dftrace-bpf summary: the flat profile, checked against the workloads'
# own records and against the events computed another way
# (tests/lib/expect.py).

load lib/common
load lib/ncclranks

EXPECT="$ROOT/tests/lib/expect.py"
FIXTURES="$ROOT/tests/lib/fixtures.py"

summary() {
	run "$DFT" summary -q "$@"
	if [ "$status" != 0 ]; then
		echo "# summary $* exited $status: $output"
		return 1
	fi
}

# expect_rows TRACE BY: the summary's JSON rows equal expect.py's
expect_rows() {
	"$DFT" summary -q --json --by "$2" "$1" >"$T/s.json"
	run "$PY" "$EXPECT" check "$1" "$T/s.json" --by "$2"
	echo "$output"
	[ "$status" = 0 ]
}

@test "summary: calls and bytes per file and op equal the workload's own records" {
	traced -- "$WL/io" basic "$D"
	summary --json --by file,op "$TRACE"
	printf '%s\n' "$output" >"$T/s.json"
	tpy truth-bytes "$TRUTH" --by path,name --under "$D" | sort >"$T/want"
	"$PY" -c '
import json, sys
d, root = json.load(open(sys.argv[1])), sys.argv[2]
for r in d["groupings"][0]["rows"]:
    if r["file"] == root or r["file"].startswith(root + "/"):
        print("%s\t%s\t%d\t%d" % (r["file"], r["op"], r["calls"], r["bytes"]))
' "$T/s.json" "$D" | sort >"$T/got"
	diff "$T/want" "$T/got"
	[ "$(wc -l <"$T/want")" -gt 10 ]
}

@test "summary: every row and the headline agree with the events: exact times and self time, percentiles within 0.8%" {
	mkdir -p "$D/mt"
	traced -- "$ROOT/build/examples/minitrain" "$D/mt" 2 4
	expect_rows "$TRACE" op
	expect_rows "$TRACE" phase
	expect_rows "$TRACE" file
}

@test "summary: self time: a region gives back its child regions' time; calls on other threads, no region's children, are their own" {
	fixture() { "$PY" "$FIXTURES" "$@"; }
	fixture overlap "$T/ov.pfw" >/dev/null
	summary --json --by phase "$T/ov.pfw"
	"$PY" -c '
import json, sys
rows = {r["phase"]: r for r in json.loads(sys.argv[1])["groupings"][0]["rows"]}
f = rows["compute/forward"]
assert (f["calls"], f["total_ns"], f["self_ns"]) == (2, 200000, 190000), f
assert rows["compute/step"]["self_ns"] == 10000
assert rows["-"]["self_ns"] == rows["-"]["total_ns"] == 420000  # the I/O
' "$output"
}

# The rows of fixtures.py nested, by hand (µs; wall 100 µs): a region in
# a region with calls inside both, and another process's read.
@test "summary: a phase holds its calls once: Total, Self, Avg and % wall of region, call and grouped rows, by hand" {
	"$PY" "$FIXTURES" nested "$T/n.pfw"
	"$DFT" summary -q --json --by phase --by op --by process --by file "$T/n.pfw" >"$T/s.json"
	"$PY" - "$T/s.json" <<-'EOF'
	import json, sys
	g = json.load(open(sys.argv[1]))["groupings"]
	got = {}
	for grouping in g:
	    by = grouping["by"][0]
	    for r in grouping["rows"]:
	        got[(by, r[by])] = ((r["calls"],) + tuple(r[k] // 1000 for k in (
	            "total_ns", "self_ns", "avg_ns")) + (r["wall_bp"],))
	want = {  # calls, Total, Self, Avg (µs), % wall in hundredths
	    ("phase", "train/step"): (2, 100, 60, 60, 10000),  # the region and its write
	    ("phase", "data/fetch"): (3, 40, 40, 18, 4000),    # the region and its reads
	    ("phase", "-"): (1, 20, 20, 20, 2000),
	    ("op", "step"): (1, 100, 40, 100, 10000),          # less fetch and the write
	    ("op", "fetch"): (1, 40, 25, 40, 4000),            # less its reads
	    ("op", "read"): (3, 35, 35, 11, 3500),
	    ("op", "write"): (1, 20, 20, 20, 2000),
	    ("process", "? [1]"): (5, 100, 100, 35, 10000),    # 100, not 175
	    ("process", "? [2]"): (1, 20, 20, 20, 2000),
	    ("file", "-"): (2, 100, 65, 70, 10000),            # the regions, less the calls
	    ("file", "/a"): (2, 15, 15, 7, 1500),
	    ("file", "/b"): (1, 20, 20, 20, 2000),
	    ("file", "/c"): (1, 20, 20, 20, 2000),
	}
	assert got == want, sorted(set(got.items()) ^ set(want.items()))
	EOF
	# the table says the same
	summary --by phase "$T/n.pfw"
	printf '%s\n' "$output" | grep -E '^data/fetch +3 +40.0 us +40.0 us .* 40.00%$'
	printf '%s\n' "$output" | grep -E '^train/step +2 +100.0 us +60.0 us .* 100.00%$'
}

@test "summary: unoverlapped I/O is I/O no compute region of its own process covers, in traces (by end) and merged files (by start)" {
	"$PY" "$FIXTURES" overlap "$T/ov.pfw" >"$T/facts"
	"$DFT" merge -q -o "$T/ov.json" "$T/ov.pfw"
	for f in "$T/ov.pfw" "$T/ov.json"; do
		summary --json "$f"
		"$PY" -c '
import json, sys
h, want = json.loads(sys.argv[1])["headline"], json.load(open(sys.argv[2]))
assert h["unoverlapped_io_ns"] == want["unoverlapped_io_ns"], h
assert h["io_ns"] == want["io_ns"], h
assert (h["processes"], h["late"]) == (2, 0), h
' "$output" "$T/facts"
	done
}

@test "summary: DFTracer's traces, and a merged file, give the same rows as the trace" {
	"$PY" "$FIXTURES" dftracer "$T/df.pfw" >/dev/null
	summary --json --by file,op "$T/df.pfw"
	printf '%s\n' "$output" >"$T/a.json"
	"$DFT" merge -q -o "$T/df.json" "$T/df.pfw"
	summary --json --by file,op "$T/df.json"
	printf '%s\n' "$output" >"$T/b.json"
	"$PY" -c '
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert a["groupings"] == b["groupings"], (a["groupings"], b["groupings"])
reads = [r for r in a["groupings"][0]["rows"] if r["op"] == "read"]
assert sorted((r["file"], r["calls"], r["bytes"]) for r in reads) == [
    ("/data/train/img_0.npz", 1, 4096), ("/data/train/img_1.npz", 1, 4096)], reads
assert a["headline"]["ranks"] == 1
' "$T/a.json" "$T/b.json"
}

@test "summary: a folded total's min, max and percentiles come from its log2 buckets, and say so, as the full trace of the same calls gives them" {
	"$PY" "$FIXTURES" folded "$T/full.pfw" "$T/folded.pfw" >"$T/facts"
	summary --json "$T/full.pfw"
	printf '%s\n' "$output" >"$T/full.json"
	summary --json "$T/folded.pfw"
	printf '%s\n' "$output" >"$T/folded.json"
	"$PY" -c '
import json, sys
full, folded = (json.load(open(p))["groupings"][0]["rows"][0] for p in sys.argv[1:3])
want = json.load(open(sys.argv[3]))
# the full trace: exact
assert (full["min_ns"], full["max_ns"]) == (want["min"]["value"], want["max"]["value"]), full
# the total: the same calls and time; min and max are the bounds of the
# full trace'"'"'s min and max buckets (the max no longer than all calls),
# the percentiles the middles of their buckets (within the sketch'"'"'s 0.8%)
assert (folded["calls"], folded["total_ns"]) == (want["calls"], want["total_ns"]), folded
assert folded["min_ns"] == want["min"]["lo"], (folded, want["min"])
assert folded["max_ns"] == min(want["max"]["hi"], want["total_ns"]), (folded, want["max"])
for q in ("p50", "p99"):
    assert abs(folded[q + "_ns"] - want[q]["mid"]) <= 0.008 * want[q]["mid"], (q, folded, want[q])
    assert want[q]["lo"] <= full[q + "_ns"] <= want[q]["hi"], (q, full, want[q])
# which figures came from buckets: the total'"'"'s all, the full trace'"'"'s none
assert (full["log2_calls"], full["from_log2"]) == (0, []), full
assert folded["log2_calls"] == want["calls"], folded
assert folded["from_log2"] == ["min_ns", "max_ns", "p50_ns", "p99_ns"], folded
' "$T/full.json" "$T/folded.json" "$T/facts"
	# for people: marked, and said why once
	summary "$T/folded.pfw"
	[[ "$output" == *" ~512 ns "*" ~67.1 ms "*" ~24.4 us "*" ~3.1 ms "* ]]
	expect_eq "notes" "$(grep -c '^~: from the log2 buckets of folded totals' <<<"$output")" 1
	summary "$T/full.pfw"
	[[ "$output" != *"~"* ]]
	summary --csv "$T/folded.pfw"
	expect_eq "csv" "${lines[1]##*,}" "min_ns max_ns p50_ns p99_ns"
}

@test "summary: the table for people, CSV, --top and --sort" {
	traced -- "$WL/io" basic "$D"
	summary "$TRACE"
	[[ "${lines[0]}" == *" events over "* ]]
	grep -qE '^op +Calls +Total +Self +Avg +Min +Max +P50 +P99 +Bytes +Bandwidth +% wall$' <<<"$output"
	summary --csv --top 3 --sort bytes "$TRACE"
	expect_eq "csv lines" "${#lines[@]}" 4
	[ "${lines[0]}" = "op,calls,total_ns,self_ns,avg_ns,min_ns,max_ns,p50_ns,p99_ns,bytes,bandwidth_Bps,wall_pct,from_log2" ]
	# largest bytes first
	"$PY" -c '
import csv, sys
rows = list(csv.DictReader(sys.stdin))
b = [int(r["bytes"]) for r in rows]
assert b == sorted(b, reverse=True) and b[0] > 0, b
' <<<"$output"
}

@test "summary: bad options and bad input are one line and a non-zero exit" {
	traced -- "$WL/io" basic "$D"
	run "$DFT" summary --by colour "$TRACE"
	[ "$status" = 64 ]
	[[ "$output" == *"unknown grouping 'colour'"* ]]
	run "$DFT" summary --sort size "$TRACE"
	[ "$status" = 64 ]
	[[ "$output" == *"unknown column 'size'"* ]]
	run "$DFT" summary --json --csv "$TRACE"
	[ "$status" = 64 ]
	run "$DFT" summary
	[ "$status" = 64 ]
	head -c 3000 "$TRACE" >"$T/cut.pfw.gz"
	run "$DFT" summary --strict "$T/cut.pfw.gz"
	[ "$status" = 1 ]
	[ "${#lines[@]}" = 1 ]
	[[ "$output" == "dftrace-bpf summary: '$T/cut.pfw.gz':"*": gzip stream cut short"* ]]
}

@test "summary: a path's control bytes reach neither the table nor the CSV raw: escaped \\xHH, as the trace escapes them" {
	name=$'\e]0;pwned\a\e[2J\xc2\x9b\\.dat'
	traced -- sh -c 'printf 12345 >"$1"' sh "$D/$name"
	want="$D/"'\x1b]0;pwned\x07\x1b[2J\xc2\x9b\\.dat'
	summary --by file --top 0 "$TRACE"
	! LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' <<<"$output"
	grep -qF "$want" <<<"$output" || { printf '%s\n' "$output" | cat -v | sed 's/^/#   /'; return 1; }
	summary --csv --by file --top 0 "$TRACE"
	! LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' <<<"$output"
	expect_eq "the CSV's file" "$("$PY" -c '
import csv, sys
for r in csv.DictReader(sys.stdin):
    if r["file"].endswith(".dat"):
        print(r["file"], r["bytes"])
' <<<"$output")" "$want 5"
}

@test "summary: a key too long for its column is cut from the left, and the cut marked with a leading '…'" {
	long=phase_that_starts_here_and_goes_on_for_much_longer_than_sixty_columns_END
	cat >"$T/long.json" <<-EOF2
	{"traceEvents":[
	{"name":"$long","cat":"app","ph":"X","pid":1,"tid":1,"ts":0,"dur":10},
	{"name":"write","cat":"POSIX","ph":"X","pid":1,"tid":1,"ts":1,"dur":1,"args":{"ret":5,"phase_cat":"app","phase":"$long"}}
	]}
	EOF2
	summary --by phase,op "$T/long.json"
	row=$(grep ' write ' <<<"$output")
	# 60 columns: the mark and the last 59 characters of "app/$long"
	expect_eq "the phase cell" "${row%%  *}" "…${long: -59}"
}

@test "summary: a merged file gives its processes' ranks and names, as their traces do" {
	RANK=3 WORLD_SIZE=4 traced -- cat /etc/hostname
	"$DFT" merge -q -o "$T/m.json" "$TRACE"
	summary --csv --by rank,process "$TRACE"
	want=$output
	[[ "$want" == *$'\n'\"3\",\"cat\ [* ]]
	summary --csv --by rank,process "$T/m.json"
	expect_eq "the merged file's rows" "$output" "$want"
	summary --json "$T/m.json"
	"$PY" -c 'import json, sys; assert json.load(sys.stdin)["headline"]["ranks"] == 1' <<<"$output"
}

@test "summary: a trace given with its torch trace shows each process once, named and ranked as the merged file does" {
	traced -- "$WL/io" basic "$D"
	pid=$(awk -F'\t' '$1=="io" {print $3; exit}' "$TRUTH")
	start_us=$(zcat "$TRACE" | sed -n 's/.*"name":"open".*"ts":\([0-9]*\),.*/\1/p' | head -1)
	[ -n "$pid" ] && [ -n "$start_us" ]
	# Kineto's: the same pid, named python3, of rank 1
	"$PY" "$FIXTURES" kineto "$T/k.json" --pid "$pid" --rank 1 --start-us "$start_us" --base >/dev/null
	"$DFT" merge -q -o "$T/m.json" "$TRACE" "$T/k.json"
	summary --csv --by process "$TRACE"
	calls=$(sed -n 2p <<<"$output" | cut -d, -f2)
	summary --csv --by process,rank "$T/m.json"
	want=$output
	expect_eq "the merged file's process: the trace's calls and aten::mm" \
		"$(cut -d, -f1-3 <<<"$want" | sed 1d)" "\"io [$pid]\",\"-\",$((calls + 1))"
	for order in "$TRACE $T/k.json" "$T/k.json $TRACE"; do
		summary --csv --by process,rank $order
		expect_eq "rows of $order" "$(cut -d, -f1-3 <<<"$output")" "$(cut -d, -f1-3 <<<"$want")"
		summary --json $order
		"$PY" -c 'import json, sys; h = json.load(sys.stdin)["headline"]; assert (h["processes"], h["ranks"]) == (1, 0), h' <<<"$output"
	done
	# what a read leaves out is said once, though aligning reads it twice
	zcat "$TRACE" | sed "3i {\"name\":\"read\",\"cat\":\"POSIX\",\"pid\":$pid,\"tid\":$pid,\"ts\":9223372036854775,\"dur\":1,\"ph\":\"X\"}" |
		gzip >"$T/bad.pfw.gz"
	run "$DFT" summary -q --csv "$T/bad.pfw.gz" "$T/k.json"
	[ "$status" = 0 ]
	expect_eq "the warnings" "$(grep '^warning' <<<"$output")" \
		"warning: '$T/bad.pfw.gz': skipped 1 event whose times are out of range (first at line 3)"
}

@test "summary: cuFile in compatibility mode: each call counts once, the syscalls as pwrite, the cuFile calls as cuFileWrite" {
	{
		echo '{"name":"FH","cat":"dftracer","pid":7,"tid":7,"ph":"M","args":{"name":"/g","value":"ab"}}'
		for i in 1 2 3; do
			printf '{"id":%d,"name":"pwrite","cat":"POSIX","pid":7,"tid":7,"ts":%d1,"dur":1,"ph":"X","args":{"ret":4096,"fhash":"ab"}}\n' "$i" "$i"
		done
		for i in 1 2; do
			printf '{"id":%d,"name":"pwrite","cat":"CUFILE","pid":7,"tid":7,"ts":%d0,"dur":5,"ph":"X","args":{"ret":4096,"fhash":"ab","api":"cuFileWrite","via":"posix"}}\n' $((i + 3)) "$i"
		done
	} >"$T/c.pfw"
	summary --csv --by op "$T/c.pfw"
	expect_eq "rows" "$(cut -d, -f1-3,10 <<<"$output" | sort)" '"cuFileWrite",2,10000,0
"pwrite",3,3000,12288
op,calls,total_ns,bytes'
	"$DFT" summary -q --json --by op "$T/c.pfw" >"$T/s.json"
	run "$PY" "$EXPECT" check "$T/c.pfw" "$T/s.json" --by op
	echo "$output"
	[ "$status" = 0 ]
}

# straggler_named TRUTH0 TRUTH1: summary's $output names rank 1 first,
# in step 7, late by its start past rank 0's (the ranks' truths, "coll
# RANK ROUND START END"), the others' wait as much, within 1 ms each
straggler_named() {
	local want line
	sed -n '/^stragglers/,/^  step/p' <<<"$output" | sed 's/^/# /'
	want=$(awk -F'\t' '$1 == "coll" && $3 == 7 { s[$2] = $4 } END { printf "%.1f", (s[1] - s[0]) / 1e6 }' \
		"$1" "$2")
	line=$(grep -A1 '^stragglers' <<<"$output" | tail -1)
	[[ $line =~ ^\ \ step\ 7:\ rank\ 1\ late\ by\ ([0-9.]+)\ ms\;\ the\ others\ waited\ ([0-9.]+)\ ms\ in\ all,\ in\ 1\ collective$ ]] ||
		{ echo "# $line"; return 1; }
	"$PY" -c 'import sys; want, late, waited = map(float, sys.argv[1:])
assert abs(late - want) <= 1 and abs(waited - want) <= 1, (want, late, waited)' \
		"$want" "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}"
}

@test "summary --by rank,step: a straggler in NCCL's collectives (the stand-ins) is named with its step and the others' wait, from the calls' starts" {
	# rank 1 sleeps 300 ms in step 7, before its world all_reduce
	nccl_job ncclA ncclB 7 300
	run "$DFT" summary --by rank,step "$T/ncclA.pfw.gz" "$T/ncclB.pfw.gz"
	expect_eq "status" "$status" 0
	straggler_named "$T/ncclA.truth" "$T/ncclB.truth"
}

@test "summary --by rank,step: a planted straggler is named with its step and the others' wait, as the ranks' own clocks say, and the file it read meanwhile" {
	mkfifo "$T/f01" "$T/f10"
	head -c 4194304 /dev/urandom >"$D/shard-0412.bin"
	# rank 1 reads the shard and sleeps 300 ms in step 7, before its all_reduce
	RANK=1 "$DFT" -q -o "$T/r1.pfw.gz" -- "$WL/collective" 1 12 "$T/f10" "$T/f01" \
		7 300 "$D/shard-0412.bin" >"$T/r1.truth" &
	BG_PIDS+=("$!")
	RANK=0 "$DFT" -q -o "$T/r0.pfw.gz" -- "$WL/collective" 0 12 "$T/f01" "$T/f10" >"$T/r0.truth"
	wait "${BG_PIDS[-1]}"
	run "$DFT" summary --by rank,step "$T/r0.pfw.gz" "$T/r1.pfw.gz"
	expect_eq "status" "$status" 0
	straggler_named "$T/r0.truth" "$T/r1.truth"
	grep -A3 '^stragglers' <<<"$output" | grep -q "^      files: '$D/shard-0412.bin' [0-9.]* [mu]*s (4.0 MiB)"
	# the report says the same
	run "$DFT" report -q -o "$T/r.html" "$T/r0.pfw.gz" "$T/r1.pfw.gz"
	expect_eq "report's status" "$status" 0
	grep -q "<h2>Stragglers</h2>" "$T/r.html"
	grep -q "^  step 7: rank 1 late by [0-9.]* ms" "$T/r.html"
}
