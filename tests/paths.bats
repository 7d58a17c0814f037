#!/usr/bin/env bats
# Hostile and extreme paths: the trace stays valid JSON, names round-trip,
# and a path too long for the kernel is flagged as truncated.

load lib/common

@test "paths: a name with quotes, backslashes, newline, tab, control bytes and invalid UTF-8 keeps the trace valid and its valid parts intact" {
	traced -P -- "$WL/paths" "$D"
	valid
	check_truth --only hostile
}

@test "paths: an absolute path of exactly 4095 bytes round-trips exactly and is not flagged truncated" {
	traced -P -- "$WL/paths" "$D"
	check_truth --only io --under "$D/long"
	run tpy events "$TRACE" --under "$D/long" --fields args.fname_truncated
	bad=$(printf '%s\n' "$output" | grep -v '^-$' | grep -v '^false$' || true)
	expect_eq "fname_truncated on events under $D/long" "$bad" ""
}

@test "paths: opens of 4096- and 5000-byte paths fail with -36 and carry fname_truncated" {
	traced -P -- "$WL/paths" "$D"
	valid
	check_truth --only toolong
}

@test "paths: without -P the trace is valid and names the files through FH" {
	traced -- "$WL/paths" "$D"
	valid
	check_truth --only io,hostile --under "$D/long"
}

@test "paths: names that differ only in invalid UTF-8 bytes, or an invalid byte against a real U+FFFD, stay apart" {
	names=($'a\xff' $'a\xfe' $'a\xef\xbf\xbdff')
	dft -q -o "$TRACE" -- sh -c 'for f in "$@"; do echo x >"$f"; done' sh \
		"${names[@]/#/$D/}"
	expect_eq "status" "$DFT_STATUS" 0
	valid
	expect_eq "distinct FH names under D" "$(tpy paths "$TRACE" --under "$D" | sort -u | wc -l)" 3
	# the invalid byte shows as U+FFFD and its two digits
	tpy paths "$TRACE" --under "$D" | grep -qx "\"$D/a\\\\ufffdff\""
}

@test "paths: a file named unicode-é€ is written in ASCII escapes and reads back whole (DFAnalyzer turns raw UTF-8 into '#')" {
	name=$'unicode-\xc3\xa9\xe2\x82\xac'
	dft -q -o "$T/t.pfw" -- sh -c 'echo x >"$1"' sh "$D/$name"
	expect_eq "status" "$DFT_STATUS" 0
	TRACE="$T/t.pfw" valid
	expect_eq "bytes above 0x7f in the trace" "$(LC_ALL=C grep -c -P '[\x80-\xff]' "$T/t.pfw")" 0
	grep -qF 'unicode-\u00e9\u20ac' "$T/t.pfw"
	expect_eq "FH name" "$(tpy paths "$T/t.pfw" --under "$D" | "$PY" -c 'import json,sys; print(json.loads(sys.stdin.read()))')" "$D/$name"
}
