#!/usr/bin/env bats
# The offline tools (summary, report, merge) on hostile and damaged
# traces, written here by hand: times out of range, a file cut short,
# a first event larger than a read, args nested deep. No tracing.

load lib/common

EV='{"name":"read","cat":"POSIX","pid":7,"tid":7,"ph":"X","args":{"ret":4096}'

# one_line_error CMD FILE LINE WHY: each tool refuses FILE with one line
# naming it and the line, and writes nothing
one_line_error() {
	local file=$1 line=$2 why=$3 cmd
	for cmd in summary report merge; do
		case $cmd in
		summary) run "$DFT" summary -q "$file" ;;
		*) run "$DFT" "$cmd" -q -o "$T/out.$cmd" "$file" ;;
		esac
		echo "# $cmd: status $status: $output"
		[ "$status" = 1 ]
		[ "${#lines[@]}" = 1 ]
		[[ "$output" == "dftrace-bpf $cmd: '$file':$line: $why"* ]]
		[ ! -e "$T/out.$cmd" ]
	done
}

@test "reader: a ts near 2^63 is one line naming the file and line, not 8192 PiB" {
	printf '[\n%s,"ts":100,"dur":2}\n%s,"ts":9223372036854775,"dur":2}\n' "$EV" "$EV" >"$T/ts.pfw"
	one_line_error "$T/ts.pfw" 3 '"ts" out of range'
	printf '[\n%s,"ts":100,"dur":9223372036854775}\n' "$EV" >"$T/dur.pfw"
	one_line_error "$T/dur.pfw" 2 '"dur" out of range'
	printf '[\n%s,"ts":4611686018427387,"dur":5}\n' "$EV" >"$T/end.pfw"
	one_line_error "$T/end.pfw" 2 '"ts" + "dur" out of range'
}

@test "reader: a negative dur is one line naming the file and line, not -5262% wall" {
	printf '[\n%s,"ts":100,"dur":2}\n%s,"ts":200,"dur":-5}\n' "$EV" "$EV" >"$T/neg.pfw"
	one_line_error "$T/neg.pfw" 3 '"dur" out of range'
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
		case $cmd in
		summary) run "$DFT" summary -q --strict "$T/run/cut.pfw.gz" ;;
		*) run "$DFT" "$cmd" -q --strict -o "$T/out.$cmd" "$T/run/cut.pfw.gz" ;;
		esac
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
