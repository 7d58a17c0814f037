# Shared by the bats files that read USDT notes (needs ROOT).

# The argument specs of a region's begin and end on this machine: the
# registers usdt.h pins them to (DFT_PINNED_ARGS in bpf/dftrace.h, where
# the tracer reads them).
pinned_args() {
	local arch=__x86_64__
	[ "$(uname -m)" != aarch64 ] || arch=__aarch64__
	awk -v arch="$arch" '$0 ~ "defined\\(" arch "\\)" { on = 1; next }
		on && /^#define DFT_PINNED_ARGS/ { sub(/^[^"]*"/, ""); sub(/"$/, ""); print; exit }' \
		"$ROOT/bpf/dftrace.h"
}
