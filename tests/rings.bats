#!/usr/bin/env bats
# The threads' region rings (include/dftrace/usdt.h) under programs that
# use them as a careless or hostile program would: processes sharing
# memory, signal handlers, forged records, names the tracer must read
# later. tests/workloads/rings.c prints what each trace must show.

load lib/common

setup() {
	common_setup
	require_feature annotations region_rings
}

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
	local n
	n=$(lab_size 20000 5000)
	traced -- "$WL/rings" "$D" clonevm "$n"
	valid
	expect_eq "parent.work" "$(tpy count "$TRACE" --cat parent --name work)" "$n"
	annot check "$TRACE" "$TRUTH"
}

@test "rings: a signal handler's regions while its thread writes the ring: every one of both, in order" {
	local n
	n=$(lab_size 30000 3000)
	traced -- "$WL/rings" "$D" signals "$n"
	valid
	grep -qE '^rings: [1-9][0-9]* handler regions$' "$T/dft.err"
	expect_eq "main.loop" "$(tpy count "$TRACE" --cat main --name loop)" "$n"
	annot check "$TRACE" "$TRUTH"
}

@test "rings: a record a handler's region interrupted, read before its thread timed it again, ends after the handler's region" {
	traced -- "$WL/rings" "$D" interrupted
	valid
	expect_eq "handler" "$(tpy count "$TRACE" --cat signal --name handler)" 1
	expect_eq "handler's level" "$(zcat "$TRACE" | grep -c '"name":"handler","cat":"signal".*"level":2,')" 1
	annot check "$TRACE" "$TRUTH"
}

@test "rings: records with forged times (146 years ahead, before their thread began) are dropped, counted, and the trace reads" {
	dft -o "$TRACE" -- "$WL/rings" "$D" times
	expect_eq "status" "$DFT_STATUS" 0
	valid
	grep -qxF '  of which region records dropped: 4 (their times, from a thread'"'"'s ring, out of order or ahead of the clock)' "$T/dft.err" ||
		{ grep -i lost "$T/dft.err" | sed 's/^/#   /'; return 1; }
	expect_eq "forged regions" "$(tpy count "$TRACE" --cat forged)" 0
	expect_eq "the trace's count" "$(zcat "$TRACE" | grep -c '"name":"lost_events".*"args":{"name":"ring_bad_time","value":4}')" 1
	annot check "$TRACE" "$TRUTH"
	"$DFT" summary "$TRACE" >"$T/summary" 2>"$T/summary.err" || { sed 's/^/#   /' "$T/summary.err"; return 1; }
}

@test "rings: a name read from a process's memory after it is gone is never read from another that took its pid" {
	local gpid
	"$DFT" -q -o "$TRACE" -- "$WL/rings" "$D" stale >>"$TRUTH" 2>"$T/dft.err" &
	DFT_PID=$!
	BG_PIDS+=("$DFT_PID")
	wait_file "$WL_CTL/mapped" 60
	# a consumer behind its ring: the record waits while the pid changes hands
	kill -STOP "$DFT_PID"
	touch "$WL_CTL/go"
	wait_file "$WL_CTL/reaped" 60
	gpid=$(cat "$WL_CTL/reaped")
	"$WL/rings" "$D" impostor "$gpid" 2>>"$T/bg.err" ||
		{ kill -CONT "$DFT_PID"; touch "$WL_CTL/done"; sed 's/^/#   /' "$T/bg.err"; return 1; }
	BG_PIDS+=("$gpid")
	expect_eq "the impostor's pid" "$(cat "$WL_CTL/impostor")" "$gpid"
	kill -CONT "$DFT_PID"
	touch "$WL_CTL/done"
	await "$DFT_PID"
	expect_eq "status" "$AWAIT_STATUS" 0
	valid
	# the region is there, its name unknown, and nothing of the other
	expect_eq "the child's regions" "$(tpy events "$TRACE" --pid "$gpid" --cat '' --fields name | wc -l)" 1
	! zgrep -q SECRET_OF_ANOTHER "$TRACE"
}

@test "rings: at -p's stop, the regions a running thread wrote since its last syscall are read from its ring" {
	start_workload "$WL/rings" "$D" live 1000
	attach -q
	kill -USR1 "$WL_PID"
	wait_file "$WL_CTL/spun" 60
	kill -INT "$DFT_PID"
	await "$DFT_PID"
	expect_eq "tracer status" "$AWAIT_STATUS" 0
	kill -USR1 "$WL_PID"
	await "$WL_PID" 60
	valid
	expect_eq "spin.work" "$(tpy count "$TRACE" --cat spin --name work)" 1000
	annot check "$TRACE" "$TRUTH"
}

@test "rings: regions with 20,000 distinct computed names: every one in the trace as named, and the exit summary totals those past 10,000 as one" {
	host_only "the summary's bound on names; a ring's computed name is read in the guest by the pid-reuse test"
	local more other
	dft -o "$TRACE" -- "$WL/rings" "$D" names 20000
	expect_eq "status" "$DFT_STATUS" 0
	valid
	expect_eq "regions" "$(tpy count "$TRACE" --cat data)" 20000
	expect_eq "distinct names" "$(tpy events "$TRACE" --cat data --fields name | sort -u | wc -l)" 20000
	annot check "$TRACE" "$TRUTH"
	# 40 rows by name, a line for the rest by name, and one for the others
	more=$(sed -n 's/^  (\([0-9]*\) more phases: dftrace-bpf summary --by phase)$/\1/p' "$T/dft.err")
	other=$(awk '$1 == "(other" && $2 == "names)" { print $3 }' "$T/dft.err")
	[ -n "$more" ] && [ -n "$other" ] || { sed -n '/phase (cat/,/lost events/p' "$T/dft.err" | head -50 | sed 's/^/#   /'; return 1; }
	expect_eq "regions by name and in other names" "$((40 + more + other))" 20000
	[ "$((40 + more))" -le 10000 ]
	grep -qxF '  (names past the first 10000 are totalled as one; the trace has each region as named)' "$T/dft.err"
}
