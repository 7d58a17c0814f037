# Fresh copies of a probed library under the tracer (tests/workloads/
# libcopies.c), for gpu.bats and annotate.bats. Load after lib/common.

COPIES="$WL/libcopies"
STANDIN="$ROOT/build/standin"

# copies_pid NAME: the workload's pid from $WL_CTL/NAME (waited for), also
# ended by teardown.
copies_pid() {
	wait_file "$WL_CTL/$1" 60 || return 1
	COPIES_PID=$(cat "$WL_CTL/$1")
	BG_PIDS+=("$COPIES_PID")
}

# copies_traced MODE LIB N CTL: trace `libcopies MODE LIB $D N` (-v) in
# the background (DFT_PID) until the workload writes $WL_CTL/CTL.
copies_traced() {
	"$DFT" -v -o "$TRACE" -- "$COPIES" "$1" "$2" "$D" "$3" >>"$TRUTH" 2>"$T/dft.err" &
	DFT_PID=$!
	BG_PIDS+=("$DFT_PID")
	copies_pid "$4"
}

# copies N_FAST N_SLOW: how many copies a test loads in turn. Before Linux
# 6.6 (no uprobe_multi) each uprobe is released alone, about 10 a second
# (capture/uprobes.h), and the kernel lab's guests run 10 times slower:
# there, fewer.
copies() {
	local v
	v=$(uname -r)
	v=${v%%-*}
	if [ "$(printf '%s\n' 6.6 "$v" | sort -V | head -1)" = 6.6 ]; then
		echo "$1"
	else
		echo "$2"
	fi
}

# tracer_fds: the tracer's descriptors, the fewest of five looks (a look
# may catch one it holds for a moment, reading /proc).
tracer_fds() {
	local i n least=
	for ((i = 0; i < 5; i++)); do
		n=$(ls "/proc/$DFT_PID/fd" | wc -l)
		[ -z "$least" ] || [ "$n" -lt "$least" ] && least=$n
		sleep 0.02
	done
	echo "$least"
}

# count_lines PATTERN: lines of the tracer's stderr that match.
count_lines() {
	grep -cE "$1" "$T/dft.err" || true
}

# await_lines PATTERN N [SECONDS]: until N lines of the tracer's stderr
# match (60 s at most).
await_lines() {
	local i
	for ((i = 0; i < ${3:-60} * 50; i++)); do
		[ "$(count_lines "$1")" -ge "$2" ] && return 0
		sleep 0.02
	done
	echo "# $(count_lines "$1") lines of the tracer's match '$1', not $2:"
	tail -20 "$T/dft.err" | sed 's/^/#   /'
	return 1
}

# copies_each LIB N WHAT: trace `libcopies each LIB $D N` (-v): each copy
# is called once the tracer said it probed it (WHAT: "GPU calls",
# "annotations"). FDS_BEFORE: the tracer's descriptors before the first
# copy; FDS_AFTER: once it said it released all N, the workload still
# running; FDS_LAZY: those it said its programs loaded at their first use
# hold (kept till the end, once). The tracer must exit 0.
copies_each() {
	local lib=$1 n=$2 what=$3 i
	copies_traced each "$lib" "$n" ready
	FDS_BEFORE=$(tracer_fds)
	kill -USR1 "$COPIES_PID"
	for ((i = 1; i <= n; i++)); do
		wait_line "$T/dft.err" "^dftrace-bpf: $what in '$D/copy-$i.so'" || return 1
		kill -USR1 "$COPIES_PID"
	done
	wait_file "$WL_CTL/done" 60
	await_lines "^dftrace-bpf: probes in '$D/copy-[0-9]+.so' released" "$n" "$DFT_TIMEOUT"
	FDS_AFTER=$(tracer_fds)
	FDS_LAZY=$(sed -n 's/^dftrace-bpf: \(annotation\|GPU call\) programs loaded in .* (\([0-9]*\) descriptors)$/\2/p' "$T/dft.err" |
		awk '{ n += $1 } END { print n + 0 }')
	kill -USR1 "$COPIES_PID"
	await "$DFT_PID" 60
	[ "$AWAIT_STATUS" = 0 ] || { tail -20 "$T/dft.err" | sed 's/^/#   /'; return 1; }
}
