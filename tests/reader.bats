#!/usr/bin/env bats
# The offline tools (summary, report, merge) on hostile and damaged
# traces, written here by hand: times out of range, a file cut short,
# a first event larger than a read. No tracing.

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
