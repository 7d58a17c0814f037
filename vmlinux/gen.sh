#!/bin/sh
# Regenerate vmlinux.h from the running kernel's BTF. The checked-in copy
# is what the build uses, so a machine without bpftool can still build.
set -eu
btf=${1:-/sys/kernel/btf/vmlinux}
out=$(dirname "$0")/vmlinux.h
[ -r "$btf" ] || { echo "error: no kernel BTF at '$btf'" >&2; exit 1; }
bpftool btf dump file "$btf" format c > "$out.tmp"
mv "$out.tmp" "$out"
echo "wrote $out"
