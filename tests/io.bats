#!/usr/bin/env bats
# File I/O: every syscall a workload makes on its files shows up with the
# exact name, syscall, return value, byte count and resolved path.

load lib/common

@test "io: open/read/write family, sync, stat, dirs, two-fd calls, mmap match exactly" {
	traced -- "$WL/io" basic "$D"
	valid
	check_truth --under "$D"
}

@test "io: the trace is well formed and X events nest on every thread" {
	traced -- "$WL/io" basic "$D"
	valid
	run tpy check-nesting "$TRACE"
	echo "$output"
	[ "$status" = 0 ]
}

@test "io: failed calls carry -errno (EBADF read, ENOENT open)" {
	traced -- "$WL/io" basic "$D"
	run tpy events "$TRACE" --path "$D/c.dat" --name read --fields args.ret
	expect_eq "read of a write-only fd" "$output" "-9"
	run tpy events "$TRACE" --path "$D/nonexistent" --name open --fields args.syscall,args.ret
	expect_eq "open of a missing file" "$output" "$(printf 'openat\t-2')"
}

@test "io: openat2 is an open with the flags and mode of its struct open_how" {
	traced -- "$WL/io" basic "$D"
	want=$(awk -F'\t' '$1=="openhow" {print "open\topenat2\t" $3 "\t" $4}' "$TRUTH")
	[ -n "$want" ]
	run tpy events "$TRACE" --path "$D/g.dat" --syscall openat2 \
		--fields name,args.syscall,args.flags,args.mode
	expect_eq "openat2 event" "$output" "$want"
}

@test "io: pipe, socket and eventfd fds are named as in /proc/PID/fd; their numbers reused by a file are not confused" {
	traced -- "$WL/io" pipe "$D"
	check_truth --under "$D"
}

@test "io: a thread's calls on an fd another thread then closes and reuses for another file are charged to the first" {
	traced -- "$WL/io" threads "$D"
	check_truth --under "$D"
}

@test "io: calls on an O_CLOEXEC fd just before an exec are charged to its file" {
	traced -- "$WL/io" exec "$D"
	check_truth --under "$D"
}

@test "io: a call longer than 2^32 ns keeps its duration (sent whole, not in one cache line)" {
	# cat's one read of the pipe waits for the writer to end: at least
	# 4.4 s, longer than a dft_io's 32-bit ns. The first second lets cat
	# reach its read before the 4.4 s start, however slow the machine
	# (with a bare 'sleep 4.4', cat's start-up came out of the 4.4 s)
	t0=$(date +%s%N)
	traced -- /bin/sh -c '{ sleep 1; sleep 4.4; } | cat'
	wall_us=$(( ($(date +%s%N) - t0) / 1000 ))
	run tpy events "$TRACE" --name read --fields dur,args.ret
	long=$(printf '%s\n' "$output" | awk -v w="$wall_us" '$1 >= 4400000 && $1 <= w')
	expect_eq "the read that waited on the pipe, its ret" "$(printf '%s\n' "$long" | cut -f2)" "0"
}

@test "io: a thread's kept call 2^32 ns after the one before it keeps its time (its batch sent first)" {
	# two preads 4.5 s apart with nothing recorded between: the second
	# is past what a kept entry's 32-bit time after its batch's first
	# can say, so the batch goes out before it and the second starts one
	head -c 4096 /dev/urandom >"$D/f"
	t0=$(date +%s%N)
	traced -- "$PY" -S -c 'import os, sys, time
f = os.open(sys.argv[1], os.O_RDONLY)
os.pread(f, 10, 0)
time.sleep(4.5)
os.pread(f, 10, 1)' "$D/f"
	wall_us=$(( ($(date +%s%N) - t0) / 1000 ))
	# (python's own preads, of its libraries, read 784 bytes)
	run tpy events "$TRACE" --name pread --fields ts,args.offset,args.ret
	output=$(printf '%s\n' "$output" | awk -F '\t' '$3 == 10')
	[ "$(printf '%s\n' "$output" | wc -l)" = 2 ] || { echo "# $output"; return 1; }
	gap=$(printf '%s\n' "$output" | awk 'NR == 1 { a = $1 } NR == 2 { print $1 - a }')
	expect_eq "the preads' offsets and results" "$(printf '%s\n' "$output" | cut -f2,3 | tr '\n\t' ' ,')" "0,10 1,10 "
	[ "$gap" -ge 4500000 ] && [ "$gap" -le "$wall_us" ] ||
		{ echo "# gap $gap us, the run $wall_us us"; return 1; }
}

@test "io: relative paths (initial cwd, chdir, fchdir, x/../y, openat dirfd) resolve to absolute paths" {
	cd "$D"
	traced -- "$WL/io" relative "$D"
	check_truth --under "$D"
	# no FH name is relative or keeps . or .. components
	run tpy paths "$TRACE"
	bad=$(printf '%s\n' "$output" | grep -vE '^"(/|pipe:|socket:|anon_inode:)' || true)
	expect_eq "relative FH names" "$bad" ""
	bad=$(printf '%s\n' "$output" | grep -E '/\.\.?(/|")' || true)
	expect_eq "FH names with . or .." "$bad" ""
}

@test "io: I/O on dup/dup2/dup3/F_DUPFD duplicates counts for the original file" {
	traced -- "$WL/io" dup "$D"
	check_truth --under "$D"
}

@test "io: --inline-paths adds fname equal to the FH name on every file event" {
	traced -P -- "$WL/io" basic "$D"
	valid      # checks fname == FH name wherever both exist
	check_truth --under "$D"
	# every event with an fhash has an fname
	run tpy events "$TRACE" --under "$D" --fields args.fname
	missing=$(printf '%s\n' "$output" | grep -c '^-$' || true)
	expect_eq "events under $D without fname" "$missing" 0
	n=$(tpy count "$TRACE" --under "$D")
	[ "$n" -gt 50 ]
}

@test "io: plain .pfw output holds the same events" {
	TRACE="$T/t.pfw"
	traced -- "$WL/io" basic "$D"
	head -c2 "$TRACE" | grep -q '^\[' 
	! gzip -t "$TRACE" 2>/dev/null
	valid
	check_truth --under "$D"
}
