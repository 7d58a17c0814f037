#!/usr/bin/env bats
# make bench's own tools, where a figure rests on what they do: the
# driver of sides that take turns (tests/bench/turns.py) writes every
# turn once, in the blocks and the order it says, each block in new
# processes, and ends what it started when a side fails.

load lib/common

TURNS="$ROOT/tests/bench/turns.py"
LOOP="$ROOT/build/bench/ioloop"

@test "bench turns: every turn of every block written once, sides in rotated order, a block's processes new" {
	head -c 65536 /dev/zero >"$D/data"
	run "$PY" "$TURNS" "$T/out" 2 0 2 3 \
		"a=strace -f -qq -e trace=clone,fork,vfork -o $T/a.st $LOOP turns $D/data 100" \
		"b=$LOOP turns $D/data 100"
	[ "$status" -eq 0 ]
	# 2 epochs of 2 blocks of 3 rounds, a turn of each side a round
	[ "$(wc -l <"$T/out")" -eq 24 ]
	for blk in 0 1 2 3; do
		[ "$(awk -v b=$blk '$3 == b && $1 == "a"' "$T/out" | wc -l)" -eq 3 ]
		[ "$(awk -v b=$blk '$3 == b && $1 == "b"' "$T/out" | wc -l)" -eq 3 ]
	done
	# round r begins with side r mod 2; each turn's time is a count of ns
	[ "$(awk 'NR % 2 == 1 { print $1 }' "$T/out" | tr -d '\n')" = abababababab ]
	awk '$2 !~ /^[0-9]+$/ || $2 == 0 { exit 1 }' "$T/out"
	# side a's blocks: one new process each, in each of its 2 epochs (the
	# second epoch's strace overwrote the first's file)
	[ "$(grep -cE '^[0-9]+ +(clone|fork|vfork)' "$T/a.st")" -eq 2 ]
	! pgrep -f "turns $D/data" >/dev/null
}

@test "bench turns: a side that does not start ends the run non-zero, its other sides ended" {
	head -c 65536 /dev/zero >"$D/data"
	run "$PY" "$TURNS" "$T/out" 1 0 1 1 "a=$LOOP turns $D/data 100" "b=$LOOP turns $D/missing 100"
	[ "$status" -eq 1 ]
	[[ "$output" == *"side 'b' did not start"* ]]
	! pgrep -f "turns $D/data" >/dev/null
	[ ! -s "$T/out" ]
}

@test "bench exec-turns: each turn one whole run of the command, its output kept off the driver's" {
	run "$PY" "$TURNS" "$T/out" 1 0 2 2 \
		"a=$LOOP exec-turns sh -c 'echo run >>$T/a.runs; echo noise'" \
		"b=$LOOP exec-turns sh -c 'echo run >>$T/b.runs'"
	[ "$status" -eq 0 ]
	# 2 blocks of 2 rounds: 4 turns a side, each one run
	[ "$(wc -l <"$T/out")" -eq 8 ]
	[ "$(wc -l <"$T/a.runs")" -eq 4 ]
	[ "$(wc -l <"$T/b.runs")" -eq 4 ]
	run "$PY" "$TURNS" "$T/out2" 1 0 1 1 "a=$LOOP exec-turns false"
	[ "$status" -eq 1 ]
	[[ "$output" == *"'false' failed"* ]]
}
