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
