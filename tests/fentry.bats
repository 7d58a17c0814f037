#!/usr/bin/env bats
# Per-syscall hooks (the fentry_syscalls feature): where the kernel has
# them, --fentry (the default with --flight and the host-wide scopes)
# traces syscalls through a fentry and a fexit on each recorded call's
# function, and other syscalls pass no hook; --no-fentry (the default
# elsewhere) takes the sys_enter and sys_exit tracepoints. Both ways must
# trace the same calls exactly. This machine's kernel refuses fentry: the tests
# run in the kernel lab (tests/kernels/).

load lib/common

@test "fentry: each io workload is exact through the hooks and through the tracepoints alike" {
	require_feature fentry_syscalls
	local mode opt dir
	for mode in basic pipe relative dup threads exec; do
		for opt in --fentry --no-fentry; do
			dir="$D/$mode$opt"
			mkdir -p "$dir"
			cd "$dir" # relative's paths are from here
			: >"$TRUTH"
			traced $opt -- "$WL/io" "$mode" "$dir"
			valid
			check_truth --under "$dir" || { echo "# io $mode $opt"; return 1; }
		done
	done
}

@test "fentry: -v says how many syscalls are hooked, and the start names the feature both ways; a plain run takes the tracepoints" {
	require_feature fentry_syscalls
	dft -v --fentry -o "$TRACE" -- "$WL/io" basic "$D"
	expect_eq "status" "$DFT_STATUS" 0
	grep -qE '^dftrace-bpf: [0-9]+ syscalls hooked \([0-9]+ stubs and links\) in [0-9.]+ ms$' "$T/dft.err" ||
		{ grep hooked "$T/dft.err"; return 1; }
	run tpy events "$TRACE" --all --name start --fields args.features
	[[ ,$output, == *,fentry_syscalls,* ]] || { echo "# $output"; return 1; }
	for opt in --no-fentry ""; do
		dft -v $opt -o "$TRACE" -- "$WL/io" basic "$D"
		expect_eq "status" "$DFT_STATUS" 0
		expect_eq "hooked with '$opt'" "$(grep -c 'syscalls hooked' "$T/dft.err")" 0
		run tpy events "$TRACE" --all --name start --fields args.features
		[[ ,$output, == *,-fentry_syscalls,* ]] || { echo "# $output"; return 1; }
	done
}
