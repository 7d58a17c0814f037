#!/usr/bin/env bats
# The threads' region rings (include/dftrace/usdt.h) under programs that
# use them as a careless or hostile program would: processes sharing
# memory, signal handlers, forged records, names the tracer must read
# later. tests/workloads/rings.c prints what each trace must show.

load lib/common

ANNOT="$ROOT/tests/lib/annot.py"

annot() {
	run "$PY" "$ANNOT" "$@"
	if [ "$status" != 0 ]; then
		echo "# annot.py $* failed:"
		printf '%s\n' "$output" | head -20 | sed 's/^/#   /'
		return 1
	fi
}

@test "rings: a clone(CLONE_VM) child never drains its parent's ring: the parent's regions are its own, the child's writes in none" {
	traced -- "$WL/rings" "$D" clonevm 200000
	valid
	expect_eq "parent.work" "$(tpy count "$TRACE" --cat parent --name work)" 200000
	annot check "$TRACE" "$TRUTH"
}

@test "rings: a signal handler's regions while its thread writes the ring: every one of both, in order" {
	traced -- "$WL/rings" "$D" signals 300000
	valid
	grep -qE '^rings: [1-9][0-9]* handler regions$' "$T/dft.err"
	expect_eq "main.loop" "$(tpy count "$TRACE" --cat main --name loop)" 300000
	annot check "$TRACE" "$TRUTH"
}
