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

@test "ioctl: on GPU, accelerator and interconnect nodes (in a private /dev): cat DEVICE, class, kind and request name; look-alikes stay IOCTL" {
	# copies of /dev/null under the real names, in a mount namespace of
	# the workload's own: the host's /dev is untouched, and the workload
	# refuses any node that is not char 1:3
	traced -- unshare -m sh -c '
		mount -t tmpfs dft-test-dev /dev &&
		mkdir /dev/dri /dev/accel /dev/infiniband &&
		for n in nvidia-uvm nvidiactl nvidia0 dri/card0 dri/renderD128 \
		    kfd accel/accel0 infiniband/uverbs0 hl0 nvidiafoo; do
			mknod -m 666 "/dev/$n" c 1 3 || exit 1
		done &&
		exec "$0" --devices' "$WL/ioctl"
	valid
	n=$(awk -F'\t' '$1=="devioctl"' "$TRUTH" | wc -l)
	expect_eq "device ioctls made" "$n" 12
	check_truth
	run tpy events "$TRACE" --name ioctl --fields cat
	expect_eq "DEVICE events" "$(printf '%s\n' "$output" | grep -cx DEVICE)" 11
}
