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
		--inline-paths --ringbuf-size --quiet --verbose EXAMPLES; do
		printf '%s\n' "$output" | grep -q -- "$opt"
	done
}
