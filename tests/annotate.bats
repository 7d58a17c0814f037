#!/usr/bin/env bats
# Annotations (include/dftrace/usdt.h): probes found in executables and
# libraries, regions written with DFTracer's names, I/O correlated with the
# enclosing phase, epoch and step, parent links and nesting.

load lib/common

EX="$ROOT/build/examples"
ANNOT="$ROOT/tests/lib/annot.py"

annot() {
	run python3 "$ANNOT" "$@"
	if [ "$status" != 0 ]; then
		echo "# annot.py $* failed:"
		printf '%s\n' "$output" | sed 's/^/#   /'
		return 1
	fi
}

# wait_line FILE PATTERN: wait until a line of FILE matches PATTERN.
wait_line() {
	local i
	for ((i = 0; i < 1500; i++)); do
		grep -qE "$2" "$1" 2>/dev/null && return 0
		sleep 0.02
	done
	echo "# no line matching '$2' in $1:"
	sed 's/^/#   /' "$1"
	return 1
}

@test "annotate: minitrain's regions have DFTracer's exact names and cats" {
	traced -- "$EX/minitrain" "$D/mt" 2 3
	valid
	annot names "$TRACE"
	expect_eq "regions" "$output" "$(printf '%s\n' \
		"checkpoint	capture" "checkpoint	checkpoint.init" \
		"compute	backward" "compute	forward" "compute	step" \
		"data	item" "data	preprocess" "data	preprocess.collate" \
		"dataloader	fetch.block" "dataloader	fetch.iter" \
		"pipeline	epoch" "pipeline	train")"
}

@test "annotate: minitrain: every region, bytes by phase/epoch/step, links, nesting and counts match" {
	traced -- "$EX/minitrain" "$D/mt" 2 3
	valid
	annot check "$TRACE" "$TRUTH"
	# the example really read and wrote inside its phases
	grep -q '"cat":"checkpoint","name":"capture"' "$TRUTH"
	grep -q '"kind":"io".*"cat":"data","name":"item"' "$TRUTH"
}

@test "annotate: forked and exec'd workers' probes and I/O are their own" {
	traced -- "$EX/minitrain" "$D/mt" 1 2
	main=$(grep -m1 -o '"pid":[0-9]*' "$TRUTH" | cut -d: -f2)
	workers=$(grep '"kind":"io"' "$TRUTH" | grep -v "\"pid\":$main," | grep -o '"pid":[0-9]*' | sort -u | cut -d: -f2)
	expect_eq "worker processes" "$(echo $workers | wc -w)" 2
	for w in $workers; do
		expect_eq "item regions of $w" "$(tpy count "$TRACE" --pid "$w" --cat data --name item)" 1
	done
	# the exec'd one starts with a clean context: no epoch in its events
	grep -q '"epoch":-1' "$TRUTH"
	annot check "$TRACE" "$TRUTH"
}

@test "annotate: metadata mode writes CM epoch.start/epoch.end with timestamps" {
	traced -- "$EX/minitrain" "$D/mt" 2 1
	run tpy meta "$TRACE" CM
	expect_eq "CM names" "$(printf '%s\n' "$output" | python3 -c '
import json, sys
print(" ".join(json.loads(l)["args"]["name"] for l in sys.stdin if l.strip()))')" \
		"epoch.start epoch.end epoch.start epoch.end"
	printf '%s\n' "$output" | python3 -c '
import json, sys
for l in sys.stdin:
    if l.strip():
        assert json.loads(l)["args"]["value"].isdigit()'
}

@test "annotate: C++ RAII scopes end on return, exception and lambda exit" {
	traced -- "$EX/minitrain_cpp" "$D/cpp"
	valid
	annot check "$TRACE" "$TRUTH"
}

@test "annotate: a dlopen'd library's probes are found and attached (-- CMD)" {
	head -c 12345 /dev/urandom >"$D/in.bin"
	mkfifo "$T/in"
	"$DFT" -v -q -o "$TRACE" -- "$EX/dlopen_phase" "$EX/libphase.so" "$D/in.bin" \
		<"$T/in" >>"$TRUTH" 2>"$T/dft.err" &
	DFT_PID=$!
	BG_PIDS+=("$DFT_PID")
	exec 7>"$T/in"
	wait_line "$T/dft.err" "annotations in '.*libphase.so': [1-9]"
	echo go >&7
	exec 7>&-
	await "$DFT_PID"
	expect_eq "tracer status" "$AWAIT_STATUS" 0
	annot check "$TRACE" "$TRUTH"
	expect_eq "preprocess regions" "$(tpy count "$TRACE" --cat data --name preprocess)" 1
}

@test "annotate: -p finds probes in the running processes' libraries; one library, two processes" {
	head -c 1000 /dev/urandom >"$D/a.bin"
	head -c 2000 /dev/urandom >"$D/b.bin"
	mkfifo "$T/a" "$T/b"
	start_bg A sh -c "exec '$EX/dlopen_phase' '$EX/libphase.so' '$D/a.bin' <'$T/a'"
	exec 7>"$T/a"
	start_bg B sh -c "exec '$EX/dlopen_phase' '$EX/libphase.so' '$D/b.bin' <'$T/b'"
	exec 8>"$T/b"
	for _ in $(seq 1500); do [ "$(grep -c '^ready' "$TRUTH")" = 2 ] && break; sleep 0.02; done
	expect_eq "ready processes" "$(grep -c '^ready' "$TRUTH")" 2
	"$DFT" -v -q -o "$TRACE" -p "$A" -p "$B" 2>"$T/dft.err" &
	DFT_PID=$!
	BG_PIDS+=("$DFT_PID")
	wait_line "$T/dft.err" "annotations in '.*libphase.so': [1-9]"
	echo go >&7
	echo go >&8
	exec 7>&- 8>&-
	await "$A" 30
	await "$B" 30
	await "$DFT_PID"
	expect_eq "tracer status" "$AWAIT_STATUS" 0
	expect_eq "library attached once" "$(grep -c "annotations in '.*libphase.so'" "$T/dft.err")" 1
	annot check "$TRACE" "$TRUTH"
	expect_eq "regions of A" "$(tpy count "$TRACE" --pid "$A" --cat data --name preprocess)" 1
	expect_eq "regions of B" "$(tpy count "$TRACE" --pid "$B" --cat data --name preprocess)" 1
}

@test "annotate: unbalanced annotations are repaired, flagged, and the trace nests" {
	traced -- "$WL/annotate" "$D"
	valid
	annot unbalanced "$TRACE" "$TRUTH"
}
