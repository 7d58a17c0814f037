#!/usr/bin/env bats
# dftrace-bpf serve: users without root trace their own work through the
# root service (issue 38). The clients run as nobody (and daemon) with
# setpriv; the service as root, on a socket of the test's own.

load lib/common

setup() {
	common_setup
	SOCK="$T/sock"
	POLICY="$T/policy"
	: >"$POLICY"
	export DFTRACE_BPF_SOCKET="$SOCK"
	# nobody's own place to work and write
	NB="$T/nb"
	mkdir -p "$NB/d" "$NB/ctl"
	chmod -R 777 "$NB"
	chmod 755 "$T"
}

# serve: the service on $SOCK with $POLICY, its log in $T/serve.log
serve() {
	"$DFT" serve --socket "$SOCK" --policy "$POLICY" 2>"$T/serve.log" &
	SERVE_PID=$!
	BG_PIDS+=("$SERVE_PID")
	wait_file "$SOCK" 20
}

# as USER CMD...: CMD as USER (its group, no other group), in $NB
as() {
	local user=$1
	shift
	(cd "$NB" && setpriv --reuid="$user" --regid="$(id -g "$user")" --clear-groups "$@")
}

# take_pid PID TRIES: root's `sleep 30` made to have pid PID (the next
# pid set to it, for the fork that follows: another process may fork
# first, so TRIES times at most); its pid in TAKEN. Fails if it could not.
take_pid() {
	local i
	for ((i = 0; i < $2; i++)); do
		echo $(($1 - 1)) >/proc/sys/kernel/ns_last_pid
		sleep 30 &
		TAKEN=$!
		BG_PIDS+=("$TAKEN")
		[ "$TAKEN" = "$1" ] && return 0
		kill "$TAKEN"
	done
	return 1
}

# links: the BPF links on the machine now
links() { bpftool link list 2>/dev/null | grep -c '^[0-9]*:' || true; }

@test "service: as nobody, -- CMD gives exact bytes, in a file that is nobody's" {
	serve
	run as nobody "$DFT" -q -o t.pfw.gz -- "$WL/io" basic "$NB/d"
	[ "$status" = 0 ]
	printf '%s\n' "$output" >"$TRUTH"
	TRACE="$NB/t.pfw.gz"
	expect_eq "the trace's owner" "$(stat -c %U "$TRACE")" nobody
	valid
	check_truth --under "$NB/d"
	grep -q "trace 1: 'nobody' (uid $(id -u nobody), pid [0-9]*): -q -o t.pfw.gz (and its command)" "$T/serve.log"
	grep -q "trace 1 ended: exit 0" "$T/serve.log"
}

@test "service: -- CMD exits as CMD did, and a trace's status line and summary are the client's" {
	serve
	run as nobody "$DFT" -o t.pfw.gz -- sh -c 'exit 3'
	[ "$status" = 3 ]
	[[ "$output" == *"trace: t.pfw.gz"* ]]
	[[ "$output" == *"lost events: 0"* ]]
}

@test "service: -p of nobody's own process: its I/O after the attach, exact" {
	serve
	WL_CTL="$NB/ctl" as nobody "${DEFAULT_SIGNALS[@]}" "$WL/attach" attach "$NB/d" >"$TRUTH" 2>"$T/wl.err" &
	local wl=$!
	BG_PIDS+=("$wl")
	wait_file "$NB/ctl/ready" 20
	as nobody "$DFT" -q -o t.pfw.gz --pid-file "$NB/pid" -p "$(cat "$NB/ctl/ready")" 2>"$T/dft.err" &
	local dft=$!
	BG_PIDS+=("$dft")
	wait_file "$NB/pid" 30
	kill -USR1 "$(cat "$NB/ctl/ready")"
	await "$dft" 60
	expect_eq "the tracer's status" "$AWAIT_STATUS" 0
	TRACE="$NB/t.pfw.gz"
	valid
	check_truth --under "$NB/d"
}

@test "service: nobody is refused, in one line and no file: -p 1, -p of root's, of daemon's, of a setuid program, -a, --uid root, --comm" {
	serve
	sleep 60 &
	local root_pid=$!
	BG_PIDS+=("$root_pid")
	setpriv --reuid=daemon --regid=daemon --clear-groups sleep 60 &
	local daemon_pid=$!
	BG_PIDS+=("$daemon_pid")
	# passwd is setuid root: nobody's process, but privileged
	mkfifo "$NB/never"
	(cd "$NB" && setpriv --reuid=nobody --regid=nogroup --clear-groups passwd <"$NB/never" >/dev/null 2>&1) &
	BG_PIDS+=("$!")
	exec 7<>"$NB/never"
	local suid
	for _ in $(seq 100); do
		suid=$(pgrep -u root -x passwd -P "$(pgrep -P $! -x setpriv 2>/dev/null || echo $!)" 2>/dev/null || pgrep -x passwd | head -1)
		[ -n "$suid" ] && break
		sleep 0.05
	done
	[ -n "$suid" ]
	local cases=("-p 1|process 1 is not yours"
		"-p $root_pid|process $root_pid is not yours"
		"-p $daemon_pid|process $daemon_pid is not yours"
		"-p $suid|process $suid is not yours"
		"-a|'-a' and '--comm' trace every user's processes"
		"--uid root|'--uid' of another user"
		"--comm sleep|'-a' and '--comm' trace every user's processes")
	for c in "${cases[@]}"; do
		# shellcheck disable=SC2086 # the options of the case
		run as nobody "$DFT" -q -o x.pfw.gz ${c%%|*} -d 1
		echo "# ${c%%|*}: $status: $output"
		[ "$status" = 1 ]
		[ "$(grep -c . <<<"$output")" = 1 ]
		[[ "$output" == "dftrace-bpf: "*"${c#*|}"* ]]
		[ ! -e "$NB/x.pfw.gz" ]
	done
	exec 7>&-
}

@test "service: a policy lets a group trace host-wide (-a); limits past which it refuses" {
	printf 'host-wide group nogroup\nmax-traces 1\nmax-ring 32\n' >"$POLICY"
	serve
	run as nobody "$DFT" -q -o all.pfw.gz -a -d 1
	[ "$status" = 0 ]
	[ -s "$NB/all.pfw.gz" ]
	run as nobody "$DFT" -q -o x.pfw.gz -b 64M -- true
	echo "# $output"
	[ "$status" = 1 ]
	[ "$output" = "dftrace-bpf: '-b' of more than 32 MiB: the service's limit" ]
	# one trace at once: a second one waits for nothing, it is refused
	as nobody "$DFT" -q -o long.pfw.gz --pid-file "$NB/pid" -- sleep 30 2>"$T/long.err" &
	BG_PIDS+=("$!")
	wait_file "$NB/pid" 30
	run as nobody "$DFT" -q -o x.pfw.gz -- true
	[ "$status" = 1 ]
	[ "$output" = "dftrace-bpf: the service refused: 'nobody' runs 1 traces already, the service's limit" ]
}

# Links are not told apart by owner (bpftool 7.1 names none): the
# tracer that holds them is found among the service's children, and its
# going takes them (nothing is pinned).
@test "service: a client killed mid-trace ends its tracer, and with it its links, within 2 s" {
	serve
	as nobody "$DFT" -q -o t.pfw.gz --pid-file "$NB/pid" -- sleep 60 2>"$T/c.err" &
	local client=$! tracer
	BG_PIDS+=("$client")
	wait_file "$NB/pid" 30
	tracer=$(pgrep -P "$SERVE_PID")
	[ "$(ls -l "/proc/$tracer/fd" | grep -c 'anon_inode:bpf_link')" -gt 0 ]
	# the client itself (the service saw its pid), not the shell around it
	kill -KILL "$(sed -n "s/^dftrace-bpf serve: trace 1: 'nobody' (uid [0-9]*, pid \([0-9]*\)).*/\1/p" \
		"$T/serve.log")"
	for _ in $(seq 100); do
		[ -d "/proc/$tracer" ] || break
		sleep 0.02
	done
	[ ! -d "/proc/$tracer" ]
	grep -q "trace 1 ended" "$T/serve.log"
}

# Each garbage connection is a trace of root's while it lasts: past
# max-traces (4) at once, or max-starts (60) a minute, the service
# refuses them before it reads them.
@test "service: 200 garbage connections, each refused, then a trace: exact, and the service lives" {
	serve
	"$PY" - "$SOCK" <<-'PY'
	import os, random, socket, struct, sys
	rnd = random.Random(38)
	for i in range(200):
	    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
	    s.connect(sys.argv[1])
	    kind = i % 4
	    msg = b""
	    if kind == 0:
	        msg = bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 200)))
	    elif kind == 1:   # a header that says more than it sends
	        msg = struct.pack("<IHHIIiI", 0x42544644, 1, 0, 2, 60000, 0, 0) + b"-q\0"
	    elif kind == 2:   # half a header
	        msg = struct.pack("<IHHIIiI", 0x42544644, 1, 0, 2, 6, 0, 0)[:9]
	    # kind 3: nothing at all, then gone
	    try:  # a refusal before the reading closes it first
	        s.sendall(msg)
	    except (BrokenPipeError, ConnectionResetError):
	        pass
	    s.close()
	PY
	run as nobody "$DFT" -q -o t.pfw.gz -- "$WL/io" basic "$NB/d"
	[ "$status" = 0 ]
	printf '%s\n' "$output" >"$TRUTH"
	TRACE="$NB/t.pfw.gz"
	check_truth --under "$NB/d"
	kill -0 "$SERVE_PID"
	expect_eq "refusals logged" "$(grep -cE "refused: (bad request|'root' runs 4 traces \
already|'root' started 60 traces this minute)" "$T/serve.log")" 200
}

@test "service: nobody and daemon at once: each trace holds its own processes alone" {
	serve
	mkdir -p "$NB/d2" && chmod 777 "$NB/d2"
	as nobody "$DFT" -q -o a.pfw.gz -- "$WL/io" basic "$NB/d" >"$T/a.tsv" &
	local a=$!
	as daemon "$DFT" -q -o b.pfw.gz -- "$WL/io" basic "$NB/d2" >"$T/b.tsv" &
	local b=$!
	BG_PIDS+=("$a" "$b")
	await "$a" 60
	expect_eq "nobody's" "$AWAIT_STATUS" 0
	await "$b" 60
	expect_eq "daemon's" "$AWAIT_STATUS" 0
	expect_eq "owners" "$(stat -c %U "$NB/a.pfw.gz") $(stat -c %U "$NB/b.pfw.gz")" "nobody daemon"
	TRACE="$NB/a.pfw.gz" TRUTH="$T/a.tsv" check_truth --under "$NB/d"
	TRACE="$NB/b.pfw.gz" TRUTH="$T/b.tsv" check_truth --under "$NB/d2"
	expect_eq "nobody's trace, of daemon's files" \
		"$(tpy events "$NB/a.pfw.gz" --under "$NB/d2" --fields name | grep -c . || true)" 0
	expect_eq "daemon's trace, of nobody's files" \
		"$(tpy events "$NB/b.pfw.gz" --under "$NB/d" --fields name | grep -c . || true)" 0
}

@test "service: without it, one line says what tracing needs; --help needs neither" {
	run as nobody "$DFT" -q -o t.pfw.gz -- true
	[ "$status" = 1 ]
	[ "$output" = "dftrace-bpf: permission denied: tracing needs root or CAP_BPF and CAP_PERFMON, or the service at '$SOCK' (dftrace-bpf serve): No such file or directory" ]
	run as nobody "$DFT" --help
	[ "$status" = 0 ]
	[[ "$output" == *"Usage: dftrace-bpf"* ]]
}

@test "service: a traced process that execs a setuid program is not followed there" {
	serve
	echo hello >"$NB/d/after"
	chmod 644 "$NB/d/after"
	run as nobody "$DFT" -q -o t.pfw.gz -- sh -c \
		'passwd -S nobody >/dev/null 2>&1; cat "$1" >/dev/null' sh "$NB/d/after"
	[ "$status" = 0 ]
	expect_eq "the setuid passwd's reads of /etc/shadow" \
		"$(tpy events "$NB/t.pfw.gz" --fields path | grep -c '^/etc/shadow$' || true)" 0
	expect_eq "the shell's cat after it" \
		"$(tpy events "$NB/t.pfw.gz" --name read --path "$NB/d/after" --fields args.ret | head -1)" 6
}

@test "service: --cgroup of nobody's: nobody's processes in it traced; root's, there at the start or moved in while it runs, never" {
	local cg=/sys/fs/cgroup/unified/dft-svc-$$ mine root_early root_late
	[ -d /sys/fs/cgroup/unified ] || skip "no cgroup v2 at /sys/fs/cgroup/unified"
	mkdir "$cg"
	serve
	# nobody's writer, root's writer in the cgroup from the start, and
	# root's writer moved in once the trace runs
	WL_CTL="$NB/ctl" start_bg mine setpriv --reuid=nobody --regid=nogroup --clear-groups "$WL/util" noise "$NB/d/mine.dat"
	start_bg root_early "$WL/util" noise "$T/early.dat"
	start_bg root_late "$WL/util" noise "$T/late.dat"
	echo "$mine" >"$cg/cgroup.procs"
	echo "$root_early" >"$cg/cgroup.procs"
	as nobody "$DFT" -o c.pfw.gz --cgroup "$cg" -d 4 2>"$T/svc.err" &
	local client=$!
	BG_PIDS+=("$client")
	for _ in $(seq 200); do [ -s "$NB/c.pfw.gz" ] && break; sleep 0.05; done
	sleep 1
	echo "$root_late" >"$cg/cgroup.procs"
	await "$client" 30
	local status=$AWAIT_STATUS
	for p in $(cat "$cg/cgroup.procs"); do kill "$p" 2>/dev/null || true; done
	for _ in $(seq 100); do rmdir "$cg" 2>/dev/null && break; sleep 0.05; done
	sed 's/^/# /' "$T/svc.err"
	expect_eq "client's status" "$status" 0
	grep -qxF "dftrace-bpf: 1 process in '$cg' is not nobody's: not traced" "$T/svc.err"
	TRACE="$NB/c.pfw.gz"
	[ "$(tpy count "$TRACE" --pid "$mine" --name pwrite)" -gt 0 ]
	expect_eq "events of root's process there at the start" "$(tpy count "$TRACE" --pid "$root_early")" 0
	expect_eq "events of root's process moved in" "$(tpy count "$TRACE" --pid "$root_late")" 0
	expect_eq "root's files" "$(tpy paths "$TRACE" | grep -c -e early.dat -e late.dat || true)" 0
}

@test "service: started by its socket, as systemd does (the unit's socket), it serves the same" {
	command -v systemd-socket-activate >/dev/null || skip "no systemd-socket-activate"
	systemd-socket-activate -l "$SOCK" "$DFT" serve --policy "$POLICY" 2>"$T/serve.log" &
	SERVE_PID=$!
	BG_PIDS+=("$SERVE_PID")
	wait_file "$SOCK" 20
	chmod 666 "$SOCK"
	run as nobody "$DFT" -q -o t.pfw.gz -- "$WL/io" basic "$NB/d"
	[ "$status" = 0 ]
	printf '%s\n' "$output" >"$TRUTH"
	TRACE="$NB/t.pfw.gz"
	check_truth --under "$NB/d"
	grep -q "listening on 'systemd's socket'" "$T/serve.log"
}

# ns_last_pid gives root's next process the pid nobody's had (a fork
# elsewhere on the machine may take it first: tried again).
@test "service: a pid that was nobody's, taken by root's process before the check, is refused" {
	serve
	local p
	for _ in $(seq 50); do
		setpriv --reuid=nobody --regid=nogroup --clear-groups true &
		p=$!
		wait "$p"
		take_pid "$p" 1 && break
	done
	[ "$TAKEN" = "$p" ]
	run as nobody "$DFT" -q -o x.pfw.gz -p "$p" -d 1
	[ "$status" = 1 ]
	[ "$output" = "dftrace-bpf: cannot trace process $p: process $p is not yours" ]
	[ ! -e "$NB/x.pfw.gz" ]
}

@test "service: a pid checked as nobody's, then taken by root's process before the attach, is refused: nothing traced, no file" {
	mkdir -m 777 "$T/win"
	DFTRACE_BPF_TEST_CHECKED="$T/win" serve
	setpriv --reuid=nobody --regid=nogroup --clear-groups sleep 1000 &
	local p=$! client
	BG_PIDS+=("$p")
	as nobody "$DFT" -q -o x.pfw.gz -p "$p" -d 5 >"$T/client.out" 2>&1 &
	client=$!
	BG_PIDS+=("$client")
	# checked as nobody's: now it dies, and root's process takes its pid
	wait_file "$T/win/checked" 30
	kill "$p"
	wait "$p" || true
	take_pid "$p" 50
	touch "$T/win/go"
	local status=0
	wait "$client" || status=$?
	expect_eq "status" "$status" 1
	expect_eq "said" "$(cat "$T/client.out")" \
		"dftrace-bpf: process $p exited before its trace began; nothing traced"
	[ ! -e "$NB/x.pfw.gz" ]
	[ -z "$(ls "$NB" | grep -v '^d$\|^ctl$')" ]
}

# A minute may turn between two starts (then the count begins anew), not
# twice within three.
@test "service: past max-starts a minute, a start is refused" {
	printf 'max-starts 1\n' >"$POLICY"
	serve
	local refused=0
	for _ in 1 2 3; do
		run as nobody "$DFT" -q -o x.pfw.gz -- true
		if [ "$status" = 1 ]; then
			expect_eq "the refusal" "$output" \
				"dftrace-bpf: the service refused: 'nobody' started 1 traces this minute, the service's limit"
			refused=1
			break
		fi
	done
	[ "$refused" = 1 ]
}

@test "service: a client stopped mid-trace does not stop another's" {
	serve
	as nobody "$DFT" -o a.pfw.gz --pid-file "$NB/pid" -- sleep 60 2>"$T/a.err" &
	BG_PIDS+=("$!")
	wait_file "$NB/pid" 30
	local a
	a=$(sed -n "s/^dftrace-bpf serve: trace 1: 'nobody' (uid [0-9]*, pid \([0-9]*\)).*/\1/p" \
		"$T/serve.log")
	kill -STOP "$a"
	run as daemon "$DFT" -q -o b.pfw.gz -- "$WL/io" basic "$NB/d"
	kill -CONT "$a"
	[ "$status" = 0 ]
	printf '%s\n' "$output" >"$TRUTH"
	TRACE="$NB/b.pfw.gz"
	check_truth --under "$NB/d"
}

# The service's own memory and descriptors, after 100 and after 1,000
# connections (refused: half a request each) and 10 traces in a row.
@test "service: 1,000 connections and 100 traces in a row: the service's memory and descriptors flat" {
	echo "max-starts 1000" >"$POLICY" # 100 starts within the minute
	serve
	garbage() {
		"$PY" - "$SOCK" "$1" <<-'PY'
		import socket, struct, sys
		for i in range(int(sys.argv[2])):
		    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
		    s.connect(sys.argv[1])
		    try:  # a refusal before the reading closes it first
		        s.sendall(struct.pack("<IHHIIiI", 0x42544644, 1, 0, 2, 6, 0, 0)[:9])
		    except (BrokenPipeError, ConnectionResetError):
		        pass
		    s.close()
		PY
	}
	rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$SERVE_PID/status"; }
	# its descriptors once no connection is in flight: the same count
	# twice, 0.3 s apart
	fds() {
		local a b
		b=$(ls "/proc/$SERVE_PID/fd" | wc -l)
		for _ in $(seq 30); do
			sleep 0.3
			a=$b
			b=$(ls "/proc/$SERVE_PID/fd" | wc -l)
			[ "$a" != "$b" ] || break
		done
		echo "$b"
	}
	garbage 100
	local rss0 fds0
	fds0=$(fds)
	rss0=$(rss)
	garbage 900
	local i rss50
	for i in $(seq 100); do
		as nobody "$DFT" -q -o t.pfw.gz -- true
		if [ "$i" = 50 ]; then
			sleep 1
			rss50=$(rss)
		fi
	done
	sleep 1 # the last children reaped
	echo "# rss $rss0 -> $rss50 after 50 traces -> $(rss) kB after 100, fds $fds0 -> $(fds)"
	expect_eq "descriptors" "$(fds)" "$fds0"
	(($(rss) <= rss0 + 768))
	# flat: the second 50 traces grew it by no more than a page or so
	(($(rss) <= rss50 + 16))
	kill -0 "$SERVE_PID"
}

@test "service: --torch labels the client's command's phases, as under sudo" {
	/usr/bin/python3 -c 'import torch' 2>/dev/null || skip "no torch under /usr/bin/python3"
	serve
	run as nobody "$DFT" -q --torch -o t.pfw.gz -- /usr/bin/python3 -c \
		'import torch; m = torch.nn.Linear(2, 2); [m(torch.ones(1, 2)) for _ in range(3)]'
	[ "$status" = 0 ]
	expect_eq "forward regions" "$(tpy count "$NB/t.pfw.gz" --cat compute --name forward)" 3
}
