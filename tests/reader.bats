#!/usr/bin/env bats
# The offline tools (summary, report, merge) on hostile and damaged
# traces, written here by hand: times out of range, a file cut short,
# a first event larger than a read, args nested deep, 400,000 processes.
# No tracing.

load lib/common

EV='{"name":"read","cat":"POSIX","pid":7,"tid":7,"ph":"X","args":{"ret":4096}'

# run_tool CMD FILE [OPT...]: run CMD (summary, report or merge, which
# write $T/out.CMD) on FILE
run_tool() {
	local cmd=$1 file=$2
	shift 2
	case $cmd in
	summary) run "$DFT" summary -q "$@" "$file" ;;
	*) run "$DFT" "$cmd" -q "$@" -o "$T/out.$cmd" "$file" ;;
	esac
}

# one_line_error FILE LINE WHY [OPT...]: each tool (given OPT) refuses
# FILE with one line naming it and the line, and writes nothing
one_line_error() {
	local file=$1 line=$2 why=$3 cmd
	shift 3
	for cmd in summary report merge; do
		run_tool "$cmd" "$file" "$@"
		echo "# $cmd: status $status: $output"
		[ "$status" = 1 ]
		[ "${#lines[@]}" = 1 ]
		[[ "$output" == "dftrace-bpf $cmd: '$file':$line: $why"* ]]
		[ ! -e "$T/out.$cmd" ]
	done
}

# skipped_read FILE N LINE GOOD: each tool reads FILE but its N events out
# of range (the first at LINE), with one warning saying so; summary counts
# the GOOD reads, merge writes them
skipped_read() {
	local file=$1 n=$2 line=$3 good=$4 cmd s=s
	[ "$n" = 1 ] && s=
	local warning="warning: '$file': skipped $n event$s whose times are out of range (first at line $line)"
	for cmd in summary report merge; do
		run_tool "$cmd" "$file"
		echo "# $cmd: status $status: ${lines[0]}"
		[ "$status" = 0 ]
		[ "${lines[0]}" = "$warning" ]
		[ "$(printf '%s\n' "$output" | grep -c '^warning')" = 1 ]
	done
	"$DFT" summary -q --json "$file" 2>/dev/null | "$PY" -c '
import json, sys
rows = json.load(sys.stdin)["groupings"][0]["rows"]
assert [(r["op"], r["calls"], r["bytes"]) for r in rows] == [("read", int(sys.argv[1]), 4096 * int(sys.argv[1]))], rows
' "$good"
	expect_eq "reads merged" "$("$PY" -c 'import json,sys; print(sum(e.get("name") == "read" for e in json.load(open(sys.argv[1]))["traceEvents"]))' "$T/out.merge")" "$good"
	rm -f "$T/out.report" "$T/out.merge"
}

@test "reader: an event whose ts is near 2^63 is left out with one warning, not the trace; --strict refuses it in one line" {
	printf '[\n%s,"ts":100,"dur":2}\n%s,"ts":9223372036854775,"dur":2}\n%s,"ts":200,"dur":2}\n' \
		"$EV" "$EV" "$EV" >"$T/ts.pfw"
	skipped_read "$T/ts.pfw" 1 3 2
	one_line_error "$T/ts.pfw" 3 '"ts" out of range' --strict
	printf '[\n%s,"ts":100,"dur":9223372036854775}\n%s,"ts":200,"dur":2}\n' "$EV" "$EV" >"$T/dur.pfw"
	skipped_read "$T/dur.pfw" 1 2 1
	one_line_error "$T/dur.pfw" 2 '"dur" out of range' --strict
	printf '[\n%s,"ts":4611686018427387,"dur":5}\n%s,"ts":200,"dur":2}\n' "$EV" "$EV" >"$T/end.pfw"
	skipped_read "$T/end.pfw" 1 2 1
	one_line_error "$T/end.pfw" 2 '"ts" + "dur" out of range' --strict
}

@test "reader: negative durs are left out with one warning per file, counted, not -5262% wall" {
	{
		echo '['
		for i in $(seq 1 100); do
			printf '%s,"ts":%d,"dur":%d}\n' "$EV" $((100 + i * 10)) $((i % 10 == 3 ? -5 : 2))
		done
	} >"$T/neg.pfw"
	skipped_read "$T/neg.pfw" 10 4 90
	one_line_error "$T/neg.pfw" 4 '"dur" out of range' --strict
	# two such files: a warning each
	cp "$T/neg.pfw" "$T/neg2.pfw"
	run "$DFT" summary -q "$T/neg.pfw" "$T/neg2.pfw"
	[ "$status" = 0 ]
	expect_eq "the warnings" "$(grep '^warning' <<<"$output")" \
		"warning: '$T/neg.pfw': skipped 10 events whose times are out of range (first at line 4)
warning: '$T/neg2.pfw': skipped 10 events whose times are out of range (first at line 4)"
}

@test "reader: a Kineto trace whose baseTimeNanoseconds is INT64_MAX is refused" {
	printf '{"traceEvents": [\n{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":5,"dur":1}\n],\n"baseTimeNanoseconds": 9223372036854775807}\n' >"$T/k.pt.trace.json"
	one_line_error "$T/k.pt.trace.json" 4 '"baseTimeNanoseconds" out of range'
}

# cut_trace DIR: DIR/whole.pfw.gz (2000 events) and DIR/cut.pfw.gz, the
# same cut inside its gzip stream as a SIGKILL leaves it; WHOLE_LINES:
# the lines of cut.pfw.gz that zcat gives whole
cut_trace() {
	{
		echo '['
		for i in $(seq 1 2000); do
			printf '%s,"ts":%d,"dur":2,"id":%d}\n' "$EV" $((1000 + i * 10)) "$i"
		done
	} | gzip -1 >"$1/whole.pfw.gz"
	head -c $(($(stat -c %s "$1/whole.pfw.gz") * 2 / 3)) "$1/whole.pfw.gz" >"$1/cut.pfw.gz"
	WHOLE_LINES=$( (zcat "$1/cut.pfw.gz" 2>/dev/null || true) | grep -c '}$')
	[ "$WHOLE_LINES" -gt 100 ] && [ "$WHOLE_LINES" -lt 2000 ]
}

@test "reader: a trace cut short is read up to its last whole line, with one warning naming it" {
	cut_trace "$T"
	run "$DFT" summary -q --json "$T/cut.pfw.gz"
	echo "# $output" | head -3
	[ "$status" = 0 ]
	[ "${lines[0]}" = "warning: '$T/cut.pfw.gz' is cut short after line $((WHOLE_LINES + 1)); read up to it" ]
	[ "$(printf '%s\n' "$output" | grep -c warning)" = 1 ]
	printf '%s\n' "${lines[@]:1}" | "$PY" -c '
import json, sys
d = json.load(sys.stdin)
rows = d["groupings"][0]["rows"]
assert [(r["op"], r["calls"], r["bytes"]) for r in rows] == [("read", int(sys.argv[1]), 4096 * int(sys.argv[1]))], rows
' "$WHOLE_LINES"
	for cmd in report merge; do
		run "$DFT" "$cmd" -q -o "$T/out.$cmd" "$T/cut.pfw.gz"
		echo "# $cmd: $status: $output"
		[ "$status" = 0 ]
		[ "$output" = "warning: '$T/cut.pfw.gz' is cut short after line $((WHOLE_LINES + 1)); read up to it" ]
	done
	[ "$("$PY" -c 'import json,sys; print(sum(e.get("name") == "read" for e in json.load(open(sys.argv[1]))["traceEvents"]))' "$T/out.merge")" = "$WHOLE_LINES" ]
}

@test "reader: a -D directory with one cut file reads the others whole; --strict refuses it in one line" {
	mkdir "$T/run"
	cut_trace "$T/run"
	run "$DFT" summary -q --json "$T/run"
	[ "$status" = 0 ]
	[ "${lines[0]}" = "warning: '$T/run/cut.pfw.gz' is cut short after line $((WHOLE_LINES + 1)); read up to it" ]
	printf '%s\n' "${lines[@]:1}" | "$PY" -c '
import json, sys
rows = json.load(sys.stdin)["groupings"][0]["rows"]
assert rows[0]["calls"] == 2000 + int(sys.argv[1]), rows
' "$WHOLE_LINES"
	for cmd in summary report merge; do
		run_tool "$cmd" "$T/run/cut.pfw.gz" --strict
		echo "# $cmd --strict: $status: $output"
		[ "$status" = 1 ]
		[ "${#lines[@]}" = 1 ]
		[[ "$output" == "dftrace-bpf $cmd: '$T/run/cut.pfw.gz':"*": gzip stream cut short"* ]]
		[ ! -e "$T/out.$cmd" ]
	done
}

@test "reader: args nested 100 and 100000 deep are read by the three tools; merge writes what is below 64 as text" {
	for depth in 100 100000; do
		"$PY" -c '
import sys
d = int(sys.argv[1])
ev = sys.argv[2]
print("[")
print(ev + ",\"ts\":100,\"dur\":2}")
print(ev[:-1] + ",\"deep\":" + "{\"k\":" * d + "1" + "}" * d + "},\"ts\":110,\"dur\":2}")
print(ev + ",\"ts\":120,\"dur\":2}")
' "$depth" "$EV" >"$T/deep.pfw"
		run "$DFT" summary -q --json "$T/deep.pfw"
		echo "# summary, $depth deep: status $status: ${output:0:200}"
		[ "$status" = 0 ]
		"$PY" -c '
import json, sys
rows = json.load(sys.stdin)["groupings"][0]["rows"]
assert [(r["op"], r["calls"], r["bytes"]) for r in rows] == [("read", 3, 3 * 4096)], rows
' <<<"$output"
		run "$DFT" report -q -o "$T/r.html" "$T/deep.pfw"
		[ "$status" = 0 ] && [ -z "$output" ]
		run "$DFT" merge -q -o "$T/m.json" "$T/deep.pfw"
		[ "$status" = 0 ] && [ -z "$output" ]
		"$PY" -c '
import json, sys
ev = [e for e in json.load(open(sys.argv[1]))["traceEvents"] if e.get("name") == "read"]
assert len(ev) == 3, ev
v, depth = ev[1]["args"]["deep"], 0
while isinstance(v, dict):
    v, depth = v["k"], depth + 1
# 64 levels of objects, then the text of the rest
assert isinstance(v, str) and v.startswith("{\"k\":{") and depth == 64, (depth, v[:40])
' "$T/m.json"
	done
}

@test "reader: report caps its process table, with a line naming what summary gives, for 400,000 processes" {
	awk 'BEGIN { print "["
		for (i = 1; i <= 400000; i++)
			printf "{\"name\":\"read\",\"cat\":\"POSIX\",\"pid\":%d,\"tid\":%d,\"ph\":\"X\",\"args\":{\"ret\":4096},\"ts\":%d,\"dur\":%d}\n", i, i, 1000 + i, 1 + i % 7 }' >"$T/many.pfw"
	run "$DFT" report -q -o "$T/r.html" "$T/many.pfw"
	[ "$status" = 0 ]
	"$PY" - "$T/r.html" <<'PY'
import re, sys
page = open(sys.argv[1]).read()
assert len(page) < 1_000_000, len(page)
table = re.search(r'<table class="rows" data-by="process">(.*?)</table>(<p class="note">[^<]*</p>)?', page, re.S)
rows = re.findall(r"<tr><td", table.group(1))
assert len(rows) == 100, len(rows)
assert table.group(2) == '<p class="note">399900 more rows: dftrace-bpf summary --by process shows them.</p>', table.group(2)
PY
	run "$DFT" summary -q --csv --by process "$T/many.pfw"
	expect_eq "summary's rows" "$(($(wc -l <<<"$output") - 1))" 400000
}
