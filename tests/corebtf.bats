#!/usr/bin/env bats
# The kernel's types for CO-RE (user/capture/corebtf.h): the objects
# relocate against a BTF of the kernel types theirs can match, not the
# kernel's whole BTF; every relocation must come out as against the
# whole. Run on every kernel of the lab (tests/kernels/guest-suite).

load lib/common

# each relocation's outcome, as libbpf says it at -v: the instruction
# patched and its old and new value, the one poisoned, the type not
# found; in a stable order (the halves load at once)
relocations() {
	sed -n "s/^libbpf: \(prog '[^']*': relo #[0-9]*: \(patched\|substituting\|no matching\).*\)/\1/p" \
		"$T/dft.err" | sort
}

# both ways with OPT...: each relocation into $T/core and $T/full, what
# -v said of the types into $T/said
both_ways() {
	dft -v -o "$TRACE" "$@" -- true
	expect_eq "status" "$DFT_STATUS" 0
	relocations >"$T/core"
	sed -n "s/^dftrace-bpf: CO-RE relocated against \([0-9]*\) of the kernel's \([0-9]*\) types, picked in .* ms$/\1 \2/p" \
		"$T/dft.err" >"$T/said"
	DFTRACE_BPF_TEST_FULL_BTF=1 dft -v -o "$TRACE" "$@" -- true
	expect_eq "status, the whole BTF" "$DFT_STATUS" 0
	relocations >"$T/full"
}

@test "corebtf: every CO-RE relocation is the one the kernel's whole BTF gives, and -v says of how many types" {
	both_ways
	expect_eq "-v, the whole BTF: no types picked" \
		"$(grep -c "^dftrace-bpf: CO-RE relocated against" "$T/dft.err")" 0
	# the programs of start-up relocate hundreds of loads
	[ "$(wc -l <"$T/full")" -gt 300 ] || { echo "# $(wc -l <"$T/full") relocations"; false; }
	expect_eq "relocations" "$(diff "$T/full" "$T/core" | head -20)" ""
	read -r picked all <"$T/said"
	[ -n "$picked" ] && [ "$picked" -gt 100 ] && [ $((picked * 20)) -lt "$all" ] ||
		{ echo "# -v: '$(cat "$T/said")'"; false; }
}

@test "corebtf: the per-syscall hooks' relocations too" {
	require_feature fentry_syscalls
	both_ways --fentry
	grep -q "^prog 'call_exit[01]': relo" "$T/full" ||
		{ echo "# no relocation of the hooks' programs"; false; }
	expect_eq "relocations" "$(diff "$T/full" "$T/core" | head -20)" ""
}
