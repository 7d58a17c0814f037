#!/bin/sh
# Regenerate vmlinux/<arch>/vmlinux.h from the running kernel's BTF. The
# checked-in copy is what the build uses, so a machine without bpftool can
# still build; one directory per architecture the project supports.
set -eu
btf=${1:-/sys/kernel/btf/vmlinux}
arch=$(uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
mkdir -p "$(dirname "$0")/$arch"
out=$(dirname "$0")/$arch/vmlinux.h
[ -r "$btf" ] || { echo "error: no kernel BTF at '$btf'" >&2; exit 1; }
bpftool btf dump file "$btf" format c > "$out.tmp"
mv "$out.tmp" "$out"
echo "wrote $out"
