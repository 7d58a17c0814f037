#!/usr/bin/env bats
# --flight: the run's totals as --profile writes them, and the last
# seconds of every event kept in memory, written out as a standalone trace
# when a trigger fires. tests/workloads/flight plants the incidents and
# reports its I/O and its steps' times (tests/lib/flight.py lines them up).

load lib/common

FPY="$ROOT/tests/lib/flight.py"
fpy() { "$PY" "$FPY" "$@"; }

# dumps: the dump files beside $TRACE, by name
dumps() { (cd "$T" && ls t-flight-*.pfw.gz 2>/dev/null | tr '\n' ' ' | sed 's/ $//'); }

# bytes_exact FILE: FILE holds the workload's I/O under $D exactly, its
# bytes by file and call
bytes_exact() {
	tpy bytes "$1" --by path,name --under "$D" >"$T/got"
	tpy truth-bytes "$TRUTH" --by path,name --under "$D" >"$T/want"
	diff "$T/want" "$T/got"
}

# record DUMP KEY: one field of the dump's flight record (its line alone
# is read: a dump may hold a million events)
record() {
	zcat "$1" | grep -m1 '"name":"flight","cat":"dftracer"' | "$PY" -c '
import json, sys
e = json.loads(sys.stdin.read())
v = dict(e["args"], ts=e["ts"], pid=e["pid"], tid=e["tid"]).get(sys.argv[1])
print("" if v is None else v if isinstance(v, str) else json.dumps(v))' "$2"
}

# totals_exact: the totals file holds every byte of the workload's I/O
# under $D, whatever the dumps hold
totals_exact() {
	bytes_exact "$TRACE"
	# totals, not events: every call folded (by the tracer, the kernel
	# where the ring had no room)
	run tpy events "$TRACE" --under "$D" --fields args.folded
	expect_eq "totals" "$(sort -u <<<"$output")" "profile"
}

# a_dump_reads DUMP: the dump is a trace every reader takes
a_dump_reads() {
	TRACE="$1" valid
	run tpy dfa-bytes "$1" --under "$D"
	[ "$status" = 0 ]
	run "$DFT" summary -q "$1"
	[ "$status" = 0 ] || { echo "# summary: $output"; return 1; }
}

@test "flight: a slow step makes exactly one dump, with its I/O exact, the steps before it in the window, nothing older; totals exact" {
	# 50 ms steps, step 80 stalls 2.5 s more: 10 times the median is
	# far from either, however loaded the machine
	traced --flight 4 --trigger slow-step=10 -- "$WL/flight" steps "$D" 85 80 50 2500
	expect_eq "dumps" "$(dumps)" "t-flight-1-slow-step.pfw.gz"
	dump="$T/t-flight-1-slow-step.pfw.gz"
	expect_eq "reason" "$(record "$dump" reason)" "slow-step"
	expect_eq "step" "$(record "$dump" trigger_step)" 80
	run fpy window "$dump" "$TRUTH" "$D"
	[ "$status" = 0 ] || { echo "$output"; return 1; }
	run fpy older "$dump"
	[ "$status" = 0 ] || { echo "$output"; return 1; }
	a_dump_reads "$dump"
	totals_exact
	grep -q "flight: dump 1 (slow-step, pid [0-9]*, step 80" "$T/dft.err"
	zcat "$TRACE" | grep '"name":"end"' | grep -q '"flight_dumps":1,"flight_skipped":0'
}

@test "flight: no trigger, no dump: only the totals are written" {
	traced --flight 4 --trigger slow-step=10 -- "$WL/flight" steps "$D" 12 -1 20 0
	expect_eq "dumps" "$(dumps)" ""
	totals_exact
}

# hung_dump_holds DUMP: the hanging step's I/O and the steps before (all
# in the window), and the regions the workload wrote to its ring after its
# last call, once each: one ended, one still open
hung_dump_holds() {
	bytes_exact "$1"
	run tpy events "$1" --cat flight --fields name,args.unbalanced
	expect_eq "ring's regions" "$output" "$(printf 'prepare\t-\nwait\topen_at_dump')"
	a_dump_reads "$1"
}

@test "flight: hang: a step that never ends is dumped with its I/O and the regions its ring holds, once each in a later dump" {
	"${DEFAULT_SIGNALS[@]}" "$DFT" -q --flight 20 --trigger hang=1.5 --flight-after 0.5 \
		-o "$TRACE" -- "$WL/flight" hang "$D" 8 30 4000 "$T/release" >>"$TRUTH" 2>"$T/dft.err" &
	DFT_PID=$!
	BG_PIDS+=("$DFT_PID")
	# the hang's dump, before any call of the thread reads its ring
	wait_file "$T/t-flight-1-hang.pfw.gz" 30
	dump="$T/t-flight-1-hang.pfw.gz"
	expect_eq "hanging step" "$(record "$dump" trigger_step)" 8
	hung_dump_holds "$dump"
	# a call read the ring: the kernel side sent those regions again
	wait_line "$TRUTH" "^woke"
	run "$DFT" dump "$DFT_PID"
	[ "$status" = 0 ] || { echo "# dump: $output"; return 1; }
	wait_file "$T/t-flight-2-signal.pfw.gz" 30
	touch "$T/release"
	await "$DFT_PID" 60
	expect_eq "dumps" "$(dumps)" "t-flight-1-hang.pfw.gz t-flight-2-signal.pfw.gz"
	hung_dump_holds "$T/t-flight-2-signal.pfw.gz"
}

@test "flight: slow-io: one 2 s read among 10,000 fast ones is dumped once" {
	n=$(lab_size 5000 500)
	traced --flight 5 --trigger slow-io=1000 -- "$WL/flight" slowio "$D" "$n" 2000
	expect_eq "dumps" "$(dumps)" "t-flight-1-slow-io.pfw.gz"
	dump="$T/t-flight-1-slow-io.pfw.gz"
	dur=$(record "$dump" trigger_dur_ns)
	[ "$dur" -ge 2000000000 ] || { echo "# trigger_dur_ns $dur"; return 1; }
	# the slow read itself, named as its pipe
	run tpy events "$dump" --name read --fields dur,path
	awk -F'\t' '$1 >= 2000000 && $2 ~ /^pipe:/ { n++ } END { exit n != 1 }' <<<"$output"
	# the fast reads after it, all in the dump (the 1 s after)
	run tpy events "$dump" --path "$D/fast.dat" --name pread --fields args.ret
	[ "$(grep -c '^4096$' <<<"$output")" -ge "$n" ]
	a_dump_reads "$dump"
	# the totals: every pread
	run tpy events "$TRACE" --path "$D/fast.dat" --name pread --fields args.folded,args.calls,args.ret
	expect_eq "pread totals" "$(awk -F'\t' '$1 == "profile" { c += $2; b += $3 } END { print c, b }' <<<"$output")" \
		"$((2 * n)) $((2 * n * 4096))"
}

@test "flight: slow-io: an io_uring read that waits 2 s is dumped once, with the requests around it" {
	require_feature io_uring
	traced --flight 5 --trigger slow-io=1000 -- "$WL/uring" slow "$D" 2000
	expect_eq "dumps" "$(dumps)" "t-flight-1-slow-io.pfw.gz"
	dump="$T/t-flight-1-slow-io.pfw.gz"
	dur=$(record "$dump" trigger_dur_ns)
	[ "$dur" -ge 2000000000 ] || { echo "# trigger_dur_ns $dur"; return 1; }
	# the request from its submission to its completion, named as its pipe
	run tpy events "$dump" --name io_uring_read --fields dur,path,args.ret
	awk -F'\t' '$1 >= 2000000 && $2 ~ /^pipe:/ && $3 == 1 { n++ } END { exit n != 1 }' <<<"$output"
	# and every fast one, before it and after (the workload's own count)
	expect_eq "fast reads" "$(awk -F'\t' -v f="$D/u" '$2 == f && $3 == 4096' <<<"$output" | wc -l)" \
		"$(awk -F'\t' '$1 == "io" && $5 == "io_uring_read" && $7 == 4096' "$TRUTH" | wc -l)"
	a_dump_reads "$dump"
}

@test "flight: exit: a child that aborts after writing is dumped with its writes" {
	traced --flight 5 --trigger exit -- sh -c '"$1" abort "$2"; exit 0' sh "$WL/flight" "$D"
	expect_eq "dumps" "$(dumps)" "t-flight-1-exit.pfw.gz"
	dump="$T/t-flight-1-exit.pfw.gz"
	pid=$(awk -F'\t' '$1 == "io" { print $3; exit }' "$TRUTH")
	expect_eq "the dead process" "$(record "$dump" pid)" "$pid"
	bytes_exact "$dump"
	run tpy events "$dump" --pid "$pid" --name exit --fields args.signal
	expect_eq "its exit" "$output" 6
	a_dump_reads "$dump"
	totals_exact
}

@test "flight: SIGUSR1 and 'dftrace-bpf dump PID' dump now; a tracer without --flight is refused and lives on" {
	# the command writes, says so, and waits to be stopped
	"${DEFAULT_SIGNALS[@]}" "$DFT" -q --flight 30 --flight-after 0 -o "$TRACE" -- \
		sh -c '"$1" write - "$2" && touch "$3" && exec sleep 60' sh "$WL/util" "$D" "$T/written" \
		>>"$TRUTH" 2>"$T/dft.err" &
	DFT_PID=$!
	BG_PIDS+=("$DFT_PID")
	wait_file "$T/written" 30
	run "$DFT" dump "$DFT_PID"
	[ "$status" = 0 ] || { echo "# dump: $output"; return 1; }
	wait_file "$T/t-flight-1-signal.pfw.gz" 30
	# a second within the window: said, not written
	kill -USR1 "$DFT_PID"
	wait_line "$T/dft.err" "signal dump skipped: one a window"
	kill -INT "$DFT_PID"
	await "$DFT_PID" 60
	expect_eq "dumps" "$(dumps)" "t-flight-1-signal.pfw.gz"
	dump="$T/t-flight-1-signal.pfw.gz"
	bytes_exact "$dump"
	a_dump_reads "$dump"
	# a tracer without --flight: SIGUSR1 would end it; it is not sent
	"${DEFAULT_SIGNALS[@]}" "$DFT" -q -o "$T/plain.pfw.gz" -p "$$" --pid-file "$T/plain.pid" \
		2>"$T/plain.err" &
	plain=$!
	BG_PIDS+=("$plain")
	wait_file "$T/plain.pid" 30
	run "$DFT" dump "$plain"
	[ "$status" = 1 ]
	[[ "$output" == *"runs without --flight"* ]]
	running "$plain"
	kill -INT "$plain"
	await "$plain" 60
	run "$DFT" dump "$$"
	[ "$status" = 1 ]
	[[ "$output" == *"is not a running dftrace-bpf"* ]]
}

@test "flight: 'dftrace-bpf dump' signals no process SIGUSR1 would end: one named so, with --flight, not catching it yet, lives on; one exited is said so" {
	# what a tracer looks like to dump before it has read its options
	ln -s /usr/bin/python3 "$T/dftrace-bpf"
	"${DEFAULT_SIGNALS[@]}" "$T/dftrace-bpf" -c 'import time; time.sleep(60)' --flight 30 &
	pid=$!
	BG_PIDS+=("$pid")
	# its name, then its command line: env's, before it execs, has
	# --flight too, and the exec names the process before its new
	# command line can be read
	wait_line "/proc/$pid/comm" '^dftrace-bpf$'
	wait_line "/proc/$pid/cmdline" '[-]-flight'
	run "$DFT" dump "$pid"
	[ "$status" = 1 ] || { echo "# dump: $status $output"; return 1; }
	[[ "$output" == *"tracer '$pid' is still starting: ask again in a moment"* ]] ||
		{ echo "# dump: $output"; return 1; }
	running "$pid"
	# one that has exited, its parent yet to reap it: no command line
	# to tell, as mid-exec; said so, not "runs without --flight"
	"${DEFAULT_SIGNALS[@]}" python3 -c 'import ctypes, os, time
pid = os.fork()
if pid == 0:
    ctypes.CDLL(None).prctl(15, b"dftrace-bpf", 0, 0, 0)  # PR_SET_NAME
    os._exit(0)
print(pid, flush=True)
time.sleep(60)' >"$T/zombie" &
	BG_PIDS+=("$!")
	wait_line "$T/zombie" '^[0-9]+$'
	zombie=$(cat "$T/zombie")
	wait_line "/proc/$zombie/stat" '^[0-9]+ [(]dftrace-bpf[)] Z '
	run "$DFT" dump "$zombie"
	[ "$status" = 1 ] || { echo "# dump: $status $output"; return 1; }
	[[ "$output" == *"tracer '$zombie' has exited"* ]] || { echo "# dump: $output"; return 1; }
}

@test "flight: -D: the totals per process, the dumps in DIR, every exec's program named in them" {
	dft -q --flight 5 --trigger exit -D "$T/out" -- sh -c '"$1" abort "$2"; exit 0' sh "$WL/flight" "$D"
	[ "$DFT_STATUS" = 0 ] || { cat "$T/dft.err"; return 1; }
	[ -f "$T/out/flight-1-exit.pfw.gz" ]
	# the exec events' exec_hash have their SH lines (written at the
	# start of each process's file, before the window saw its lines)
	TRACE=$T/out/flight-1-exit.pfw.gz valid
	bytes_exact "$T/out/flight-1-exit.pfw.gz"
	mkdir "$T/totals"
	mv "$T"/out/"$HOSTTAG"-*.pfw.gz "$T/totals/"
	tpy bytes "$T/totals" --by path,name --under "$D" >"$T/got"
	diff "$T/want" "$T/got"
}

@test "flight: rate limits: one dump of a kind a window, --flight-max in all, each said and counted" {
	# ten slow reads 0.3 s apart: the first dumps, the rest fall in its window
	traced --flight 30 --flight-after 0 --trigger slow-io=100 -- sh -c \
		'for i in 1 2 3 4 5 6 7 8 9 10; do sleep 0.2 | cat; done'
	expect_eq "dumps" "$(dumps)" "t-flight-1-slow-io.pfw.gz"
	[ "$(grep -c 'slow-io dump skipped: one a window' "$T/dft.err")" -ge 5 ]
	zcat "$TRACE" | grep '"name":"end"' | grep -q '"flight_dumps":1,"flight_skipped":[1-9]'
	rm -f "$T"/t-flight-*
	traced --flight 1 --flight-after 0 --flight-max 2 --trigger slow-io=100 -- sh -c \
		'for i in 1 2 3 4 5; do sleep 1.2 | cat; done'
	expect_eq "dumps" "$(dumps)" "t-flight-1-slow-io.pfw.gz t-flight-2-slow-io.pfw.gz"
	grep -q 'slow-io dump skipped: --flight-max 2 dumps written' "$T/dft.err"
}

@test "flight: the options: what would do nothing is refused, in one line" {
	for args in "--trigger exit" "--flight-mem 8" "--flight 0" "--flight 5 --trigger slow-io" \
		"--flight 5 --trigger nap=3" "--flight 5 --trigger slow-step=0.5" \
		"--flight 5 --steps 1:1:1" "--flight 5 -o -"; do
		run "$DFT" $args -- true
		[ "$status" = 64 ] || { echo "# $args: status $status: $output"; return 1; }
		[[ "${lines[0]}" == "dftrace-bpf: "* ]] || { echo "# $args: $output"; return 1; }
	done
}

# hwm PID: the process's peak resident memory, kB
hwm() { awk '$1 == "VmHWM:" { print $2 }' "/proc/$1/status"; }

# flood_traced SECONDS OPT...: the tracer on stress flood (-p) for
# SECONDS, then asked for a dump when --flight is among OPT; sets PEAK
# (its VmHWM, kB, after the dump) and stops both.
flood_traced() {
	local secs=$1
	shift
	rm -f "$WL_CTL/ready"
	start_workload "$WL/stress" flood 1
	"${DEFAULT_SIGNALS[@]}" "$DFT" -q -p "$WL_PID" --pid-file "$T/dft.pid" "$@" 2>"$T/dft.err" &
	DFT_PID=$!
	BG_PIDS+=("$DFT_PID")
	wait_file "$T/dft.pid" 30
	sleep "$secs"
	if [[ " $* " == *" --flight "* ]]; then
		"$DFT" dump "$DFT_PID"
		wait_line "$T/dft.err" "flight: dump 1 "
	fi
	PEAK=$(hwm "$DFT_PID")
	kill -INT "$DFT_PID"
	await "$DFT_PID" 60
	[ "$AWAIT_STATUS" = 0 ] || { cat "$T/dft.err"; return 1; }
	kill -USR1 "$WL_PID"
	await "$WL_PID" 30
	rm -f "$T/dft.pid"
}

@test "flight: a 50 s flood under a small --flight-mem: memory within the cap over a full trace's, the dump as long as the cap allows" {
	host_only "a flood sized for the host's memory and rate"
	flood_traced 10 -o "$T/full.pfw.gz"
	full=$PEAK
	rm -f "$T/full.pfw.gz"
	flood_traced 50 --flight 30 --flight-mem 8 -o "$TRACE"
	dump="$T/t-flight-1-signal.pfw.gz"
	echo "# peak RSS: full trace $full kB, --flight 30 --flight-mem 8: $PEAK kB" >&3
	# the cap, and 4 MiB for the lines in hand and the dump's buffers
	[ "$PEAK" -le $((full + 8 * 1024 + 4 * 1024)) ] ||
		{ echo "# peak $PEAK kB over $full + the cap"; return 1; }
	expect_eq "capped" "$(record "$dump" capped)" true
	from=$(record "$dump" window_from)
	to=$(record "$dump" window_to)
	events=$(record "$dump" window_events)
	echo "# the dump: $events events over $(( (to - from) / 1000 )) ms, $(stat -c %s "$dump") bytes" >&3
	# shorter than asked, and yet holding what 8 MiB holds compressed
	[ $((to - from)) -lt 30000000 ] && [ $((to - from)) -gt 0 ]
	[ "$(stat -c %s "$dump")" -gt $((4 * 1024 * 1024)) ]
	# the reader takes it (trace.py would take minutes on 600,000 events)
	run "$DFT" summary -q "$dump"
	[ "$status" = 0 ] || { echo "# summary: $output"; return 1; }
}

@test "flight: --cgroup: an agent's dump holds the cgroup's process" {
	cgroot=/sys/fs/cgroup/unified
	[ -d "$cgroot" ] || cgroot=/sys/fs/cgroup
	[ -f "$cgroot/cgroup.procs" ] || skip "no cgroup v2 hierarchy at $cgroot"
	cg="$cgroot/dft-test-$$-$RANDOM"
	mkdir "$cg"
	"${DEFAULT_SIGNALS[@]}" "$DFT" -q --flight 5 --trigger exit --flight-after 0 -o "$TRACE" \
		--cgroup "$cg" --pid-file "$T/dft.pid" 2>"$T/dft.err" &
	DFT_PID=$!
	BG_PIDS+=("$DFT_PID")
	wait_file "$T/dft.pid" 30
	sh -c 'echo $$ >"$0/cgroup.procs" && exec "$1" abort "$2"' "$cg" "$WL/flight" "$D" >>"$TRUTH" || true
	wait_file "$T/t-flight-1-exit.pfw.gz" 30
	kill -INT "$DFT_PID"
	await "$DFT_PID" 60
	rmdir "$cg"
	bytes_exact "$T/t-flight-1-exit.pfw.gz"
	totals_exact
}

@test "flight: names stay bounded: 20,000 files under --flight-mem 1 keep a few of their names, and every event in the dump is named" {
	n=$(lab_size 20000 3000)
	dft -q -o "$TRACE" --flight 30 --flight-mem 1 --trigger exit -- \
		sh -c '"$1" files "$2" "$3"; exit 1' sh "$WL/flight" "$D" "$n"
	expect_eq "status (the command's)" "$DFT_STATUS" 1
	dump="$T/t-flight-1-exit.pfw.gz"
	TRACE="$dump" valid
	# every file event has its name; far fewer names than files are kept
	"$PY" - "$dump" "$n" "$ROOT/tests/lib" <<-'EOF'
	import sys
	sys.path.insert(0, sys.argv[3])
	from trace import Trace
	t = Trace.load(sys.argv[1])
	named = [e for e in t.xevents if (e.get("args") or {}).get("fhash")]
	unnamed = [e for e in named if t.path(e) is None]
	files = {t.path(e) for e in named if "/f0" in (t.path(e) or "")}
	print("# %d file events, %d names, %d unnamed" % (len(named), len(t.fh), len(unnamed)))
	assert named and not unnamed, unnamed[:3]
	assert 0 < len(files) < int(sys.argv[2]), len(files)
	EOF
}

@test "flight: I/O through a mapping (fio mmap) is in the totals as --profile writes it, and in the dump, named" {
	require_feature mmap_read
	[ -x /usr/bin/fio ] || skip "needs fio (scripts/install-deps)"
	head -c 1048576 /dev/urandom >"$D/f"
	dft -q -o "$TRACE" --flight 30 --trigger exit -- sh -c '"$@"; exit 1' sh /usr/bin/fio \
		--name=j --filename="$D/f" --size=1M --bs=4k --rw=read --ioengine=mmap \
		--output-format=json --output="$T/fio.json"
	expect_eq "status (the command's)" "$DFT_STATUS" 1
	want=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["jobs"][0]["read"]["io_bytes"])' \
		"$T/fio.json")
	expect_eq "fio's bytes" "$want" 1048576
	for f in "$TRACE" "$T/t-flight-1-exit.pfw.gz"; do
		TRACE="$f" valid
		run tpy bytes "$f" --by name --path "$D/f" --name mmap_read
		expect_eq "mmap_read bytes on $D/f in $(basename "$f")" "$(cut -f3 <<<"$output")" "$want"
	done
}
