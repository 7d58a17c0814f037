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
