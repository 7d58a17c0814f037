#!/usr/bin/env bats
# Under sudo: the tracer runs as root for the user behind it (SUDO_UID,
# SUDO_GID, SUDO_USER; simulated here by setting them as root). Its files
# are made with that user's permissions, and the trace shows no more than
# that user could see: a program that raises its privileges is not traced.

load lib/common

as_nobody() { SUDO_UID=65534 SUDO_GID=65534 SUDO_USER=nobody "$@"; }

# rootdir: a root-only directory holding a root-only file, as the issue
# that found the hole described them
make_rootdir() {
	mkdir -m 755 "$T/rootdir"
	printf 'precious\n' >"$T/rootdir/precious"
	chmod 600 "$T/rootdir/precious"
	BEFORE=$(stat -c '%u:%g %a %s %Y' "$T/rootdir" "$T/rootdir/precious"; ls -A "$T/rootdir")
}

untouched() {
	expect_eq "rootdir and precious" \
		"$(stat -c '%u:%g %a %s %Y' "$T/rootdir" "$T/rootdir/precious"; ls -A "$T/rootdir")" "$BEFORE"
	expect_eq "precious" "$(cat "$T/rootdir/precious")" precious
}

@test "sudo: -o a root-only file in a root-only directory: the usual permission error, both untouched" {
	make_rootdir
	as_nobody dft -q -o "$T/rootdir/precious" -- id
	expect_eq "status" "$DFT_STATUS" 1
	is_error_line "$T/dft.err"
	grep -q "cannot create output '$T/rootdir/precious': Permission denied" "$T/dft.err"
	untouched
}

@test "sudo: -D a new directory inside a root-only directory: the usual permission error, nothing made" {
	make_rootdir
	as_nobody dft -q -D "$T/rootdir/sub" -- true
	expect_eq "status" "$DFT_STATUS" 1
	is_error_line "$T/dft.err"
	grep -q "cannot create output directory '$T/rootdir/sub': Permission denied" "$T/dft.err"
	untouched
}

@test "sudo: -D into the user's own directory: the directory and files are the user's" {
	install -d -o 65534 -g 65534 "$T/mine"
	as_nobody dft -q -D "$T/mine/traces" -- "$WL/util" exit 0
	expect_eq "status" "$DFT_STATUS" 0
	expect_eq "owners" "$(stat -c %u:%g "$T/mine/traces" "$T/mine/traces"/* | sort -u)" "65534:65534"
	TRACE="$T/mine/traces" valid
}

# A setuid-root (or file-capability) copy of the stress workload, and a
# secret only root may read.
make_privileged() {
	cp "$WL/stress" "$T/priv-stress"
	chmod 4755 "$T/priv-stress"
	printf 'secret\n' >"$T/secret"
	chmod 600 "$T/secret"
	install -d -o 65534 -g 65534 "$T/mine"
}

@test "sudo: a setuid program the command runs: its exec is recorded as privileged, then nothing of it; plain root sees it all" {
	make_privileged
	as_nobody dft -q -o "$T/mine/t.pfw.gz" -- sh -c '"$0" readfile "$1"; "$2" exit 0' \
		"$T/priv-stress" "$T/secret" "$WL/util"
	expect_eq "status" "$DFT_STATUS" 0 || { sed 's/^/#   /' "$T/dft.err"; false; }
	# it did read it
	grep -q "	$T/secret	.*	read	read	7	" "$TRUTH" || { echo "# no read of the secret in the truth:"; sed 's/^/#   /' "$TRUTH"; false; }
	TRACE="$T/mine/t.pfw.gz" valid
	ppid=$(awk -F'\t' -v p="$T/secret" '$1 == "io" && $2 == p {print $3; exit}' "$TRUTH")
	expect_eq "the program's events" \
		"$(tpy events "$T/mine/t.pfw.gz" --pid "$ppid" --fields name,args.privileged)" $'exec\ttrue' ||
		{ tpy events "$T/mine/t.pfw.gz" --fields pid,tid,name,args.privileged | sed 's/^/#   /'; false; }
	expect_eq "paths of the secret" "$(tpy paths "$T/mine/t.pfw.gz" | grep -c secret)" 0
	# the rest of the command is still traced
	run tpy count "$T/mine/t.pfw.gz" --name exit
	[ "$output" -ge 2 ] || { echo "# exits: $output"; false; }
	# as plain root nothing is hidden
	: >"$TRUTH"
	dft -q -o "$TRACE" -- sh -c '"$0" readfile "$1"' "$T/priv-stress" "$T/secret"
	expect_eq "status" "$DFT_STATUS" 0
	check_truth --under "$T/secret"
	expect_eq "privileged execs as root" "$(tpy events "$TRACE" --name exec --fields args.privileged | sort -u)" "-"
}

@test "sudo: a program with file capabilities is hidden the same way, and its children too" {
	command -v setcap >/dev/null || skip "setcap is not installed"
	make_privileged
	chmod 755 "$T/priv-stress"
	setcap cap_dac_read_search+ep "$T/priv-stress"
	as_nobody dft -q -o "$T/mine/t.pfw.gz" -- sh -c '"$0" readfile "$1"' "$T/priv-stress" "$T/secret"
	expect_eq "status" "$DFT_STATUS" 0
	TRACE="$T/mine/t.pfw.gz" valid
	expect_eq "privileged execs" "$(tpy count "$T/mine/t.pfw.gz" --name exec)" 2
	expect_eq "paths of the secret" "$(tpy paths "$T/mine/t.pfw.gz" | grep -c secret)" 0
	[ "$(tpy events "$T/mine/t.pfw.gz" --name exec --fields args.privileged | sort | tr '\n' ' ')" = "- true " ]
}

@test "sudo: merge, summary and report read as the user behind sudo: a root-only trace is refused, the user's own is read, and what they write is the user's" {
	traced -- "$WL/util" exit 0
	install -d -m 700 "$T/rootdir"
	install -m 600 "$TRACE" "$T/rootdir/secret.pfw.gz"
	install -d -o 65534 -g 65534 "$T/mine"
	install -o 65534 -g 65534 -m 600 "$TRACE" "$T/mine/t.pfw.gz"
	for sub in summary "merge -o $T/mine/out.json" "report -o $T/mine/r.html"; do
		status=0
		# shellcheck disable=SC2086
		as_nobody "$DFT" $sub "$T/rootdir/secret.pfw.gz" >"$T/out" 2>"$T/err" || status=$?
		[ "$status" != 0 ] || { echo "# $sub read a root-only trace as the user"; return 1; }
		grep -q "Permission denied" "$T/err" ||
			{ echo "# $sub:"; sed 's/^/#   /' "$T/err"; return 1; }
		[ ! -s "$T/out" ]
		status=0
		# shellcheck disable=SC2086
		as_nobody "$DFT" $sub "$T/mine/t.pfw.gz" >"$T/out" 2>"$T/err" || status=$?
		expect_eq "status of $sub on the user's own trace" "$status" 0
	done
	expect_eq "owners of what they wrote" "$(stat -c %u:%g "$T/mine/out.json" "$T/mine/r.html" | sort -u)" "65534:65534"
}

@test "sudo: DFTRACE_BPF_RECORD is made as the user behind sudo: the user's file, refused where the user may not write" {
	install -d -o 65534 -g 65534 "$T/mine"
	DFTRACE_BPF_RECORD="$T/mine/rec" as_nobody dft -q -o "$T/mine/t.pfw.gz" -- "$WL/util" exit 0
	expect_eq "status" "$DFT_STATUS" 0
	expect_eq "recording's owner" "$(stat -c %u:%g "$T/mine/rec")" 65534:65534
	[ -s "$T/mine/rec" ]
	install -d -m 755 "$T/rootonly"
	DFTRACE_BPF_RECORD="$T/rootonly/rec" as_nobody dft -q -o "$T/mine/t.pfw.gz" -- "$WL/util" exit 0
	[ ! -e "$T/rootonly/rec" ]
	grep -q "cannot create recording '$T/rootonly/rec': Permission denied" "$T/dft.err"
}
