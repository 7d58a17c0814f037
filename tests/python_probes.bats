#!/usr/bin/env bats
# CPython's own USDT probes (Debian's /usr/bin/python3.11 has them): GC runs
# and module imports become regions in cat "python", without touching the
# script.

load lib/common

PY=/usr/bin/python3.11

@test "python probes: gc.collect() and an import are regions with their args" {
	[ -x "$PY" ] && readelf -n "$PY" | grep -q 'Provider: python' || skip "no python3.11 with USDT notes"
	mkfifo "$T/in"
	cat >"$T/s.py" <<'PY'
import gc, sys
sys.stdin.readline()            # the tracer has attached to the interpreter
import colorsys                 # not imported at start-up
print("collected", gc.collect(2))
PY
	"$DFT" -v -q -o "$TRACE" -- "$PY" "$T/s.py" <"$T/in" >>"$TRUTH" 2>"$T/dft.err" &
	DFT_PID=$!
	BG_PIDS+=("$DFT_PID")
	exec 7>"$T/in"
	for _ in $(seq 1500); do grep -q "python3.11': 4 probes attached (python)" "$T/dft.err" && break; sleep 0.02; done
	grep -q "python3.11': 4 probes attached (python)" "$T/dft.err"
	echo go >&7
	exec 7>&-
	await "$DFT_PID"
	expect_eq "tracer status" "$AWAIT_STATUS" 0
	valid
	run tpy events "$TRACE" --cat python --name import --fields args.module --json
	printf '%s\n' "$output" | grep -q '"colorsys"'
	collected=$(awk '/^collected/ {print $2}' "$TRUTH")
	run tpy events "$TRACE" --cat python --name gc --fields args.generation,args.collected
	printf '%s\n' "$output" | grep -qx "2	$collected"
}
