#!/usr/bin/env bats
# Command line contract: exit status, errors, output files, privileges.

load lib/common

@test "cli: -- CMD exit status is CMD's: 0 and 3" {
	dft -q -o "$TRACE" -- "$WL/util" exit 0
	expect_eq "status" "$DFT_STATUS" 0
	dft -q -o "$TRACE" -- "$WL/util" exit 3
	expect_eq "status" "$DFT_STATUS" 3
	valid
}

@test "cli: -- CMD killed by a signal gives 128+signal (SIGKILL 137, SIGTERM 143), file complete" {
	dft -q -o "$TRACE" -- "$WL/util" kill 9
	expect_eq "status" "$DFT_STATUS" 137
	valid
	dft -q -o "$TRACE" -- "$WL/util" kill 15
	expect_eq "status" "$DFT_STATUS" 143
	valid
}

@test "cli: without -q a summary on stderr ends the run, with 'lost events: 0'" {
	dft -o "$TRACE" -- "$WL/util" exit 0
	expect_eq "status" "$DFT_STATUS" 0
	grep -qx 'lost events: 0' "$T/dft.err" || { cat "$T/dft.err"; return 1; }
}

@test "cli: -q prints nothing on stderr" {
	dft -q -o "$TRACE" -- "$WL/util" exit 0
	expect_eq "stderr" "$(cat "$T/dft.err")" ""
}

@test "cli: the default output is dftrace.pfw.gz in the working directory" {
	cd "$T"
	dft -q -- "$WL/util" exit 0
	expect_eq "status" "$DFT_STATUS" 0
	TRACE="$T/dftrace.pfw.gz"
	valid
}

@test "cli: -o - writes the trace to stdout" {
	"$DFT" -q -o - -- sh -c 'exec "$0" basic "$1" >"$2"' "$WL/io" "$D" "$TRUTH" \
		>"$T/stdout.pfw" 2>"$T/dft.err"
	TRACE="$T/stdout.pfw"
	valid
	check_truth --under "$D"
}

@test "cli: -o - with a command that writes to stdout: its output goes to stderr, the trace stays valid" {
	"$DFT" -q -o - -- sh -c 'echo out-marker; echo err-marker >&2' \
		>"$T/stdout.pfw" 2>"$T/dft.err"
	TRACE="$T/stdout.pfw"
	valid
	! grep -q marker "$T/stdout.pfw"
	expect_eq "stderr" "$(cat "$T/dft.err")" "out-marker"$'\n'"err-marker"
}

@test "cli: the command learns the tracer's pid in DFTRACE_BPF_TRACER" {
	"$DFT" -q -o "$TRACE" -- sh -c 'echo "$DFTRACE_BPF_TRACER"' >"$T/out" 2>"$T/dft.err" &
	pid=$!
	BG_PIDS+=("$pid")
	wait "$pid"
	expect_eq "DFTRACE_BPF_TRACER" "$(cat "$T/out")" "$pid"
}

@test "cli: nonexistent pid: exit 1, one error line, no trace file" {
	pid=$(( $(cat /proc/sys/kernel/pid_max) - 1 ))
	while [ -e "/proc/$pid" ]; do pid=$((pid - 1)); done
	dft -o "$TRACE" -p "$pid"
	expect_eq "status" "$DFT_STATUS" 1
	is_error_line "$T/dft.err"
	[ ! -e "$TRACE" ]
}

@test "cli: a zombie pid: exit 1, one error line, no trace file; its parent can be traced" {
	start_workload "$WL/util" zombie
	zpid=$(cat "$WL_CTL/zombie")
	expect_eq "zombie state" "$(awk '{print $3}' "/proc/$zpid/stat")" Z
	dft -o "$TRACE" -p "$zpid"
	expect_eq "status" "$DFT_STATUS" 1
	is_error_line "$T/dft.err"
	grep -q "pid $zpid: it has exited" "$T/dft.err"
	[ ! -e "$TRACE" ]
	attach -q
	finish_attached
	valid
}

@test "cli: a command that does not exist: error line, non-zero exit, no trace file" {
	dft -o "$TRACE" -- /nonexistent/command
	[ "$DFT_STATUS" != 0 ]
	is_error_line "$T/dft.err"
	[ ! -e "$TRACE" ]
}

@test "cli: a command that is not executable: error line, non-zero exit, no trace file" {
	printf 'not a program\n' >"$T/noexec"
	chmod 644 "$T/noexec"
	dft -o "$TRACE" -- "$T/noexec"
	[ "$DFT_STATUS" != 0 ]
	is_error_line "$T/dft.err"
	[ ! -e "$TRACE" ]
}

@test "cli: output in a directory that does not exist: exit 1, error line" {
	dft -o "$T/nodir/t.pfw.gz" -- "$WL/util" exit 0
	expect_eq "status" "$DFT_STATUS" 1
	is_error_line "$T/dft.err"
	[ ! -e "$T/nodir" ]
}

@test "cli: a directory as -o: exit 1, error line, directory untouched" {
	mkdir "$T/adir"
	dft -o "$T/adir" -- "$WL/util" exit 0
	expect_eq "status" "$DFT_STATUS" 1
	is_error_line "$T/dft.err"
	[ -d "$T/adir" ]
	expect_eq "directory contents" "$(ls -A "$T/adir")" ""
}

@test "cli: a symlink planted at -o does not let the tracer write through it" {
	printf 'precious\n' >"$T/victim"
	ln -s "$T/victim" "$TRACE"
	dft -q -o "$TRACE" -- "$WL/util" exit 0
	expect_eq "victim" "$(cat "$T/victim")" "precious"
	if [ "$DFT_STATUS" = 0 ]; then
		# it replaced the link with a trace
		[ ! -L "$TRACE" ]
		valid
	else
		is_error_line "$T/dft.err"
	fi
}

@test "cli: an existing trace file survives a failed start (bad pid, bad command)" {
	printf 'old trace\n' >"$TRACE"
	pid=$(( $(cat /proc/sys/kernel/pid_max) - 1 ))
	while [ -e "/proc/$pid" ]; do pid=$((pid - 1)); done
	dft -o "$TRACE" -p "$pid"
	[ "$DFT_STATUS" != 0 ]
	expect_eq "trace after bad pid" "$(cat "$TRACE")" "old trace"
	dft -o "$TRACE" -- /nonexistent/command
	[ "$DFT_STATUS" != 0 ]
	expect_eq "trace after bad command" "$(cat "$TRACE")" "old trace"
}

@test "cli: usage errors exit 64 and create no file" {
	cd "$T"
	for args in "--bogus" "-b 1000" "-b 2048" "-b 3K" "-d abc" "-p abc" "-p 0" ""; do
		# shellcheck disable=SC2086
		dft $args
		expect_eq "status of 'dftrace-bpf $args'" "$DFT_STATUS" 64
		[ ! -e "$T/dftrace.pfw.gz" ]
	done
}

@test "cli: usage errors start with 'dftrace-bpf: ' (also when run by path)" {
	cd "$T"
	bad=""
	for args in "--bogus" "-b 1000" "-d abc" "-p abc" ""; do
		# shellcheck disable=SC2086
		dft $args
		head -1 "$T/dft.err" | grep -q '^dftrace-bpf: ' ||
			bad="$bad"$'\n'"# 'dftrace-bpf $args': $(head -1 "$T/dft.err")"
	done
	[ -z "$bad" ] || { echo "# first stderr lines without the prefix:$bad"; return 1; }
}

@test "cli: not root: a clear error, non-zero exit, no trace file" {
	chmod 777 "$T"
	run setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$DFT" -o "$T/t.pfw.gz" -- "$WL/util" exit 0
	echo "# status $status: $output"
	[ "$status" != 0 ]
	printf '%s\n' "$output" >"$T/err"
	is_error_line "$T/err"
	[ ! -e "$T/t.pfw.gz" ]
}

@test "cli: with SUDO_UID/SUDO_GID the command runs as that user and the trace belongs to it" {
	chown 65534:65534 "$T"
	chmod 777 "$D"
	SUDO_UID=65534 SUDO_GID=65534 dft -q -o "$TRACE" -- "$WL/util" whoami "$D"
	expect_eq "status" "$DFT_STATUS" 0
	expect_eq "uid gid euid egid of CMD" \
		"$(awk -F'\t' '$1=="id" {print $2, $3, $4, $5}' "$TRUTH")" "65534 65534 65534 65534"
	expect_eq "owner of the trace" "$(stat -c %u:%g "$TRACE")" "65534:65534"
	expect_eq "owner of the file CMD made" "$(stat -c %u:%g "$D/owned.dat")" "65534:65534"
	valid
	check_truth --under "$D"
}

disk_full() {
	mkdir "$T/full"
	mount -t tmpfs -o size=256k tmpfs "$T/full"
	MOUNTS+=("$T/full")
	TRACE="$T/full/t.pfw.gz"
	dft -q -o "$TRACE" -- "$WL/util" spam "$D" 300000 "$1"
	echo "# status $DFT_STATUS; stderr: $(cat "$T/dft.err")"
	# tracing stops, the command goes on: its status is the tracer's
	expect_eq "status (the command's)" "$DFT_STATUS" 0
	is_error_line "$T/dft.err"
	grep -iE '^dftrace-bpf: .*(no space|disk full)' "$T/dft.err"
	gzip -t "$TRACE"
	valid --partial
}

@test "cli: disk full after a while: one error line, the command's exit status, a valid gzip of valid JSON lines with the early events" {
	disk_full 2000
	# the slow start (2 s: 20 x 100 pwrites) was flushed before the disk filled
	n=$(tpy count "$TRACE" --name pwrite --path "$D/spam.dat")
	[ "$n" -ge 1000 ]
}

@test "cli: disk full before the first flush: one error line, the command's exit status, still a valid gzip" {
	disk_full 0
}

dftrace_version() { "$DFT" --version | awk 'NR == 1 {print $2}'; }

# lifecycle TRACE: "version cmd exec-path cwd ppid" of start, then of end
lifecycle() {
	local sh
	while IFS=$'\t' read -r version cmd exec_hash cwd ppid; do
		sh=$(tpy meta "$1" SH | jq -r --arg h "$exec_hash" 'select(.args.value == $h) | .args.name')
		printf '%s|%s|%s|%s|%s\n' "$version" "$cmd" "$sh" "$cwd" "$ppid"
	done < <(tpy events "$1" --all --name start,end --fields args.version,args.cmd,args.exec_hash,args.cwd,args.ppid)
}

@test "cli: -- CMD: start and end carry the version, the command, its program (exec_hash, an SH), cwd and ppid" {
	cd "$D"
	dft -q -o "$TRACE" -- sh -c 'echo "ppid $PPID"'
	expect_eq "status" "$DFT_STATUS" 0
	ppid=$(awk '$1=="ppid" {print $2}' "$TRUTH")
	[ -n "$ppid" ]
	want="$(dftrace_version)|sh -c echo \"ppid \$PPID\"|$(realpath "$(command -v sh)")|$D|$ppid"
	expect_eq "start and end" "$(lifecycle "$TRACE")" "$want"$'\n'"$want"
	expect_eq "lost on start and end" \
		"$(tpy events "$TRACE" --all --name start,end --fields name,args.lost)" \
		"start"$'\t'"0"$'\n'"end"$'\t'"0"
}

@test "cli: -p: start and end carry the target's program, cwd and parent" {
	mkdir "$D/wd"
	cd "$D/wd"
	start_workload "$WL/util" wait
	parent=$(awk '{print $4}' "/proc/$WL_PID/stat")
	attach -q
	finish_attached
	want="$(dftrace_version)|-p $WL_PID|$(realpath "$WL/util")|$D/wd|$parent"
	expect_eq "start and end" "$(lifecycle "$TRACE")" "$want"$'\n'"$want"
}

@test "cli: a program that was also read as a file gets both its FH and its SH line" {
	dft -q -o "$TRACE" -- sh -c 'cat /usr/bin/true >/dev/null && exec /usr/bin/true'
	expect_eq "status" "$DFT_STATUS" 0
	valid
	h=$(tpy meta "$TRACE" FH | jq -r 'select(.args.name == "/usr/bin/true") | .args.value')
	[ -n "$h" ]
	expect_eq "SH of the same string" \
		"$(tpy meta "$TRACE" SH | jq -r --arg h "$h" 'select(.args.value == $h) | .args.name')" /usr/bin/true
	run tpy events "$TRACE" --name exec --fields args.exec_hash
	printf '%s\n' "$output" | grep -qx "$h"
}

@test "cli: the command starts with the signal dispositions it would have untraced (SIGPIPE not ignored)" {
	# through timeout and env, as dft runs the tracer: timeout catches
	# INT, QUIT, HUP
	want=$(timeout 60 "${DEFAULT_SIGNALS[@]}" sh -c 'grep SigIgn /proc/self/status')
	dft -q -o "$TRACE" -- sh -c 'grep SigIgn /proc/self/status'
	expect_eq "status" "$DFT_STATUS" 0
	expect_eq "ignored signals" "$(cat "$TRUTH")" "$want"
}

@test "cli: signals ignored where the tracer starts (nohup, a script's background job) stay ignored for the command, and an ignored HUP does not stop the tracer" {
	ign="trap '' HUP INT PIPE; exec"
	want=$(timeout 60 sh -c "$ign sh -c 'grep SigIgn /proc/self/status'")
	expect_eq "HUP, INT and PIPE ignored untraced" "$(( 0x${want##*:	} & 0x1003 ))" $((0x1003))
	timeout 60 sh -c "$ign \"\$0\" -q -o \"\$1\" -- sh -c 'grep SigIgn /proc/self/status; kill -HUP \$PPID; sleep 0.3; cat /etc/hostname'" \
		"$DFT" "$TRACE" >"$TRUTH" 2>"$T/dft.err"
	expect_eq "ignored signals" "$(head -1 "$TRUTH")" "$want"
	# the HUP did not stop the tracer: what came after it is traced
	valid
	tpy paths "$TRACE" | grep -qx '"/etc/hostname"'
}

@test "cli: -- CMD found through an empty PATH entry (the current directory): start names that program" {
	cp /usr/bin/true "$D/myprog"
	cd "$D"
	PATH=":$PATH" dft -q -o "$TRACE" -- myprog
	expect_eq "status" "$DFT_STATUS" 0
	h=$(tpy events "$TRACE" --all --name start --fields args.exec_hash)
	expect_eq "start's program" \
		"$(tpy meta "$TRACE" SH | jq -r --arg h "$h" 'select(.args.value == $h) | .args.name')" "$D/myprog"
}

@test "cli: -b takes a G suffix: -b 1G is the largest ring buffer, and says so when refused" {
	dft -q -b 1G -o "$TRACE" -- "$WL/util" exit 0
	expect_eq "status with -b 1G" "$DFT_STATUS" 0
	dft -q -b 2G -o "$TRACE" -- "$WL/util" exit 0
	expect_eq "status with -b 2G" "$DFT_STATUS" 64
	grep -q "from 16K to 1G" "$T/dft.err"
}

@test "cli: -b 16K, the smallest ring, holds an exec's record: the command's exec is traced; -b 8K is refused in a line that says why" {
	dft -q -b 16K -o "$TRACE" -- "$WL/util" exit 0
	expect_eq "status with -b 16K" "$DFT_STATUS" 0
	valid
	h=$(tpy meta "$TRACE" SH | jq -r --arg c "$WL/util exit 0" 'select(.args.name == $c) | .args.value')
	expect_eq "exec events of '$WL/util exit 0'" \
		"$(tpy events "$TRACE" --name exec --fields args.cmd_hash | grep -cx "${h:-no SH}")" 1
	dft -q -b 8K -o "$T/8k.pfw.gz" -- "$WL/util" exit 0
	expect_eq "status with -b 8K" "$DFT_STATUS" 64
	head -1 "$T/dft.err" | grep -xE "dftrace-bpf: ring buffer size '8K' cannot hold an exec's record \([0-9]+ bytes\): need a power of two from 16K to 1G" ||
		{ sed 's/^/#   /' "$T/dft.err"; return 1; }
	[ ! -e "$T/8k.pfw.gz" ]
}

@test "cli: options that would do nothing are refused: -T without -D, -z with a plain output or stdout" {
	cd "$T"
	for args in "-T -o t.pfw" "-z 5 -o t.pfw" "-z 5 -o -" "-z 5 -T -D out"; do
		# shellcheck disable=SC2086
		dft $args -- "$WL/util" exit 0
		expect_eq "status of 'dftrace-bpf $args'" "$DFT_STATUS" 64
		head -1 "$T/dft.err" | grep -q '^dftrace-bpf: -[Tz] '
	done
	[ ! -e t.pfw ] && [ ! -e out ]
	dft -q -z 5 -o t.pfw.gz -- "$WL/util" exit 0
	expect_eq "status of -z 5 -o t.pfw.gz" "$DFT_STATUS" 0
}

@test "cli: -o '' is an empty path, not a directory" {
	dft -o '' -- "$WL/util" exit 0
	expect_eq "status" "$DFT_STATUS" 1
	is_error_line "$T/dft.err"
	grep -qx "dftrace-bpf: empty output path" "$T/dft.err"
}

@test "cli: an output name of 255 bytes works" {
	name=$(printf 'n%.0s' $(seq 1 248)).pfw.gz
	dft -q -o "$T/$name" -- "$WL/util" exit 0
	expect_eq "status" "$DFT_STATUS" 0
	TRACE="$T/$name" valid
}

@test "cli: the exit event says the status as a shell does: exit_code 3; killed by SIGKILL: exit_code 137 and signal 9" {
	dft -q -o "$TRACE" -- "$WL/util" exit 3
	expect_eq "exit 3" "$(tpy events "$TRACE" --name exit --fields args.exit_code,args.signal)" $'3\t-'
	dft -q -o "$TRACE" -- "$WL/util" kill 9
	expect_eq "kill 9" "$(tpy events "$TRACE" --name exit --fields args.exit_code,args.signal)" $'137\t9'
}

@test "cli: kill -INT stops the tracer even where INT was ignored when it started (a script's background job)" {
	timeout 60 sh -c "trap '' INT; exec \"\$0\" -q -o \"\$1\" --comm not-this-one --pid-file \"\$2\"" \
		"$DFT" "$TRACE" "$T/dft.pid" 2>"$T/dft.err" &
	BG_PIDS+=("$!")
	wait_file "$T/dft.pid" 30
	kill -INT "$(cat "$T/dft.pid")"
	await "$!" 30
	expect_eq "tracer status" "$AWAIT_STATUS" 0
	valid
}

@test "cli: --pid-file appears, with the tracer's pid, once tracing has begun: a call made right after it is traced" {
	start_bg WL_PID sh -c 'while [ ! -e "$0/go" ]; do sleep 0.01; done; cat /etc/hostname >/dev/null; exit 0' "$D"
	"$DFT" -q -o "$TRACE" -p "$WL_PID" --pid-file "$T/dft.pid" 2>"$T/dft.err" &
	DFT_PID=$!
	BG_PIDS+=("$DFT_PID")
	wait_file "$T/dft.pid" 30
	touch "$D/go"
	await "$DFT_PID"
	expect_eq "tracer status" "$AWAIT_STATUS" 0
	expect_eq "pid file" "$(cat "$T/dft.pid")" "$DFT_PID"
	valid
	[ "$(tpy count "$TRACE" --name read --path /etc/hostname)" -gt 0 ]
}

@test "cli: a --pid-file that cannot be made: one error line, non-zero, no trace begun" {
	run "$DFT" -q -o "$TRACE" --pid-file "$D/no/such/dir/t.pid" -- true
	[ "$status" -ne 0 ]
	[ "${#lines[@]}" = 1 ]
	[[ "$output" == *"'$D/no/such/dir/t.pid'"* ]]
	[ ! -e "$TRACE" ]
}

@test "cli: -p TID traces the thread's process, under the process id: no phantom process" {
	start_workload "$WL/util" leaderexit "$D" wait
	tid=$(ls "/proc/$WL_PID/task" | grep -vx "$WL_PID" | head -1)
	[ -n "$tid" ]
	"$DFT" -q -o "$TRACE" -p "$tid" 2>"$T/dft.err" &
	DFT_PID=$!
	BG_PIDS+=("$DFT_PID")
	tpy wait-for "$TRACE" --pid "$WL_PID" --alive "$DFT_PID" --timeout 30
	kill -USR1 "$WL_PID"
	await "$DFT_PID"
	expect_eq "tracer status" "$AWAIT_STATUS" 0
	valid
	expect_eq "pids in the trace" "$(tpy events "$TRACE" --all --fields pid | sort -u)" "$WL_PID"
	expect_eq "start's pid" "$(tpy events "$TRACE" --all --name start --fields pid)" "$WL_PID"
}

@test "cli: -p of a kernel thread, or of the tracer itself: one error line, no file" {
	dft -o "$TRACE" -p 2
	expect_eq "status for kthreadd" "$DFT_STATUS" 1
	is_error_line "$T/dft.err"
	grep -q "kernel thread" "$T/dft.err"
	[ ! -e "$TRACE" ]
	# exec keeps the shell's pid: the tracer is asked to trace itself
	sh -c 'exec "$0" -o "$1" -p $$' "$DFT" "$TRACE" 2>"$T/dft.err" || status=$?
	expect_eq "status for itself" "${status:-0}" 1
	is_error_line "$T/dft.err"
	grep -q "the tracer itself" "$T/dft.err"
	[ ! -e "$TRACE" ]
}

@test "cli: -p of the tracer's own parent: the tree is traced, the tracer's own I/O is not" {
	sh -c '"$0" -q -d 2 -o "$1" -p $$ & echo $! >"$2"
		for i in 1 2 3 4 5 6 7 8 9 10; do cat /etc/hostname >/dev/null; sleep 0.1; done; wait' \
		"$DFT" "$TRACE" "$T/dftpid"
	valid
	dpid=$(cat "$T/dftpid")
	expect_eq "events of the tracer" "$(tpy count "$TRACE" --pid "$dpid")" 0
	[ "$(tpy count "$TRACE" --name read --path /etc/hostname)" -gt 0 ]
}

@test "cli: --pid-file, -o and DFTRACE_BPF_RECORD naming one file: a one-line error, and the file as it was" {
	cd "$T"
	for args in "--pid-file x -o x" "--pid-file ./x -o $T/x" "--pid-file x -o $T/../${T##*/}/x"; do
		for before in absent present; do
			rm -f x
			[ "$before" = absent ] || echo old >x
			# shellcheck disable=SC2086
			dft -q $args -- "$WL/util" exit 0
			expect_eq "status of '$args' with x $before" "$DFT_STATUS" 1
			is_error_line "$T/dft.err"
			grep -q "^dftrace-bpf: -o and --pid-file name the same file '" "$T/dft.err"
			if [ "$before" = absent ]; then [ ! -e x ]; else expect_eq "x" "$(cat x)" old; fi
		done
	done
	rm -f x
	DFTRACE_BPF_RECORD=x dft -q -o x -- "$WL/util" exit 0
	expect_eq "status of DFTRACE_BPF_RECORD=x -o x" "$DFT_STATUS" 1
	is_error_line "$T/dft.err"
	[ ! -e x ]
}

@test "cli: on a terminal the status line counts the losses: its last, drawn after them, says the summary's" {
	# a 16K ring loses most records of a burst of opens (paths, which
	# are never folded); then 2.5 s without I/O: two ticks draw the line
	script -qec "'$DFT' -b 16K -o '$TRACE' -- sh -c 'find /usr/share -type f 2>/dev/null | head -3000 | xargs cat >/dev/null; sleep 2.5'" \
		/dev/null >"$T/tty"
	final=$(grep -ao 'lost events: [0-9]*' "$T/tty" | tail -1 | awk '{print $3}')
	drawn=$(grep -aoE '[0-9]+ lost, [0-9]+ processes' "$T/tty" | tail -1 | awk '{print $1}')
	[ "${final:-0}" -gt 0 ] || { echo "# no loss to count:"; tr '\r' '\n' <"$T/tty" | tail -5; return 1; }
	expect_eq "the last status line's losses" "$drawn" "$final"
}
