#!/usr/bin/env bats
# Per-syscall hooks (the fentry_syscalls feature): where the kernel has
# them, syscalls are traced through a fentry and a fexit on each recorded
# call's function, and other syscalls pass no hook; --no-fentry takes the
# sys_enter and sys_exit tracepoints instead. Both ways must trace the
# same calls exactly. This machine's kernel refuses fentry: the tests
# run in the kernel lab (tests/kernels/).

load lib/common

@test "fentry: each io workload is exact through the hooks and through the tracepoints alike" {
	require_feature fentry_syscalls
	local mode opt dir
	for mode in basic pipe relative dup threads exec; do
		for opt in "" --no-fentry; do
			dir="$D/$mode${opt:+-tp}"
			mkdir -p "$dir"
			: >"$TRUTH"
			traced $opt -- "$WL/io" "$mode" "$dir"
			valid
			check_truth --under "$dir" || { echo "# io $mode ${opt:-(hooks)}"; return 1; }
		done
	done
}

@test "fentry: -v says how many syscalls are hooked, and the start names the feature both ways" {
	require_feature fentry_syscalls
	dft -v -o "$TRACE" -- "$WL/io" basic "$D"
	expect_eq "status" "$DFT_STATUS" 0
	grep -qE '^dftrace-bpf: [0-9]+ syscalls hooked \([0-9]+ stubs and links\) in [0-9.]+ ms$' "$T/dft.err" ||
		{ grep hooked "$T/dft.err"; return 1; }
	run tpy events "$TRACE" --all --name start --fields args.features
	[[ ,$output, == *,fentry_syscalls,* ]] || { echo "# $output"; return 1; }
	dft -v --no-fentry -o "$TRACE" -- "$WL/io" basic "$D"
	expect_eq "status" "$DFT_STATUS" 0
	expect_eq "hooked with --no-fentry" "$(grep -c 'syscalls hooked' "$T/dft.err")" 0
	run tpy events "$TRACE" --all --name start --fields args.features
	[[ ,$output, == *,-fentry_syscalls,* ]] || { echo "# $output"; return 1; }
}
