#!/usr/bin/env bats
# --steps W:U:A[:R[:S]]: only the active steps' I/O is in the trace,
# exactly; the kernel drops the rest, yet fds opened outside the window
# are still named; the trace says which steps it covers.

load lib/common

# active_truth SPEC: the workload's io records of its active steps
active_truth() {
	"$PY" - "$1" "$TRUTH" <<-'EOF'
	import sys
	w, u, a, r, s = (list(map(int, sys.argv[1].split(":"))) + [0, 0])[:5]
	def active(n):
	    if n < s:
	        return False
	    k = n - s
	    if r and k // (w + u + a) >= r:
	        return False
	    return k % (w + u + a) >= w + u
	step = 0  # before the first annotation it is step 0, as in torch
	for line in open(sys.argv[2]):
	    f = line.rstrip("\n").split("\t")
	    if f[0] == "step":
	        step = int(f[1])
	    elif f[0] == "io" and active(step):
	        print(line, end="")
	EOF
}

@test "steps: exactly the active steps' bytes are in the trace, files opened before still named" {
	traced --steps 1:1:2:2:1 -- "$WL/steps" "$D" 12
	valid
	active_truth 1:1:2:2:1 >"$T/active.tsv"
	# skip 1, wait 1, warm up 1, record 2, twice: steps 3, 4, 7 and 8
	expect_eq "active steps' records" "$(grep -c . "$T/active.tsv")" 8
	tpy truth-bytes "$T/active.tsv" --by path,name --under "$D" >"$T/want"
	tpy bytes "$TRACE" --by path,name --under "$D" >"$T/got"
	diff "$T/want" "$T/got"
	# the opens and closes were outside every window: applied, not written
	run tpy events "$TRACE" --under "$D" --name open,close
	[ -z "$output" ]
}

@test "steps: regions of inactive steps are not written; start and end say the schedule and the steps covered" {
	traced --steps 1:1:2:2:1 -- "$WL/steps" "$D" 12
	run tpy events "$TRACE" --cat compute --name step --fields args.step
	expect_eq "compute.step regions" "$(echo $output)" "3 4 7 8"
	zcat -f "$TRACE" | grep '"name":"start"' | grep -q '"steps":"1:1:2:2:1"'
	zcat -f "$TRACE" | grep '"name":"end"' | grep -q '"steps":"1:1:2:2:1","steps_active":"3-4,7-8"'
}

@test "steps: without --steps every step's I/O is there" {
	traced -- "$WL/steps" "$D" 6
	check_truth --under "$D"
}

@test "steps: with -D each process's file says the steps it covers" {
	dft -q --steps 0:0:1:1 -D "$T/out" -- "$WL/steps" "$D" 3
	[ "$DFT_STATUS" = 0 ]
	zcat -f "$T"/out/*.pfw.gz | grep '"name":"end"' | grep -q '"steps_active":"0"'
	# step 0 from the start (no annotation yet is step 0): its opens too
	run tpy bytes "$T/out" --by name --under "$D"
	expect_eq "step 0 alone" "$output" "$(printf 'open\t3\t0\npread\t1\t1000\npwrite\t1\t1000')"
}

@test "steps: a bad --steps is a usage error" {
	for bad in 1:1 1:1:0 a:b:c 1:1:1:1:1:1 -1:0:1 "1:1:1 " 1:1:1: 1:1:1:1:1: 1:1:1::; do
		run "$DFT" --steps "$bad" -- true
		[ "$status" = 64 ]
		[[ "${lines[0]}" == "dftrace-bpf: invalid --steps '$bad'"* ]]
	done
}

@test "steps: a program that never sets a step is in step 0: the end says steps_active \"0\" when step 0 is active" {
	traced --steps 0:0:1 -- "$WL/util" exit 0
	valid
	zcat -f "$TRACE" | grep '"name":"end"' | grep -q '"steps":"0:0:1:0:0","steps_active":"0"' ||
		{ zcat -f "$TRACE" | grep '"name":"end"' | sed 's/^/#   /'; return 1; }
	# and one whose step 0 is not active covers none
	traced --steps 1:0:1 -- "$WL/util" exit 0
	zcat -f "$TRACE" | grep '"name":"end"' | grep -q '"steps_active":""'
}
