#!/usr/bin/env bats
# ioctl: every call is recorded with its request decoded as _IOC_DIR/TYPE/
# NR/SIZE would, the file it was made on, and its return value.

load lib/common

@test "ioctl: FIONREAD, TIOCSPTLCK, TIOCGPTN, TCGETS, FS_IOC_GETFLAGS recorded and decoded exactly" {
	traced -- "$WL/ioctl" "$D"
	valid
	check_truth
}

@test "ioctl: a failing ioctl (TCGETS on a regular file) has ret -ENOTTY and cat IOCTL" {
	traced -- "$WL/ioctl" "$D"
	run tpy events "$TRACE" --name ioctl --path "$D/ioctl.dat" --fields cat,args.request,args.ret
	printf '%s\n' "$output" | grep -qx "$(printf 'IOCTL\t0x5401\t-25')" ||
		{ echo "# got: $output"; return 1; }
}
