# The two ranks of tests/workloads/ncclranks (the stand-in libnccl and
# libcuda), each traced on its own: what tests/merge.bats and
# tests/summary.bats run. The FIFOs $T/f01 and $T/f10 join them.

# nccl_ranked HOST RANK [SLOW_STEP SLOW_MS]: `ncclranks RANK 40` traced
# as host HOST (its own UTS namespace) with RANK in its environment, into
# $T/HOST.pfw.gz, its truth into $T/HOST.truth; held until nccl_release
nccl_ranked() {
	local to=$T/f01 from=$T/f10
	[ "$2" = 0 ] || { to=$T/f10 from=$T/f01; }
	RANK=$2 unshare -u sh -c 'hostname "$1" && shift && exec "$@"' sh "$1" \
		"$DFT" -v -o "$T/$1.pfw.gz" -- "$WL/ncclranks" "$2" 40 "$to" "$from" \
		"$WL_CTL/$1.hold" "${@:3}" >"$T/$1.truth" 2>"$T/$1.err"
}

# nccl_release HOST: once its tracer probed libcuda and libnccl, HOST's
# rank goes on
nccl_release() {
	wait_file "$WL_CTL/$1.hold" 30
	await_gpu_probed "$T/$1.err" 2 '.*lib\(cuda\|nccl\)'
	kill -USR1 "$(cat "$WL_CTL/$1.hold")"
}

# nccl_job HOST_A HOST_B [SLOW_STEP SLOW_MS]: both ranks (B's straggling
# in SLOW_STEP), to their end
nccl_job() {
	mkfifo "$T/f01" "$T/f10"
	nccl_ranked "$2" 1 "${@:3}" &
	BG_PIDS+=("$!")
	nccl_ranked "$1" 0 &
	BG_PIDS+=("$!")
	nccl_release "$1"
	nccl_release "$2"
	wait "${BG_PIDS[-1]}" && wait "${BG_PIDS[-2]}" || { cat "$T/$1.err" "$T/$2.err"; return 1; }
}
