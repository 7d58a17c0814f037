#!/usr/bin/env bats
# -p PID: attach to a running process tree; stop conditions and signals;
# loss accounting; processes outside the traced tree stay out.

load lib/common

@test "attach: pre-existing fds, threads, child and grandchild are named and counted; new thread and child followed" {
	start_workload "$WL/attach" attach "$D"
	attach -q
	finish_attached
	valid
	check_truth --under "$D"
}

@test "attach: the tracer stops by itself when the attached tree exits, exit status 0" {
	start_workload "$WL/util" wait
	attach -q
	kill -USR1 "$WL_PID"
	await "$WL_PID" 30
	expect_eq "workload status" "$AWAIT_STATUS" 0
	await "$DFT_PID" 30
	expect_eq "tracer status" "$AWAIT_STATUS" 0
	valid
}

@test "attach: a process outside the traced tree is never traced (-p)" {
	start_bg NOISE "$WL/util" noise "$T/noise.dat"
	wait_file "$WL_CTL/noise_ready"
	start_workload "$WL/attach" attach "$D"
	attach -q
	finish_attached
	running "$NOISE"
	kill -TERM "$NOISE"
	await "$NOISE" 10
	valid
	expect_eq "events of the noise pid" "$(tpy count "$TRACE" --pid "$NOISE")" 0
	expect_eq "events on the noise file" "$(tpy count "$TRACE" --path "$T/noise.dat")" 0
	run tpy paths "$TRACE"
	! printf '%s\n' "$output" | grep -qF "\"$T/noise.dat\""
	check_truth --under "$D"
}

@test "noise: a process outside the traced tree is never traced (-- CMD)" {
	start_bg NOISE "$WL/util" noise "$T/noise.dat"
	wait_file "$WL_CTL/noise_ready"
	traced -- "$WL/proc" tree "$D"
	running "$NOISE"
	kill -TERM "$NOISE"
	await "$NOISE" 10
	expect_eq "noise exit status" "$AWAIT_STATUS" 0
	iters=$(awk -F'\t' '$1=="noise" {print $3}' "$TRUTH")
	[ "$iters" -gt 100 ]
	expect_eq "events of the noise pid" "$(tpy count "$TRACE" --pid "$NOISE")" 0
	expect_eq "events on the noise file" "$(tpy count "$TRACE" --path "$T/noise.dat")" 0
	check_truth --under "$D"
}

# lossy_attach -o|-D: attach with the smallest ring buffer (16 KiB) to
# the loss workload (LOSS_N reads: 50000, 10000 in the lab), writing
# $TRACE, or the directory $T/dir whose file for the workload becomes
# LOSSY; wait until that file shows the workload, let it finish. PARENT
# is the workload's parent.
lossy_attach() {
	local out="$TRACE"
	LOSS_N=$(lab_size 50000 10000)
	start_workload "$WL/attach" loss "$D" "$LOSS_N"
	PARENT=$(awk '{print $4}' "/proc/$WL_PID/stat")
	LOSSY="$TRACE"
	if [ "$1" = -D ]; then
		out="$T/dir"
		LOSSY="$T/dir/$HOSTTAG-attach-$WL_PID.pfw.gz"
	fi
	"${DEFAULT_SIGNALS[@]}" "$DFT" -b 16K "$1" "$out" -p "$WL_PID" 2>"$T/dft.err" &
	DFT_PID=$!
	BG_PIDS+=("$DFT_PID")
	tpy wait-for "$LOSSY" --pid "$WL_PID" --alive "$DFT_PID" --timeout 30
	finish_attached
	TRACE="$LOSSY" valid
}

# expect_exact_loss FILE: the reads in events (a folded total counting
# its calls) + lost reads == reads made, and some were folded (the ring was
# too small); the end event's total, the lost_events lines and the summary
# agree.
expect_exact_loss() {
	local n got folded lost total sum summary
	n=$(awk -F'\t' '$1=="count" && $2=="read" {print $3}' "$TRUTH")
	expect_eq "reads made" "$n" "$LOSS_N"
	got=$(tpy events "$1" --name read --pid "$WL_PID" --fields args.calls |
		awk '{ s += $1 == "-" ? 1 : $1 } END { printf "%d", s }')
	folded=$(tpy events "$1" --name read --pid "$WL_PID" --fields args.folded,args.calls |
		awk '$1 == "overload" { s += $2 } END { printf "%d", s }')
	lost=$(tpy lost "$1" --op read)
	echo "# reads in events $got (folded $folded), lost read events ${lost:-0}"
	[ "$folded" -gt 0 ]
	expect_eq "reads in events + lost reads" "$((got + ${lost:-0}))" "$n"
	total=$(tpy lost "$1" --total)
	tpy lost "$1" | sed 's/^/# lost_events: /'
	sum=$(tpy lost "$1" | awk -F'\t' '{s += $2} END {printf "%d", s}')
	expect_eq "end args.lost vs sum of lost_events" "$total" "$sum"
	summary=$(sed -n 's/^lost events: \([0-9]*\).*/\1/p' "$T/dft.err")
	expect_eq "summary 'lost events:'" "$summary" "$total"
	# the start event: what was lost before it (the file opened), no more
	start=$(tpy events "$1" --all --name start --fields args.lost)
	echo "# lost by the start event: $start"
	[ "$start" -ge 0 ] && [ "$start" -le "$total" ]
}

@test "loss: with -b 16K, reads in events (folded totals counting their calls) + lost reads == reads made, some folded" {
	lossy_attach -o
	expect_exact_loss "$LOSSY"
}

@test "loss: -D files: the process's own file holds every read, folded or not, and counts its losses" {
	lossy_attach -D
	expect_exact_loss "$LOSSY"
	# a process found at attach time has its parent from /proc
	ppid=$(zcat "$LOSSY" | grep '"name":"end"' | grep -o '"ppid":[0-9]*')
	expect_eq "ppid" "$ppid" "\"ppid\":$PARENT"
}

@test "attach: a process whose main thread exited early (a zombie leader) is traced until its last thread ends, -- CMD and -p" {
	traced -- "$WL/util" leaderexit "$D"
	valid
	check_truth --under "$D"
	: >"$TRUTH"
	start_workload "$WL/util" leaderexit "$D" wait
	expect_eq "leader state" "$(awk '{print $3}' "/proc/$WL_PID/stat")" Z
	attach -q
	finish_attached
	valid
	check_truth --under "$D"
	expect_eq "writes" "$(tpy count "$TRACE" --name write --path "$D/leader.dat")" 5
}

@test "attach: -d 1 stops after the duration, leaves a complete file and the target running" {
	start_workload "$WL/util" wait
	attach -q -d 1
	await "$DFT_PID" 30
	expect_eq "tracer status" "$AWAIT_STATUS" 0
	valid
	running "$WL_PID"
	n=$(tpy count "$TRACE" --pid "$WL_PID")
	[ "$n" -gt 0 ]
}

# -d 1 -- CMD in the background, until CMD's trace is complete and valid:
# CMD runs until SIGUSR1 (up to 60 s), so the trace must be finished well
# before it ends
run_for_1s() {
	"${DEFAULT_SIGNALS[@]}" "$DFT" -q -d 1 -o "$TRACE" -- "$@" >>"$TRUTH" 2>"$T/dft.err" &
	DFT_PID=$!
	BG_PIDS+=("$DFT_PID")
	wait_file "$WL_CTL/ready"
	WL_PID=$(cat "$WL_CTL/ready")
	tpy wait-for "$TRACE" --pid "$WL_PID" --complete --timeout 30
	running "$WL_PID"
	valid
}

# CMD ends; the tracer returns its status
end_cmd() {
	kill -USR1 "$WL_PID"
	await "$DFT_PID" 30
	expect_eq "tracer status (CMD's)" "$AWAIT_STATUS" 0
}

@test "-d 1 with -- CMD: the file is complete after the duration while CMD runs on; then CMD's status" {
	run_for_1s "$WL/util" wait
	end_cmd
}

@test "-d 1: the calls a live thread still keeps to send in a batch are in the trace, exactly" {
	run_for_1s "$WL/util" keep "$D" 3
	# the open, the write and the three preads its truth holds so far
	check_truth --under "$D"
	expect_eq "preads of kept.dat" \
		"$(tpy bytes "$TRACE" --by name --path "$D/kept.dat" --name pread)" $'pread\t3\t303'
	end_cmd
}

signal_test() {
	start_workload "$WL/util" wait
	attach -q
	kill "-$1" "$DFT_PID"
	await "$DFT_PID" 30
	expect_eq "tracer status after SIG$1" "$AWAIT_STATUS" 0
	valid
	n=$(tpy count "$TRACE" --pid "$WL_PID")
	[ "$n" -gt 0 ]
	running "$WL_PID"
}

@test "signals: SIGINT stops the tracer with a complete file" {
	signal_test INT
}

@test "signals: SIGTERM during start-up leaves no temporary file: an error and no trace, or a complete trace" {
	start_workload "$WL/util" wait
	mkdir "$T/out"
	for delay in 0 0.01 0.03 0.06 0.1 0.2; do
		"${DEFAULT_SIGNALS[@]}" "$DFT" -q -o "$T/out/t.pfw" -p "$WL_PID" 2>"$T/dft.err" &
		pid=$!
		BG_PIDS+=("$pid")
		sleep "$delay"
		status=0
		if ! kill -TERM "$pid"; then
			# it ended on its own, the workload still waiting: say why
			wait "$pid" || status=$?
			echo "# after ${delay}s: ended unasked, status $status; stderr:"
			sed 's/^/#   /' "$T/dft.err"
			return 1
		fi
		wait "$pid" || status=$?
		echo "# after ${delay}s: status $status, files: $(ls -A "$T/out" | tr '\n' ' ')"
		if [ "$status" = 0 ]; then
			expect_eq "files" "$(ls -A "$T/out")" t.pfw
			TRACE="$T/out/t.pfw" valid
		elif [ "$status" = 143 ]; then
			# killed before it had set anything up
			expect_eq "files" "$(ls -A "$T/out")" ""
		else
			expect_eq "status" "$status" 1
			is_error_line "$T/dft.err"
			expect_eq "files" "$(ls -A "$T/out")" ""
		fi
		rm -f "$T/out/t.pfw"
	done
}

@test "signals: SIGTERM stops the tracer with a complete file" {
	signal_test TERM
}

@test "signals: SIGHUP stops the tracer with a complete file" {
	host_only "the same handler as SIGTERM's, which the guest runs"
	signal_test HUP
}

@test "signals: started with INT, TERM and USR1 blocked, the tracer still dumps on USR1 and stops on INT; its command keeps that mask" {
	block=(--block-signal=INT,TERM,USR1)
	want=$("${DEFAULT_SIGNALS[@]}" "${block[@]}" grep '^SigBlk' /proc/self/status)
	"${DEFAULT_SIGNALS[@]}" "${block[@]}" "$DFT" -q --flight 30 --flight-after 0 -o "$TRACE" \
		--pid-file "$T/dft.pid" -- sleep 60 2>"$T/dft.err" &
	DFT_PID=$!
	BG_PIDS+=("$DFT_PID")
	wait_file "$T/dft.pid" 30
	for _ in $(seq 500); do
		cmd=$(ps -o pid= --ppid "$DFT_PID" | tr -d ' ')
		[ -z "$cmd" ] || [ "$(cat "/proc/$cmd/comm" 2>/dev/null)" != sleep ] || break
		sleep 0.02
	done
	expect_eq "the command's mask" "$(grep '^SigBlk' "/proc/$cmd/status")" "$want"
	run "$DFT" dump "$DFT_PID"
	[ "$status" = 0 ] || { echo "# dump: $output"; return 1; }
	wait_file "$T/t-flight-1-signal.pfw.gz" 30
	kill -INT "$DFT_PID"
	# the hooks gone, it waits for the command
	wait_line "/proc/$DFT_PID/comm" '^dftrace-bpf-end$'
	kill -KILL "$cmd"
	await "$DFT_PID" 60
	valid
}

@test "signals: SIGTERM to the tracer with -- CMD leaves a complete file" {
	"${DEFAULT_SIGNALS[@]}" "$DFT" -q -o "$TRACE" -- "$WL/util" wait >>"$TRUTH" 2>"$T/dft.err" &
	DFT_PID=$!
	BG_PIDS+=("$DFT_PID")
	wait_file "$WL_CTL/ready"
	WL_PID=$(cat "$WL_CTL/ready")
	tpy wait-for "$TRACE" --pid "$WL_PID" --alive "$DFT_PID" --timeout 30
	kill -TERM "$DFT_PID"
	await "$DFT_PID" 30
	if running "$WL_PID"; then kill -USR1 "$WL_PID"; fi
	valid
}

# sig_command: a command that appends each SIGTERM and SIGHUP it gets to
# $WL_CTL/sigs as it comes (a C handler's write: none is merged into
# the next), exits 5 at the second, or on SIGUSR1, and says its pid in
# $WL_CTL/ready. Run: $PY -c "$(sig_command)" "$WL_CTL"
sig_command() {
	cat <<-'EOF'
	import os, signal, sys
	ctl = sys.argv[1]
	r, w = os.pipe()
	os.set_blocking(w, False)
	signal.set_wakeup_fd(w)
	for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1):
	    signal.signal(s, lambda *a: None)
	with open(ctl + "/ready.tmp", "w") as f:
	    f.write(str(os.getpid()))
	os.rename(ctl + "/ready.tmp", ctl + "/ready")
	n = 0
	while True:
	    for b in os.read(r, 64):
	        if b == signal.SIGUSR1:
	            sys.exit(5)
	        with open(ctl + "/sigs", "a") as f:
	            f.write(signal.Signals(b).name[3:] + "\n")
	        n += 1
	        if n == 2:
	            sys.exit(5)
	EOF
}

# sigs_at_least N: wait until the command has noted N signals
sigs_at_least() {
	local i
	for ((i = 0; i < 1500; i++)); do
		[ "$(cat "$WL_CTL/sigs" 2>/dev/null | wc -l)" -ge "$1" ] && return 0
		sleep 0.02
	done
	echo "# the command noted $(cat "$WL_CTL/sigs" 2>/dev/null | wc -l) signals, not $1"
	return 1
}

@test "signals: a second SIGTERM while the tracer waits for the command is passed on, and the tracer returns the command's status" {
	host_only "signals passed on by the tracer"
	"${DEFAULT_SIGNALS[@]}" "$DFT" -q -o "$TRACE" -- "$PY" -c "$(sig_command)" "$WL_CTL" 2>"$T/dft.err" &
	DFT_PID=$!
	BG_PIDS+=("$DFT_PID")
	wait_file "$WL_CTL/ready" 30
	WL_PID=$(cat "$WL_CTL/ready")
	kill -TERM "$DFT_PID"
	# the first reached the command: the tracer has stopped tracing
	sigs_at_least 1
	kill -TERM "$DFT_PID"
	await "$DFT_PID" 30
	expect_eq "tracer status" "$AWAIT_STATUS" 5
	expect_eq "signals the command got" "$(cat "$WL_CTL/sigs" | tr '\n' ' ')" "TERM TERM "
	! running "$WL_PID"
	valid
}

# waiting_for_command PID: the tracer PID sleeps in wait4 or ppoll (it
# has stopped tracing and passed on what it passes on), or has exited
waiting_for_command() {
	local i nr
	for ((i = 0; i < 1500; i++)); do
		# gone: the command ended, the signals it got tell the rest
		read -r nr _ 2>/dev/null <"/proc/$1/syscall" || return 0
		[ "$nr" = 61 ] || [ "$nr" = 271 ] && return 0
		sleep 0.02
	done
	echo "# the tracer never waited for its command"
	return 1
}

@test "signals: SIGTERM or SIGHUP sent to the process group reaches the command once, not again through the tracer" {
	host_only "signals passed on by the tracer"
	[ "$(uname -m)" = x86_64 ] || skip "syscall numbers of x86_64"
	for sig in TERM HUP; do
		rm -f "$WL_CTL/ready" "$WL_CTL/sigs"
		# its own process group, as a job's under Slurm or a shell's
		setsid "${DEFAULT_SIGNALS[@]}" "$DFT" -q -o "$TRACE" -- "$PY" -c "$(sig_command)" "$WL_CTL" 2>"$T/dft.err" &
		DFT_PID=$!
		BG_PIDS+=("$DFT_PID")
		wait_file "$WL_CTL/ready" 30
		WL_PID=$(cat "$WL_CTL/ready")
		expect_eq "the tracer leads its group" "$(ps -o pgid= "$DFT_PID" | tr -d ' ')" "$DFT_PID"
		kill "-$sig" -- "-$DFT_PID"
		sigs_at_least 1
		waiting_for_command "$DFT_PID"
		kill -USR1 "$WL_PID" 2>/dev/null || true # gone: it got two
		await "$DFT_PID" 30
		expect_eq "tracer status after SIG$sig" "$AWAIT_STATUS" 5
		expect_eq "signals the command got" "$(cat "$WL_CTL/sigs" | tr '\n' ' ')" "$sig "
		valid
	done
}

@test "signals: SIGKILL leaves a gzip readable up to the last flush, with events older than 2.5 s" {
	host_only "the writer's flushes"
	"${DEFAULT_SIGNALS[@]}" "$DFT" -q -o "$TRACE" -- "$WL/util" marker "$D" >>"$TRUTH" 2>"$T/dft.err" &
	DFT_PID=$!
	BG_PIDS+=("$DFT_PID")
	# the workload writes its marker, then 2.5 s later creates "done"
	wait_file "$WL_CTL/done" 30
	WL_PID=$(cat "$WL_CTL/done")
	BG_PIDS+=("$WL_PID")
	kill -KILL "$DFT_PID"
	await "$DFT_PID" 10
	kill -KILL "$WL_PID"
	valid --partial
	check_truth --under "$D"
}

@test "attach: -p is repeatable: two unrelated processes, both traced; the tracer exits when both have" {
	WL_CTL="$T/ctl1" && mkdir -p "$WL_CTL" && start_workload "$WL/util" wait
	A=$WL_PID
	WL_CTL="$T/ctl2" && mkdir -p "$WL_CTL" && start_workload "$WL/util" wait
	B=$WL_PID
	"${DEFAULT_SIGNALS[@]}" "$DFT" -q -o "$TRACE" -p "$A" -p "$B" 2>"$T/dft.err" &
	DFT_PID=$!
	BG_PIDS+=("$DFT_PID")
	tpy wait-for "$TRACE" --pid "$A" --alive "$DFT_PID" --timeout 30
	tpy wait-for "$TRACE" --pid "$B" --alive "$DFT_PID" --timeout 30
	kill -USR1 "$A"
	await "$A" 30
	running "$DFT_PID"    # B still runs: the tracer must go on
	kill -USR1 "$B"
	await "$B" 30
	await "$DFT_PID" 30
	expect_eq "tracer status" "$AWAIT_STATUS" 0
	valid
	[ "$(tpy count "$TRACE" --pid "$A")" -gt 0 ]
	[ "$(tpy count "$TRACE" --pid "$B")" -gt 0 ]
}

@test "-b accepts K and M suffixes" {
	host_only "the option's parsing"
	dft -q -b 64K -o "$TRACE" -- "$WL/util" exit 0
	expect_eq "status with -b 64K" "$DFT_STATUS" 0
	dft -q -b 1M -o "$TRACE" -- "$WL/util" exit 0
	expect_eq "status with -b 1M" "$DFT_STATUS" 0
	valid
}
