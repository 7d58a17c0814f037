#!/usr/bin/env bats
# make install PREFIX=...: binary, man page, header and pkg-config file,
# and a program built against the installed header through pkg-config.

ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"

setup() {
	T="$(mktemp -d /tmp/dft-install.XXXXXX)"
}

teardown() {
	rm -rf "$T"
}

@test "install: binary, man page, header and pkg-config file land under PREFIX" {
	make -s -C "$ROOT" install PREFIX="$T/p" >/dev/null
	[ -x "$T/p/bin/dftrace-bpf" ]
	[ -f "$T/p/share/man/man8/dftrace-bpf.8" ]
	[ -f "$T/p/include/dftrace/usdt.h" ]
	grep -qx "prefix=$T/p" "$T/p/lib/pkgconfig/dftrace-usdt.pc"
	run man -l "$T/p/share/man/man8/dftrace-bpf.8"
	printf '%s\n' "$output" | grep -q -- "--inline-paths"
}

@test "install: the installed binary's --torch finds the installed Python package, whatever PREFIX" {
	make -s -C "$ROOT" install PREFIX="$T/p" >/dev/null
	cd "$T"
	"$T/p/bin/dftrace-bpf" -q --torch -o "$T/t.pfw" -- /usr/bin/python3 -c \
		'import dftrace; print(dftrace.__file__)' >"$T/out"
	[ "$(cat "$T/out")" = "$T/p/lib/dftrace-bpf/python/dftrace/__init__.py" ]
}

@test "install: a C program finds the header through pkg-config" {
	make -s -C "$ROOT" install PREFIX="$T/p" >/dev/null
	printf '%s\n' '#include <dftrace/usdt.h>' 'int main(void) { DFT_USDT_FORWARD(); return 0; }' >"$T/u.c"
	cflags=$(PKG_CONFIG_PATH="$T/p/lib/pkgconfig" pkg-config --cflags dftrace-usdt)
	gcc -Wall -Wextra -Werror $cflags "$T/u.c" -o "$T/u"
	"$T/u"
}

@test "install: --help documents every option with examples" {
	run "$ROOT/dftrace-bpf" --help
	[ "$status" = 0 ]
	for opt in --pid --output --output-dir --plain --compress-level --duration \
		--inline-paths --ringbuf-size --quiet --verbose --torch EXAMPLES; do
		printf '%s\n' "$output" | grep -q -- "$opt"
	done
}

@test "install: the man page documents every long option that --help lists" {
	opts=$("$ROOT/dftrace-bpf" --help | grep -o -- '--[a-z][a-z-]*' | sort -u)
	[ "$(printf '%s\n' "$opts" | wc -l)" -ge 12 ]
	man=$(MANWIDTH=200 man -l "$ROOT/doc/dftrace-bpf.8" 2>/dev/null)
	for opt in $opts; do
		printf '%s\n' "$man" | grep -q -- "$opt" || { echo "# man page lacks $opt"; return 1; }
	done
}

@test "install: pip install ./usdt/python into a venv works offline, and the installed package's annotations reach the trace" {
	/usr/bin/python3 -m venv --system-site-packages "$T/venv"
	# a copy: pip builds in the source tree, which the test must not touch
	cp -r "$ROOT/usdt/python" "$T/src"
	rm -rf "$T/src/build" "$T/src"/*.egg-info
	DFTRACE_INCLUDE="$ROOT/include" "$T/venv/bin/python" -m pip install -q \
		--no-build-isolation --no-index "$T/src"
	head -c 12345 /dev/urandom >"$T/data.bin"
	cat >"$T/job.py" <<'PY'
import os, sys, time
import dftrace
from dftrace import ai, _usdt
# the probes go live once the tracer has read this module's mapping
deadline = time.time() + 20
while not _usdt.ready() and time.time() < deadline:
    time.sleep(0.01)
with ai.compute.forward:
    with open(sys.argv[1], "rb") as f:
        n = len(f.read())
print(dftrace.__file__)
print(n)
PY
	"$ROOT/dftrace-bpf" -q -o "$T/t.pfw" -- "$T/venv/bin/python" "$T/job.py" "$T/data.bin" >"$T/out"
	[ "$(sed -n 1p "$T/out")" = "$T/venv/lib/python3.11/site-packages/dftrace/__init__.py" ]
	[ "$(sed -n 2p "$T/out")" = 12345 ]
	tpy() { /usr/bin/python3 "$ROOT/tests/lib/trace.py" "$@"; }
	tpy validate "$T/t.pfw"
	[ "$(tpy events "$T/t.pfw" --name forward --fields cat)" = compute ]
	reads=$(tpy events "$T/t.pfw" --name read --path "$T/data.bin" --fields args.phase,args.ret)
	echo "# reads of data.bin (phase, ret): $reads"
	[ "$(printf '%s\n' "$reads" | cut -f1 | sort -u)" = forward ]
	[ "$(printf '%s\n' "$reads" | awk -F'\t' '{s += $2} END {print s}')" = 12345 ]
}

@test "install: one binary for every distribution: it needs only libc's family (libbpf, libelf and zlib linked in)" {
	run ldd "$ROOT/dftrace-bpf"
	echo "$output" | sed 's/^/# /'
	libs=$(awk '$1 ~ /\.so/ { sub(/.*\//, "", $1); print $1 }' <<<"$output" |
		grep -v -E '^(linux-vdso|libc|libm|libdl|libpthread|ld-linux[-a-z0-9_]*)\.so' || true)
	[ -z "$libs" ]
}

@test "install: gzip by igzip where libisal.so.2 is, else zlib: each reads what the other wrote" {
	cd "$T"
	for w in igzip zlib; do
		for r in igzip zlib; do
			wenv=; renv=
			[ "$w" = zlib ] && wenv=zlib
			[ "$r" = zlib ] && renv=zlib
			DFTRACE_BPF_GZIP=$wenv "$ROOT/dftrace-bpf" -q -o "$T/$w.pfw.gz" -- cat /etc/hostname >/dev/null
			zcat "$T/$w.pfw.gz" >"$T/$w.plain"
			run env DFTRACE_BPF_GZIP=$renv "$ROOT/dftrace-bpf" summary --by op --csv "$T/$w.pfw.gz"
			[ "$status" = 0 ]
			grep -q '^"read",' <<<"$output"
		done
	done
	# the same events either way
	[ "$(grep -c . "$T/igzip.plain")" = "$(grep -c . "$T/zlib.plain")" ]
}
