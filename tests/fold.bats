#!/usr/bin/env bats
# Calls folded into totals in the kernel: under overload (a ring buffer
# too small to hold the records) and always under --profile. Every byte
# and every call is still in the trace, in events DFAnalyzer reads, in
# the file and phase the full trace would give them.

load lib/common

LOOP="$ROOT/build/bench/ioloop"

# calls_bytes TRACE PATH: "CALLS BYTES" of the pread events on PATH, a
# folded event counting its calls; and the hists' total, which must be CALLS
calls_bytes() {
	tpy events "$1" --path "$2" --name pread --fields args.calls,args.ret,args.hist |
		awk -F'\t' '{ c = $1 == "-" ? 1 : $1; calls += c; bytes += $2
			n = split($3, h, /[ :]/); for (i = 2; i <= n; i += 2) hist += h[i]
			if ($1 == "-") hist += 1 }
			END { print calls, bytes, hist }'
}

@test "overload: a ring buffer too small loses no byte and no call: the kernel folds what found no room" {
	head -c 1048576 /dev/urandom >"$D/f"
	traced -b 16K -- "$LOOP" pread "$D/f" 200000
	valid
	# some calls came folded: the smallest buffer, 16 KiB, held ~250 records
	run tpy events "$TRACE" --name pread --fields args.folded
	[[ "$output" == *overload* ]]
	# the loop's preads (ld.so's are of its libraries), whatever their fd
	# was named: the open of f may itself find no room on a loaded
	# machine, and is then counted lost, and f's fd named after nothing
	run tpy events "$TRACE" --name pread --fields args.calls,args.ret,args.hist,path
	expect_eq "calls, bytes, histogram total" "$(awk -F'\t' '$4 !~ /^\/(lib|usr)\// {
			c = $1 == "-" ? 1 : $1; calls += c; bytes += $2
			n = split($3, h, /[ :]/); for (i = 2; i <= n; i += 2) hist += h[i]
			if ($1 == "-") hist += 1 }
			END { print calls, bytes, hist }' <<<"$output")" \
		"200000 $((200000 * 4096)) 200000"
	run tpy lost "$TRACE" --op open
	if [ "${output:-0}" = 0 ]; then
		expect_eq "calls, bytes, histogram total on f" "$(calls_bytes "$TRACE" "$D/f")" \
			"200000 $((200000 * 4096)) 200000"
		run tpy dfa-bytes "$TRACE" --path "$D/f"
		expect_eq "DFAnalyzer's bytes" "$output" "$(printf '%s\t%d' "$D/f" $((200000 * 4096)))"
	fi
	# folding is not loss: the end event counts none for pread
	run tpy lost "$TRACE" --op pread
	expect_eq "lost preads" "${output:-0}" 0
}

@test "overload: the workload's own records still add up: every byte it read and wrote, by DFAnalyzer's count too" {
	traced -b 16K -- "$WL/steps" "$D" 40
	want=$(tpy truth-bytes "$TRUTH" --by name --under "$D" --name pread,pwrite | cut -f1,3)
	pid=$(awk -F'\t' '$1 == "io" { print $3; exit }' "$TRUTH")
	# by the process, whatever file an fd was named as: an open whose
	# record and name both found no room leaves its fd named from /proc
	# (but ld.so's reads of the libraries)
	run tpy events "$TRACE" --pid "$pid" --name pread,pwrite --fields name,args.ret,path
	expect_eq "bytes per op" "$(awk -F'\t' '$3 !~ /^\/(lib|usr)\// { b[$1] += $2 }
		END { for (n in b) printf "%s\t%d\n", n, b[n] }' <<<"$output" | sort)" "$want"
	run tpy dfa-bytes "$TRACE" --pid "$pid" --name pread,pwrite
	expect_eq "DFAnalyzer's bytes" "$(grep -v -P '^/(lib|usr)/' <<<"$output" | cut -f2 | awk '{ s += $1 } END { print s }')" \
		"$(cut -f2 <<<"$want" | awk '{ s += $1 } END { print s }')"
}

@test "overload: what can't be folded still finds room: forks, execs, exits and mapped pages beside two floods of calls" {
	require_feature mmap_read mmap_write
	head -c 1048576 /dev/urandom >"$D/f"
	# the tracer stopped while they run: the ring fills and is not read,
	# whatever the machine's load, so that what can't be folded has only
	# the ring's kept end (an eighth of it) to go to
	stopped_while done -b 1048576 -o "$TRACE" -- "$WL/util" gated sh -c "
		\"$LOOP\" lseek \"$D/f\" 1000000 >/dev/null &
		\"$LOOP\" lseek \"$D/f\" 1000000 >/dev/null & \"$WL/mapped\" \"$D\"; wait"
	finish_stopped
	# the floods overflowed the ring: their calls came folded
	run tpy events "$TRACE" --name lseek --fields args.folded
	[[ "$output" == *overload* ]]
	# and nothing else was lost: every process, every mapped page
	run tpy lost "$TRACE" --total
	expect_eq "records lost" "$output" 0
	read -r _ _ _ pages _ <<<"$(grep -P '^mpass\t.*\t1\t' "$TRUTH")"
	run tpy bytes "$TRACE" --by name --path "$D/scan" --name mmap_read
	expect_eq "read through the mapping, two passes" "$output" "$(printf 'mmap_read\t2\t%d' $((2 * pages * 4096)))"
	run tpy bytes "$TRACE" --by name --path "$D/dirty" --name mmap_write
	expect_eq "dirtied" "$output" "$(printf 'mmap_write\t1\t65536')"
	# util, sh and the three programs sh started: each exec'd and exited
	run tpy events "$TRACE" --cat PROC --fields name
	expect_eq "execs, exits" "$(grep -cx exec <<<"$output") $(grep -cx exit <<<"$output")" "5 5"
}

@test "profile: one total per file and op, every byte, every call, no events one by one" {
	head -c 1048576 /dev/urandom >"$D/f"
	traced --profile -- "$LOOP" pread "$D/f" 50000
	valid
	expect_eq "calls, bytes, histogram total" "$(calls_bytes "$TRACE" "$D/f")" \
		"50000 $((50000 * 4096)) 50000"
	run tpy events "$TRACE" --path "$D/f" --name pread --fields args.folded
	expect_eq "all folded" "$(sort -u <<<"$output")" profile
}

@test "profile: summary's min, max, p50 and p99 of the totals are their log2 buckets' bounds and middles, marked" {
	head -c 1048576 /dev/urandom >"$D/f"
	traced --profile -- "$LOOP" pread "$D/f" 50000
	valid
	tpy events "$TRACE" --path "$D/f" --name pread --json \
		--fields args.hist,args.calls,dur,args.ns10d >"$T/totals"
	"$DFT" summary -q --json --by file,op "$TRACE" >"$T/s.json"
	# each total's buckets as summary reads them: [2^b, 2^(b+1)), bucket 0
	# from 0, none longer than the total, its average inside
	"$PY" -c '
import json, sys
lo, hi, mids = [], [], []
for t in map(json.loads, open(sys.argv[1])):
    dur = t["args.ns10d"] // 100 * 10 if t["args.ns10d"] is not None else t["dur"] * 1000
    avg, bs = dur // t["args.calls"], []
    for b, n in (map(int, x.split(":")) for x in t["args.hist"].split()):
        f, to = (1 << b if b else 0), min((2 << b) - 1 if b < 31 else dur, dur)
        f = min(f, to)
        bs.append((f, to))
        mids += [f + (to - f) // 2] * n
    lo.append(min(bs[0][0], avg))
    hi.append(max(bs[-1][1], avg))
mids.sort()
row = [r for r in json.load(open(sys.argv[2]))["groupings"][0]["rows"]
       if r["file"] == sys.argv[3] and r["op"] == "pread"][0]
assert row["calls"] == len(mids) == 50000, row
assert (row["min_ns"], row["max_ns"]) == (min(lo), max(hi)), (row, min(lo), max(hi))
for q, rank in (("p50_ns", 25000), ("p99_ns", 49500)):
    assert abs(row[q] - mids[rank - 1]) <= 0.008 * mids[rank - 1], (q, row, mids[rank - 1])
assert row["from_log2"] == ["min_ns", "max_ns", "p50_ns", "p99_ns"], row
' "$T/totals" "$T/s.json" "$D/f"
}

# The totals of MODE (--profile's; --flight's, which user space folds
# from what the kernel sent) against the full trace, bytes per file, op
# and phase.
totals_by_phase() {
	traced -- "$WL/steps" "$D" 6
	tpy bytes "$TRACE" --by path,name,args.phase_cat,args.phase --under "$D" | cut -f1-4,6 >"$T/full"
	traced "$@" -- "$WL/steps" "$D" 6
	valid
	tpy bytes "$TRACE" --by path,name,args.phase_cat,args.phase --under "$D" | cut -f1-4,6 >"$T/prof"
	diff "$T/full" "$T/prof"
	# the step files' reads and writes were in compute.step
	grep -qP "step-03.dat\tpread\tcompute\tstep\t1003" "$T/prof"
	run tpy events "$TRACE" --under "$D" --fields args.folded
	expect_eq "every event a total" "$(sort -u <<<"$output")" profile
}

@test "profile: bytes per file, op and phase equal the full trace's" {
	totals_by_phase --profile=0.05
}

@test "flight: the totals' bytes per file, op and phase equal the full trace's" {
	totals_by_phase --flight 30 --profile=0.05
}

@test "profile: a bad interval is a usage error" {
	for bad in 0 -1 abc 1x 100000; do
		run "$DFT" --profile="$bad" -- true
		[ "$status" = 64 ]
		[[ "${lines[0]}" == "dftrace-bpf: invalid --profile interval '$bad'"* ]]
	done
}

@test "profile: an fd that exec closed and the new program's first call opens again is charged to the new file" {
	head -c 1000 /dev/urandom >"$D/a.dat"
	head -c 1000 /dev/urandom >"$D/b.dat"
	# a thread's total remembers the file its fd named; the exec closes
	# the O_CLOEXEC fd of a.dat, and rawopen (no libc) opens b.dat first
	# thing, with the same fd number: the total must look it up again
	traced --profile=600 -- "$WL/io" exec-reuse "$D"
	valid
	run tpy events "$TRACE" --under "$D" --fields path,name,args.calls,args.ret
	expect_eq "totals under $D" "$(sort <<<"$output" | sed "s|$D/||")" "$(printf '%s\n' \
		"a.dat	open	1	-" "a.dat	pread	3	33" "b.dat	open	1	-" "b.dat	pread	3	300")"
}

# Calls of three files taking turns under MODE: one total each per file
# and op.
totals_taking_turns() {
	for f in a b c; do head -c 5000 /dev/urandom >"$D/$f"; done
	traced "$@" -- "$PY" -c 'import os, sys
for _ in range(300):
    for f in sys.argv[1:]:
        fd = os.open(f, os.O_RDONLY)
        os.read(fd, 1000)
        os.pread(fd, 2000, 100)
        os.close(fd)' "$D/a" "$D/b" "$D/c"
	valid
	run tpy events "$TRACE" --under "$D" --fields path,name,args.calls,args.ret
	expect_eq "one total per file and op" "$(sort <<<"$output" | sed "s|$D/||")" "$(printf '%s\n' \
		"a	close	300	-" "a	open	300	-" "a	pread	300	600000" "a	read	300	300000" \
		"b	close	300	-" "b	open	300	-" "b	pread	300	600000" "b	read	300	300000" \
		"c	close	300	-" "c	open	300	-" "c	pread	300	600000" "c	read	300	300000")"
}

@test "profile: calls that take turns (open, read, close of three files, again and again) are one total each per file and op" {
	# the kernel sends a thread's total each time its next call is
	# another; user space adds those up until the interval ends (here:
	# the end of the run)
	totals_taking_turns --profile=600
}

@test "flight: calls that take turns are one total each per file and op, folded in user space" {
	# the kernel folds none of the calls it sends; user space adds each
	totals_taking_turns --flight 30 --profile=600
}

# Under MODE, the totals of A.bin, written before any SET_EPOCH, B.bin in
# epoch 1, C.bin in epoch 1 step 7, D.bin in epoch 2 step 7, written at
# the end, when the process is in epoch 2 step 7.
totals_by_position() {
	traced "$@" -- "$WL/position" "$D"
	valid
	want=$(awk -F'\t' '$1 == "pos" { print $2 "\t" $3 "\t" $4 "\t" $5 }' "$TRUTH" | sort)
	run tpy events "$TRACE" --under "$D" --name write --fields path,args.epoch,args.step,args.ret
	expect_eq "write totals by file, epoch, step" "$(sort <<<"$output")" "$want"
	# the summary's grouping reads the same
	run "$DFT" summary --by epoch,file "$TRACE"
	[[ "$output" =~ -[[:space:]]+"$D/A.bin" ]] || { echo "# $output"; false; }
}

@test "profile: a total carries the epoch and step of its calls, not those the process has when it is written" {
	totals_by_position --profile=600
}

@test "flight: a total carries the epoch and step of its calls, as --profile's" {
	totals_by_position --flight 30 --profile=600
}

# Under MODE, 200 pipes made and closed: pipe2 is recorded to keep the fd
# tables right, never written or counted, so the exit's counts of reads
# and closes are the full trace's.
ops_beside_pipes() {
	local prog='import os
for _ in range(200):
    a, b = os.pipe(); os.close(a); os.close(b)'
	dft -o "$TRACE" -- "$PY" -c "$prog"
	expect_eq "exit status" "$DFT_STATUS" 0
	grep -E '^ +(read|close) ' "$T/dft.err" >"$T/full"
	grep -qE "^ +close +4[0-9][0-9] " "$T/full" || { cat "$T/dft.err"; false; }
	dft -o "$TRACE" "$@" -- "$PY" -c "$prog"
	expect_eq "exit status" "$DFT_STATUS" 0
	grep -E '^ +(read|close) ' "$T/dft.err" >"$T/totals"
	diff "$T/full" "$T/totals"
}

@test "profile: the exit's counts of calls are the full trace's: a pipe is no read" {
	ops_beside_pipes --profile
}

@test "flight: the exit's counts of calls are the full trace's" {
	ops_beside_pipes --flight 30
}

@test "overload: an fd-changing call that finds no room is counted lost, never folded, and its fd is no longer named after the old file" {
	head -c 100 /dev/urandom >"$D/A"
	head -c 5000 /dev/urandom >"$D/B"
	# the ring fills and stays full: fd 3 becomes B with no room to say so
	stopped_while mid -b 65536 -o "$TRACE" -- "$WL/fdswap" "$D"
	# the lseeks that found room are in the file: the ring was drained
	tpy wait-for "$TRACE" --pid "$wl" --name lseek --alive "$DFT_PID" --timeout 60
	finish_stopped
	run tpy events "$TRACE" --pid "$wl" --name pread --fields path,args.calls,args.ret
	got=$(awk -F'\t' '{ c = $2 == "-" ? 1 : $2; b[$1] += $3 } END { for (p in b) print p "\t" b[p] }' <<<"$output" | sort)
	# A: its 100 bytes only; B's 5000 on B, or on no file once fd 3 is unknown
	expect_eq "bytes read from A" "$(grep -P "^$D/A\t" <<<"$got" | cut -f2)" 100
	expect_eq "bytes read from B or no file" \
		"$(grep -P "^($D/B|-)\t" <<<"$got" | cut -f2 | awk '{ s += $1 } END { print s }')" 5000
	# each dup2 recorded, or lost and counted: never folded
	run tpy events "$TRACE" --pid "$wl" --name dup2 --fields args.folded
	expect_eq "dup2 folded" "$(grep -vcx -- - <<<"$output")" 0
	lost=$(tpy lost "$TRACE" --op dup2)
	expect_eq "dup2 recorded + lost" "$(( ${#lines[@]} + ${lost:-0} ))" "$(awk -F'\t' '$1 == "dup2" { print $2 }' "$TRUTH")"
}

@test "overload: every call of a fork storm is a record, a total or lost, even where the forks and exits found no room" {
	# 300 children of 50 pwrites each while the ring is full: their
	# forks and exits are lost, their calls folded
	stopped_while done -b 65536 -o "$TRACE" -- "$WL/forkstorm" "$D" 300 50
	finish_stopped
	want=$(awk -F'\t' '$1 == "pwrite" { print $2 }' "$TRUTH")
	run tpy events "$TRACE" --name pwrite --fields args.calls,args.ret
	got=$(awk -F'\t' '{ c += $1 == "-" ? 1 : $1; b += $2 } END { print c + 0, b + 0 }' <<<"$output")
	lost=$(tpy lost "$TRACE" --op pwrite)
	read -r calls bytes <<<"$got"
	expect_eq "pwrites recorded or folded, plus lost" "$((calls + ${lost:-0}))" "$want"
	expect_eq "bytes: one a pwrite not lost" "$bytes" "$calls"
	# the point of the test: some forks found no room
	run tpy lost "$TRACE" --op fork
	[ "${output:-0}" -gt 0 ] || { echo "# no fork record was lost: the ring never filled"; false; }
}
