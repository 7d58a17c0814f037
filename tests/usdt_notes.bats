#!/usr/bin/env bats
# The annotation header without root: notes, semaphores and warning-free
# compilation in every language mode it promises.  Uses build/examples when
# it is built, else builds the examples itself into a temporary directory.

ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
load lib/notes
PROBES="arg_int arg_str ctx_clear ctx_int ctx_str meta region_begin region_end regions"

setup_file() {
	local b="$ROOT/build/examples" ex="$ROOT/usdt/examples"
	if [ -x "$b/minitrain" ] && [ -x "$b/minitrain_cpp" ] && [ -f "$b/libphase.so" ]; then
		export EX="$b"
		return 0
	fi
	export EX="$BATS_FILE_TMPDIR/examples"
	mkdir -p "$EX"
	gcc -O2 -g -Wall -Wextra -std=gnu11 -D_GNU_SOURCE -I"$ROOT/include" \
		"$ex/minitrain.c" -o "$EX/minitrain"
	g++ -O2 -g -Wall -Wextra -std=c++11 -I"$ROOT/include" \
		"$ex/minitrain_cpp.cpp" -o "$EX/minitrain_cpp"
	gcc -O2 -g -Wall -Wextra -std=gnu11 -fPIC -shared -I"$ROOT/include" \
		"$ex/libphase.c" -o "$EX/libphase.so"
}

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

# check_notes FILE: every dftrace note's semaphore is the address of that
# probe's semaphore symbol in FILE (the one FILE's own code reads), that
# symbol lies in .probes, and the arguments are what the tracer reads:
# registers or immediates only (libbpf cannot read "sym(%rip)" operands)
# in the order and sizes of the probe contract, and a region's begin and
# end exactly in the pinned registers. One awk pass: the section table,
# then the symbol table, then the notes.
check_notes() {
	local f=$1 out pinned
	pinned=$(pinned_args)
	[ -n "$pinned" ] || { echo "# no DFT_PINNED_ARGS for $(uname -m)"; return 1; }
	out=$({
		readelf -SW "$f" | sed -E 's/^ *\[ *[0-9]+\] *//' |
			awk '$1 == ".probes" { print "SECTION", $3, $5 }'
		readelf -sW "$f" | awk '$8 ~ /^dftrace_[a-z_]+_semaphore$/ { print "SYMBOL", $8, $2 }'
		readelf -n "$f"
	} | awk -v f="$f" -v pinned="$pinned" '
		function hex(s,   i, n, c) {
			sub(/^0x/, "", s); n = 0
			for (i = 1; i <= length(s); i++) {
				c = index("0123456789abcdef", tolower(substr(s, i, 1))) - 1
				n = n * 16 + c
			}
			return n
		}
		BEGIN {
			want["region_begin"] = want["region_end"] = want["meta"] = "8@R 8@R -8@R"
			want["regions"] = "8@R 8@R -8@R"
			want["ctx_int"] = want["arg_int"] = "8@R -8@R"
			want["ctx_str"] = want["arg_str"] = "8@R 8@R"
			want["ctx_clear"] = "8@R"
		}
		$1 == "SECTION" { lo = hex($2); hi = lo + hex($3); next }
		$1 == "SYMBOL" { sym[$2] = hex($3); next }
		/Provider:/ { prov = $2 }
		/Name:/ { name = $2 }
		/Semaphore:/ { sema = hex($NF) }
		/Arguments:/ {
			if (prov != "dftrace")
				next
			n++
			$1 = ""; args = substr($0, 2); a = args
			gsub(/@(%[a-z0-9]+|\$-?[0-9]+)/, "@R", a)
			s = "dftrace_" name "_semaphore"
			if (!(name in want))
				print f ": unknown probe " name
			else if (!(s in sym) || sym[s] != sema)
				print f ": " name " note semaphore " sema " is not " s
			else if (!hi || sema < lo || sema >= hi)
				print f ": " name " semaphore " sema " outside .probes"
			else if (a != want[name])
				print f ": " name " arguments \"" args "\", want registers or immediates as \"" want[name] "\""
			else if (name ~ /^region(_|s$)/ && args != pinned)
				print f ": " name " arguments \"" args "\", want the pinned \"" pinned "\""
		}
		END { if (!n) print f ": no dftrace notes" }')
	if [ -n "$out" ]; then
		printf '%s\n' "$out" | head -5 | sed 's/^/# /'
		return 1
	fi
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
		echo '	{ DFT_USDT_REGION("custom", "thing"); DFT_USDT_REGION("custom", "other"); DFT_USDT_DERIVE("data", "preprocess", "collate"); }'
		echo '	DFT_USDT_REGION_BEGIN("custom", "x"); DFT_USDT_REGION_END("custom", "x");'
		echo '	DFT_USDT_DERIVE_BEGIN("data", "preprocess", "pad"); DFT_USDT_DERIVE_END("data", "preprocess", "pad");'
		echo '	{ struct dft_usdt_iter it = DFT_USDT_ITER("custom", "loop"); dft_usdt_iter_wait(&it); dft_usdt_iter_done(&it); dft_usdt_iter_done(&it); }'
		echo '	DFT_USDT_SET_EPOCH(x); DFT_USDT_SET_STEP(x); DFT_USDT_SET_INT("k", x); DFT_USDT_SET_STR("s", "v");'
		echo '	DFT_USDT_CLEAR("k"); DFT_USDT_CLEAR_ALL(); DFT_USDT_ARG_INT("a", x); DFT_USDT_ARG_STR("b", "c");'
		echo '	return DFT_USDT_ENABLED();'
		echo '}'
		echo 'int main(void) { return use_all(0); }'
	} >"$1"
}

@test "notes: minitrain carries the probes of the annotations it uses" {
	# it sets no string context, so ctx_str has no site
	[ "$(probes_in "$EX/minitrain")" = "arg_int arg_str ctx_clear ctx_int meta region_begin region_end regions" ]
	# nor does the C++ one, and it clears no context either
	[ "$(probes_in "$EX/minitrain_cpp")" = "arg_int arg_str ctx_int meta region_begin region_end regions" ]
}

@test "notes: every dftrace note has a semaphore" {
	run sh -c "readelf -n '$EX/minitrain' | grep -A2 'Provider: dftrace' | grep -o 'Semaphore: 0x[0-9a-f]*'"
	[ "$status" = 0 ]
	! printf '%s\n' "$output" | grep -q 'Semaphore: 0x0*$'
	[ "$(printf '%s\n' "$output" | wc -l)" -gt 10 ]
}

@test "notes: each note names its own probe's semaphore in .probes; arguments are registers or immediates" {
	check_notes "$EX/minitrain"
	check_notes "$EX/minitrain_cpp"
	check_notes "$EX/libphase.so"
	# the Python extension (make python) is built from the same header
	for so in "$ROOT"/build/python/dftrace/_usdt*.so; do
		[ ! -e "$so" ] || check_notes "$so"
	done
}

@test "notes: semaphores are weak, hidden and in .probes" {
	for p in $PROBES; do
		readelf -sW "$EX/minitrain" | grep -E " dftrace_${p}_semaphore$" | grep -q "WEAK *HIDDEN"
	done
	readelf -SW "$EX/minitrain" | grep -q ' \.probes '
	# .probes holds data in the file: the kernel finds semaphores by offset
	readelf -SW "$EX/minitrain" | grep ' \.probes ' | grep -q PROGBITS
	# in an object file, before linking, as the header defines them
	gcc -O2 -fPIC -I"$ROOT/include" -c "$ROOT/usdt/examples/libphase.c" -o "$T/lib.o"
	for p in region_begin region_end; do
		readelf -sW "$T/lib.o" | grep -E " dftrace_${p}_semaphore$" | grep -q "WEAK *HIDDEN"
	done
}

@test "notes: the shared library has its own notes and semaphores, and exports none" {
	[ "$(probes_in "$EX/libphase.so")" = "region_begin region_end regions" ]
	readelf -sW "$EX/libphase.so" | grep -q "dftrace_region_begin_semaphore"
	# hidden: not in the dynamic symbol table, so nobody can interpose it
	! readelf --dyn-syms -W "$EX/libphase.so" | grep -q semaphore
}

@test "header: warning-free in C11, C17, C++11 and C++17 with gcc and clang, -Wall -Wextra -pedantic" {
	write_all_macros "$T/all.c"
	cp "$T/all.c" "$T/all.cpp"
	for opt in -O0 -O2; do
		for cc in gcc clang; do
			for std in c11 c17; do
				$cc -std=$std $opt -Wall -Wextra -pedantic -Werror -I"$ROOT/include" "$T/all.c" -o "$T/a.out"
				[ "$(probes_in "$T/a.out")" = "$PROBES" ]
				check_notes "$T/a.out"
				"$T/a.out"
			done
		done
		for cxx in g++ clang++; do
			for std in c++11 c++17; do
				$cxx -std=$std $opt -Wall -Wextra -pedantic -Werror -I"$ROOT/include" "$T/all.cpp" -o "$T/a.out"
				[ "$(probes_in "$T/a.out")" = "$PROBES" ]
				check_notes "$T/a.out"
				"$T/a.out"
			done
		done
	done
}

@test "header: arguments in globals, struct fields and locals stay registers or immediates" {
	cat >"$T/g.c" <<-'EOF'
	#include <dftrace/usdt.h>
	long gepoch = 3;
	const char *gname = "n";
	struct s { long a, b; } gs;
	void f(struct s *p, long v);
	void f(struct s *p, long v) {
		DFT_USDT_SET_EPOCH(gepoch); DFT_USDT_SET_STR("k", gname);
		DFT_USDT_SET_INT("b", p->b); DFT_USDT_SET_INT("c", gs.b); DFT_USDT_SET_STEP(v);
		DFT_USDT_ARG_INT("d", gs.a); DFT_USDT_ARG_STR("e", gname); DFT_USDT_CLEAR(gname);
		dft__region(0, gname, gname, gs.a); dft__region(1, gname, gname, p->a);
		dft__meta(gname, gname, gepoch);
	}
	int main(void) { struct s x = {1, 2}; f(&x, 5); return 0; }
	EOF
	for cc in gcc clang; do
		for opt in -O0 -O2 "-O2 -fPIC" "-O2 -flto"; do
			$cc $opt -Wall -Wextra -Werror -I"$ROOT/include" "$T/g.c" -o "$T/g"
			check_notes "$T/g"
		done
	done
}

@test "header: C++ inline functions in two translation units link and keep one semaphore per probe" {
	printf '%s\n' '#include <dftrace/usdt.h>' \
		'inline int shared(int x) { DFT_USDT_FORWARD(); DFT_USDT_SET_INT("x", x); return x + 1; }' \
		'template <class T> T twice(T v) { DFT_USDT_BACKWARD(); return v * 2; }' >"$T/h.hpp"
	printf '%s\n' '#include "h.hpp"' 'int fa(int x) { return shared(x) + twice(x); }' >"$T/a.cpp"
	printf '%s\n' '#include "h.hpp"' 'int fa(int x);' \
		'int main() { dft_usdt_iter it = DFT_USDT_FETCH_ITER(); dft_usdt_iter_wait(&it);' \
		'  return shared(1) + twice(2) + fa(3) == 16 ? 0 : 1; }' >"$T/b.cpp"
	for cxx in g++ clang++; do
		for opt in -O0 -O2; do
			$cxx -std=c++11 $opt -Wall -Wextra -Werror -I"$ROOT/include" "$T/a.cpp" "$T/b.cpp" -o "$T/x"
			"$T/x"
			check_notes "$T/x"
			# one definition of each, however many units define it
			[ "$(readelf -sW "$T/x" | grep -oE 'dftrace_[a-z_]+_semaphore$' | sort | uniq -c | awk '$1 == 1' | wc -l)" = 9 ]
			[ "$(readelf -sW "$T/x" | grep -c 'dftrace_[a-z_]*_semaphore$')" = 9 ]
			# and one ring per thread for the program
			[ "$(readelf -sW "$T/x" | grep -c ' TLS .* dftrace_usdt_ring_v1$')" = 1 ]
		done
	done
}

@test "header: DFT_USDT_DISABLE compiles every annotation out" {
	write_all_macros "$T/all.c"
	cp "$T/all.c" "$T/all.cpp"
	gcc -std=c11 -DDFT_USDT_DISABLE -Wall -Wextra -pedantic -Werror -O2 -I"$ROOT/include" "$T/all.c" -o "$T/a.out"
	[ -z "$(probes_in "$T/a.out")" ]
	clang++ -std=c++11 -DDFT_USDT_DISABLE -Wall -Wextra -pedantic -Werror -O2 -I"$ROOT/include" "$T/all.cpp" -o "$T/a.out"
	[ -z "$(probes_in "$T/a.out")" ]
	! readelf -sW "$T/a.out" | grep -q semaphore
}

@test "header: an untraced annotation is a load and a branch per semaphore: no call, no syscall" {
	printf '%s\n' '#include <dftrace/usdt.h>' 'void f(void);' \
		'void f(void) { DFT_USDT_FORWARD(); }' >"$T/one.c"
	printf '%s\n' '#include <dftrace/usdt.h>' 'extern "C" void f(void);' \
		'void f(void) { DFT_USDT_FORWARD(); }' >"$T/one.cpp"
	# untraced, f reads no clock (the ring's, only while traced): this
	# program's own clock_gettime counts the calls
	printf '%s\n' '#include <stdio.h>' '#include <time.h>' 'void f(void);' \
		'static int calls;' \
		'int clock_gettime(clockid_t c, struct timespec *ts) { (void)c; calls++; ts->tv_sec = ts->tv_nsec = 0; return 0; }' \
		'int main(void) { for (int i = 0; i < 1000; i++) f(); printf("%d\n", calls); return 0; }' \
		>"$T/count.c"
	for c in "gcc -O2 $T/one.c" "gcc -O0 $T/one.c" "clang -O2 $T/one.c" \
		"g++ -O2 $T/one.cpp" "g++ -O0 $T/one.cpp" "clang++ -O0 $T/one.cpp"; do
		$c -I"$ROOT/include" -c -o "$T/one.o"
		run objdump -dr --no-show-raw-insn "$T/one.o"
		# the probe sites are nops; no syscall instruction anywhere
		if printf '%s\n' "$output" | grep -qE '\bsyscall'; then false; fi
		printf '%s\n' "$output" | grep -q 'dftrace_region_begin_semaphore'
		printf '%s\n' "$output" | grep -q 'dftrace_region_end_semaphore'
		printf '%s\n' "$output" | grep -q 'dftrace_regions_semaphore'
		gcc -O2 "$T/count.c" "$T/one.o" -o "$T/count" $([[ $c == *++* ]] && echo -lstdc++)
		[ "$("$T/count")" = 0 ]
	done
}

@test "README: the annotation example compiles warning-free and carries the probes it uses" {
	# the first C block of the README, with stubs for what it leaves out
	awk '/^```c$/ && !done {on = 1; next} /^```$/ && on {on = 0; done = 1} on' \
		"$ROOT/README.md" >"$T/snippet.c"
	grep -q 'DFT_USDT_FORWARD' "$T/snippet.c"
	{
		printf '%s\n' 'struct batch { int n; };' 'static struct batch batch;' \
			'static int next_batch(struct batch *b) { return b->n++ < 3; }' \
			'static void forward(struct batch *b) { (void)b; }' \
			'static void save_checkpoint(int e) { (void)e; }'
		cat "$T/snippet.c"
		printf '%s\n' 'int main(void) { train(); return 0; }'
	} >"$T/readme.c"
	gcc -std=c11 -O2 -Wall -Wextra -pedantic -Werror \
		-I"$ROOT/include" "$T/readme.c" -o "$T/readme"
	check_notes "$T/readme"
	"$T/readme"
}

@test "header: the AI tree's macros are generated from the tree the Python package uses, and do not drift" {
	run "$ROOT/scripts/gen-usdt-ai" --check
	[ "$status" = 0 ] || { echo "# $output"; return 1; }
	# a tree with one more leaf gives a different header
	cp -r "$ROOT" "$T/copy"
	sed -i 's/"device": ("transfer",)/"device": ("transfer", "h2d")/' \
		"$T/copy/usdt/python/dftrace/_tree.py"
	run "$T/copy/scripts/gen-usdt-ai" --check
	[ "$status" = 1 ]
	"$T/copy/scripts/gen-usdt-ai"
	grep -qx '#define DFT_USDT_H2D() DFT_USDT_REGION("device", "h2d")' \
		"$T/copy/include/dftrace/usdt_ai.h"
	# and the Python package builds the same nodes from it
	PYTHONPATH="$ROOT/build/python" /usr/bin/python3 -c '
from dftrace import ai
from dftrace._tree import TREE
for cat, leaves in TREE.items():
    for leaf in leaves:
        node = getattr(getattr(ai, cat), leaf)
        assert (node.cat, node.name) == (cat, leaf), (cat, leaf)'
}
