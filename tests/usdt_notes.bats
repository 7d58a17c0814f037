#!/usr/bin/env bats
# The annotation header without root: notes, semaphores and warning-free
# compilation in every language mode it promises.

ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
EX="$ROOT/build/examples"
PROBES="arg_int arg_str ctx_clear ctx_int ctx_str meta region_begin region_end"

setup() {
	T="$(mktemp -d /tmp/dft-notes.XXXXXX)"
}

teardown() {
	rm -rf "$T"
}

# probe names of provider dftrace in FILE, sorted and unique
probes_in() {
	readelf -n "$1" | awk '/Provider: dftrace/ { getline; print $2 }' | sort -u | tr '\n' ' ' | sed 's/ $//'
}

# a TU that uses every macro of the header
write_all_macros() {
	{
		echo '#include <dftrace/usdt.h>'
		echo 'int use_all(int x);'
		echo 'int use_all(int x) {'
		for n in COMPUTE FORWARD BACKWARD STEP DATA PREPROCESS ITEM DATALOADER FETCH \
			COMM SEND RECEIVE BARRIER BCAST REDUCE ALL_REDUCE GATHER ALL_GATHER SCATTER \
			REDUCE_SCATTER ALL_TO_ALL DEVICE TRANSFER CHECKPOINT CAPTURE RESTART \
			PIPELINE EPOCH TRAIN EVALUATE TEST; do
			echo "	{ DFT_USDT_$n(); DFT_USDT_${n}_INIT(); }"
			echo "	DFT_USDT_${n}_BEGIN(); DFT_USDT_${n}_END();"
			echo "	DFT_USDT_${n}_START_META(); DFT_USDT_${n}_STOP_META();"
			echo "	{ struct dft_usdt_iter it = DFT_USDT_${n}_ITER(); dft_usdt_iter_wait(&it); dft_usdt_iter_body(&it); dft_usdt_iter_done(&it); }"
		done
		echo '	DFT_USDT_REGION("custom", "thing"); DFT_USDT_DERIVE("data", "preprocess", "collate");'
		echo '	DFT_USDT_SET_EPOCH(x); DFT_USDT_SET_STEP(x); DFT_USDT_SET_INT("k", x); DFT_USDT_SET_STR("s", "v");'
		echo '	DFT_USDT_CLEAR("k"); DFT_USDT_CLEAR_ALL(); DFT_USDT_ARG_INT("a", x); DFT_USDT_ARG_STR("b", "c");'
		echo '	return DFT_USDT_ENABLED();'
		echo '}'
		echo 'int main(void) { return use_all(0); }'
	} >"$1"
}

@test "notes: minitrain carries the probes of the annotations it uses" {
	# it sets no string context, so ctx_str has no site
	[ "$(probes_in "$EX/minitrain")" = "arg_int arg_str ctx_clear ctx_int meta region_begin region_end" ]
}

@test "notes: every dftrace note has a semaphore" {
	run sh -c "readelf -n '$EX/minitrain' | grep -A2 'Provider: dftrace' | grep -o 'Semaphore: 0x[0-9a-f]*'"
	[ "$status" = 0 ]
	! printf '%s\n' "$output" | grep -q 'Semaphore: 0x0*$'
	[ "$(printf '%s\n' "$output" | wc -l)" -gt 10 ]
}

@test "notes: semaphores are weak, hidden and in .probes" {
	for p in $PROBES; do
		readelf -sW "$EX/minitrain" | grep -E " dftrace_${p}_semaphore$" | grep -q "WEAK *HIDDEN"
	done
	readelf -SW "$EX/minitrain" | grep -q ' \.probes '
}

@test "notes: the shared library has its own notes and semaphores" {
	[ "$(probes_in "$EX/libphase.so")" = "region_begin region_end" ]
	readelf -sW "$EX/libphase.so" | grep -q "dftrace_region_begin_semaphore"
}

@test "header: warning-free in C11, C17, C++11 and C++17 with gcc and clang, -Wall -Wextra -pedantic" {
	write_all_macros "$T/all.c"
	cp "$T/all.c" "$T/all.cpp"
	for cc in gcc clang; do
		for std in c11 c17; do
			$cc -std=$std -Wall -Wextra -pedantic -Werror -I"$ROOT/include" -O2 "$T/all.c" -o "$T/a.out"
		done
	done
	for cxx in g++ clang++; do
		for std in c++11 c++17; do
			$cxx -std=$std -Wall -Wextra -pedantic -Werror -I"$ROOT/include" -O2 "$T/all.cpp" -o "$T/a.out"
		done
	done
	[ "$(probes_in "$T/a.out")" = "$PROBES" ]
}

@test "header: an untraced annotation is a load and a branch, no call" {
	printf '%s\n' '#include <dftrace/usdt.h>' 'void f(void);' \
		'void f(void) { DFT_USDT_FORWARD(); }' >"$T/one.c"
	gcc -O2 -I"$ROOT/include" -c "$T/one.c" -o "$T/one.o"
	run objdump -d --no-show-raw-insn "$T/one.o"
	# the probe sites are nops; nothing is called, no syscall is made
	! printf '%s\n' "$output" | grep -qE '\bcall|\bsyscall'
	printf '%s\n' "$output" | grep -q 'dftrace_region_begin_semaphore\|cmpw\|movzwl'
}
