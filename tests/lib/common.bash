# Shared setup for tests/*.bats.  Load with:  load lib/common
#
# Every test gets a fresh directory $T (mode 755, canonical path) holding
#   $D        data directory: the workload's files, accounted exactly
#   $WL_CTL   control files (ready, done, heartbeat), exported
#   $TRACE    the trace ($T/t.pfw.gz)
#   $TRUTH    the workload's ground truth (its stdout, appended)
# and removed afterwards (set DFT_KEEP=1 to keep it).  Teardown ends, by
# pid, every process the test started (end_test_processes), whether the
# test passed or failed: none is left to hold bats's output.

ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
DFT="$ROOT/dftrace-bpf"
WL="$ROOT/build/workloads"
TRACEPY="$ROOT/tests/lib/trace.py"
# -D names files <host>[-r<rank>]-<comm>-<pid>: the host as it is written
HOSTTAG="$(hostname | tr './' '__')"
# the interpreter itself, not a wrapper script (pyenv shims cost ~0.1 s a
# call, 3 s in a lab guest): found once by tests/run or the guest's suite,
# or else at each test's load
PY="${DFT_TEST_PY:-$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null || echo python3)}"
# generous upper bounds, never assertions: a hung tracer fails the test
DFT_TIMEOUT="${DFT_TIMEOUT:-120}"
# "${DEFAULT_SIGNALS[@]}" CMD...: CMD with every signal at its default
# disposition, whatever the suite inherited (nohup ignores HUP, a
# script's background job INT and QUIT, trap '' anything), so that a
# signal a test sends does what the test expects: the tracer keeps an
# ignored HUP, and bash cannot undo what was ignored when it started.
DEFAULT_SIGNALS=(env --default-signal)

setup() {
	common_setup
}

# A file's own setup calls this first.
common_setup() {
	[ -x "$DFT" ] || { echo "# $DFT is not built (run make)"; return 1; }
	[ -d "$WL" ] || { echo "# $WL is not built (run make)"; return 1; }
	T="$(mktemp -d /tmp/dft-test.XXXXXX)"
	chmod 755 "$T"
	T="$(realpath "$T")"
	D="$T/d"
	export WL_CTL="$T/ctl"
	mkdir -p "$D" "$WL_CTL"
	TRACE="$T/t.pfw.gz"
	TRUTH="$T/truth.tsv"
	: >"$TRUTH"
	BG_PIDS=()
	MOUNTS=()
	# in the environment of whatever the test starts, and of what that
	# starts: an orphan of the test is still known as the test's
	export DFT_TEST_TAG="$T"
}

teardown() {
	common_teardown
}

common_teardown() {
	local m ended=0
	end_test_processes || ended=$?
	for m in "${MOUNTS[@]}"; do
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
	done
	if [ -n "${DFT_KEEP:-}" ]; then
		echo "# kept $T" >&3
	else
		rm -rf "$T"
	fi
	return "$ended"
}

# test_pids TAG SHELL: the processes of the test whose tag is TAG and
# whose shell is SHELL that have not exited, one pid a line: those with
# the tag in their environment, SHELL's children in BG_PIDS, and all
# their descendants (a program may clear its environment); never SHELL
# nor what runs it.
test_pids() {
	local tagged=""
	[ -z "$1" ] || tagged=$(grep -lzxF "DFT_TEST_TAG=$1" /proc/[0-9]*/environ 2>/dev/null |
		cut -d/ -f3)
	ps -e -o pid=,ppid=,stat= | awk -v shell="$2" -v tagged="$tagged" -v bg="${BG_PIDS[*]}" '
		{ parent[$1] = $2; zombie[$1] = $3 ~ /^[ZX]/; kids[$2] = kids[$2] " " $1 }
		END {
			for (p = shell; p in parent && p > 1; p = parent[p])
				ours[p] = 1
			n = split(tagged, todo, "\n")
			m = split(bg, b, " ")
			for (i = 1; i <= m; i++)
				if (parent[b[i]] == shell)
					todo[++n] = b[i]
			for (i = 1; i <= n; i++) {
				if (todo[i] in seen)
					continue
				seen[todo[i]] = 1
				k = split(kids[todo[i]], c, " ")
				for (j = 1; j <= k; j++)
					todo[++n] = c[j]
			}
			for (p in seen)
				if (p in parent && !(p in ours) && !zombie[p])
					print p
		}' | sort -n
}

# end_test_processes: SIGKILL every process the test started (test_pids),
# frozen first (SIGSTOP) until a look finds no new one, so that none
# forks a child the kill would miss; then reap the shell's own.  Fails
# if one outlives 10 s of this.
end_test_processes() {
	local tag=${DFT_TEST_TAG-} shell=$BASHPID pids again i p
	# what teardown runs is not the test's
	export -n DFT_TEST_TAG
	# (stderr: the shell's notes of its jobs killed, not worth reading)
	for ((i = 0; i < 200; i++)); do
		pids=$(test_pids "$tag" "$shell")
		[ -n "$pids" ] || break
		# shellcheck disable=SC2086 # a list of pids
		kill -STOP $pids
		again=$(test_pids "$tag" "$shell")
		# shellcheck disable=SC2086
		[ "$again" != "$pids" ] || kill -KILL $pids
		sleep 0.05
	done 2>/dev/null
	for p in "${BG_PIDS[@]}"; do
		wait "$p" || true
	done 2>/dev/null
	if [ -n "$pids" ]; then
		echo "# teardown: still running after SIGKILL: ${pids//$'\n'/ }"
		return 1
	fi
}

# The kernel lab's guest (tests/kernels/guest-suite sets DFT_LAB_GUEST)
# runs the suite under TCG, 15 to 50 times slower than here, and the
# whole suite shares one hour there.
#   lab_size HOST GUEST   a workload's size: HOST here, GUEST in the guest
#   host_only WHY         skips the test in the guest: what it checks is
#                         user space, and other tests take the same
#                         kernel paths there
#   host_also CMD...      runs CMD here, not in the guest: a variant of a
#                         check before it that takes the same kernel path
lab_size() { if [ -n "${DFT_LAB_GUEST:-}" ]; then echo "$2"; else echo "$1"; fi; }
host_only() { [ -z "${DFT_LAB_GUEST:-}" ] || skip "on the host only: $1"; }
host_also() { [ -n "${DFT_LAB_GUEST:-}" ] || "$@"; }

# trace.py, the trace reader and checker; like the other helpers in
# tests/lib, it needs nothing but the standard library: -S spares the
# site packages' start-up (60 ms here, 1.3 s a call in a lab guest)
tpy() { "$PY" -S "$TRACEPY" "$@"; }

# has_feature NAME: whether this kernel gives the tracer the feature
# (dftrace-bpf --version's table).
has_feature() {
	"$DFT" --version | awk -v f="$1" '$1 == f { found = 1; exit $2 == "on" ? 0 : 1 }
		END { if (!found) exit 2 }'
}

# require_feature NAME...: skip unless this kernel gives the tracer each
# feature. The kernel lab checks that each kernel has exactly its expected
# set (tests/kernels/features), so a skip here is never a surprise.
require_feature() {
	local f
	for f in "$@"; do
		has_feature "$f" || skip "$f is off on this kernel ($(uname -r))"
	done
}

# check_scan_passes DIR: $WL/mapped's two passes over DIR/scan, as it
# reported them to $TRUTH: each its mmap and 64 pages read through it,
# the first's misses the pages mincore did not find cached, the second's
# none.
check_scan_passes() {
	local cached1
	run tpy events "$TRACE" --path "$1/scan" --name mmap,mmap_read \
		--fields name,args.ret,args.pages,args.misses
	read -r _ _ _ _ cached1 <<<"$(grep -P '^mpass\t.*\t1\t' "$TRUTH")"
	"$PY" - "$output" "$cached1" <<-'EOF'
	import sys
	rows = [l.split("\t") for l in sys.argv[1].splitlines()]
	passes, cur = [], None
	for name, ret, pages, misses in rows:
	    if name == "mmap":
	        cur = [0, 0, 0]
	        passes.append(cur)
	    elif cur is not None:
	        cur[0] += int(ret); cur[1] += int(pages); cur[2] += int(misses)
	want = [[65536 * 4, 64, 64 - int(sys.argv[2])], [65536 * 4, 64, 0]]
	if passes != want:
	    print("# passes over scan (bytes, pages, misses): got %s, want %s"
	          % (passes, want))
	    sys.exit(1)
	EOF
}

# dft [ARG...]: run the tracer in the foreground with a time limit, its
# signals at their defaults; its stdout (with -- CMD: the workload's
# ground truth) goes to $TRUTH, stderr to $T/dft.err.  Sets DFT_STATUS;
# never fails by itself.
dft() {
	DFT_STATUS=0
	timeout -k 5 "$DFT_TIMEOUT" "${DEFAULT_SIGNALS[@]}" "$DFT" "$@" >>"$TRUTH" 2>"$T/dft.err" ||
		DFT_STATUS=$?
	if [ "$DFT_STATUS" = 124 ] || [ "$DFT_STATUS" = 137 ]; then
		echo "# dftrace-bpf did not finish within ${DFT_TIMEOUT}s"
	fi
	return 0
}

# traced [OPT...] -- CMD...: trace CMD into $TRACE; fail unless the tracer
# exits 0.
traced() {
	dft -q -o "$TRACE" "$@"
	if [ "$DFT_STATUS" != 0 ]; then
		echo "# dftrace-bpf exited $DFT_STATUS; stderr:"
		sed 's/^/#   /' "$T/dft.err"
		return 1
	fi
}

# start_bg VAR CMD...: start CMD in the background, its signals at their
# defaults (stdout appended to $TRUTH, stderr to $T/bg.err); its pid goes
# into VAR and into BG_PIDS.
start_bg() {
	local var=$1
	shift
	"${DEFAULT_SIGNALS[@]}" "$@" >>"$TRUTH" 2>>"$T/bg.err" &
	BG_PIDS+=("$!")
	printf -v "$var" '%s' "$!"
}

# wait_file PATH [SECONDS]: wait until PATH exists.
wait_file() {
	local i n=$(( ${2:-20} * 50 ))
	for ((i = 0; i < n; i++)); do
		[ -e "$1" ] && return 0
		sleep 0.02
	done
	echo "# timed out waiting for $1"
	[ ! -s "$T/bg.err" ] || sed 's/^/#   /' "$T/bg.err"
	return 1
}

# await_gpu_probed ERR N [WHAT]: the tracer's stderr ERR (-v) said it
# probed N GPU libraries (N of those whose path WHAT, a grep pattern,
# matches), within 30 s.
await_gpu_probed() {
	local i
	for ((i = 0; i < 1500; i++)); do
		[ "$(grep -c "^dftrace-bpf: GPU calls in ${3:-}" "$1" 2>/dev/null)" -ge "$2" ] &&
			return 0
		sleep 0.02
	done
	echo "# the tracer probed fewer than $2 GPU libraries${3:+ matching '$3'}:"
	sed 's/^/#   /' "$1"
	return 1
}

# wait_line FILE PATTERN: wait until a line of FILE matches PATTERN.
wait_line() {
	local i
	for ((i = 0; i < 1500; i++)); do
		grep -qE "$2" "$1" 2>/dev/null && return 0
		sleep 0.02
	done
	echo "# no line matching '$2' in $1:"
	sed 's/^/#   /' "$1"
	return 1
}

# running PID: PID exists and is not a zombie
running() {
	local st
	st=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
	[ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}

# await PID [SECONDS]: wait for a background child to end; sets
# AWAIT_STATUS to its exit status.  Fails if it does not end in time.
await() {
	local i n=$(( ${2:-$DFT_TIMEOUT} * 50 ))
	for ((i = 0; i < n; i++)); do
		running "$1" || break
		sleep 0.02
	done
	if running "$1"; then
		echo "# pid $1 did not exit within ${2:-$DFT_TIMEOUT}s"
		return 1
	fi
	AWAIT_STATUS=0
	wait "$1" || AWAIT_STATUS=$?
}

# start_workload CMD...: start a workload that calls wl_wait_go() and wait
# for its ready file; sets WL_PID.
start_workload() {
	rm -f "$WL_CTL/ready"
	start_bg WL_PID "$@"
	wait_file "$WL_CTL/ready" 20
	[ "$(cat "$WL_CTL/ready")" = "$WL_PID" ] ||
		{ echo "# ready file holds $(cat "$WL_CTL/ready"), pid is $WL_PID"; return 1; }
}

# attach [OPT...]: attach the tracer to $WL_PID in the background (DFT_PID),
# writing $TRACE, and wait until the workload's heartbeat shows in the
# trace: then the tracer is surely attached.
attach() {
	"${DEFAULT_SIGNALS[@]}" "$DFT" -o "$TRACE" -p "$WL_PID" "$@" 2>"$T/dft.err" &
	DFT_PID=$!
	BG_PIDS+=("$DFT_PID")
	tpy wait-for "$TRACE" --pid "$WL_PID" --alive "$DFT_PID" --timeout 30 || {
		echo "# the tracer never showed the workload's heartbeat; stderr:"
		sed 's/^/#   /' "$T/dft.err"
		return 1
	}
}

# finish_attached: send SIGUSR1 to the workload, wait for it (must exit 0)
# and for the tracer, which must stop by itself once the tree has exited
# and exit 0.
finish_attached() {
	kill -USR1 "$WL_PID"
	await "$WL_PID" 60
	[ "$AWAIT_STATUS" = 0 ] || { echo "# workload exited $AWAIT_STATUS"; cat "$T/bg.err"; return 1; }
	await "$DFT_PID"
	[ "$AWAIT_STATUS" = 0 ] || { echo "# dftrace-bpf exited $AWAIT_STATUS"; cat "$T/dft.err"; return 1; }
}

# check_truth [trace.py check options]: the trace agrees with $TRUTH.
check_truth() {
	run tpy check "$TRACE" "$TRUTH" "$@"
	if [ "$status" != 0 ]; then
		echo "# trace.py check $* failed:"
		printf '%s\n' "$output" | sed 's/^/#   /'
		return 1
	fi
}

# valid [--partial]: the trace file is well formed (complete unless
# --partial).
valid() {
	run tpy validate "$TRACE" "$@"
	if [ "$status" != 0 ]; then
		printf '%s\n' "$output" | head -40 | sed 's/^/#   /'
		return 1
	fi
}

# is_error_line FILE: FILE holds exactly one line, "dftrace-bpf: " and a
# message that does not start with a capital.
is_error_line() {
	local n
	n=$(wc -l <"$1")
	if [ "$n" != 1 ] || ! grep -qE '^dftrace-bpf: [^A-Z]' "$1"; then
		echo "# expected one 'dftrace-bpf: <lowercase message>' line; got:"
		sed 's/^/#   /' "$1"
		return 1
	fi
}

# expect_eq WHAT GOT WANT
expect_eq() {
	if [ "$2" != "$3" ]; then
		echo "# $1: got '$2', want '$3'"
		return 1
	fi
}

# stopped_while FILE [OPT...] -- CMD...: trace CMD (a workload that
# writes $WL_CTL/ready, waits for SIGUSR1, works, writes $WL_CTL/FILE
# and waits for SIGUSR1 again) in the background, with the
# tracer stopped (SIGSTOP) while it works: the ring buffer fills and
# stays full, whatever the machine's load. Sets wl and DFT_PID.
stopped_while() {
	local mid=$1
	shift
	rm -f "$WL_CTL/ready" "$WL_CTL/$mid"
	"${DEFAULT_SIGNALS[@]}" "$DFT" -q "$@" >>"$TRUTH" 2>"$T/dft.err" &
	DFT_PID=$!
	BG_PIDS+=("$DFT_PID")
	wait_file "$WL_CTL/ready" 20
	wl=$(cat "$WL_CTL/ready")
	BG_PIDS+=("$wl")
	kill -STOP "$DFT_PID"
	kill -USR1 "$wl"
	wait_file "$WL_CTL/$mid" 60
	kill -CONT "$DFT_PID"
}

# finish_stopped: the workload of stopped_while ends; the tracer must
# exit 0 and leave a valid trace.
finish_stopped() {
	kill -USR1 "$wl"
	await "$DFT_PID"
	[ "$AWAIT_STATUS" = 0 ] || { sed 's/^/#   /' "$T/dft.err"; false; }
	valid
}
