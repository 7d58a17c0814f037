#!/usr/bin/env bats
# I/O that syscalls do not show whole: file mappings, io_uring, Linux
# AIO. fio (Debian's, nobody here wrote it) says what it moved; the
# trace's bytes per file must equal that, counted our way and as
# DFAnalyzer counts them. Small workloads of ours give what fio cannot:
# opens and closes through a ring, cold and cached passes over a mapping.

load lib/common

FIO=/usr/bin/fio

# fio_traced ENGINE RW [FIO ARG...]: trace fio moving 1 MiB of $D/f in
# 4 KiB blocks; the file exists first, so fio lays nothing out.
fio_traced() {
	local engine=$1 rw=$2
	shift 2
	[ -x "$FIO" ] || skip "needs fio (scripts/install-deps)"
	head -c 1048576 /dev/urandom >"$D/f"
	traced -- "$FIO" --name=j --filename="$D/f" --size=1M --bs=4k \
		--rw="$rw" --ioengine="$engine" --output-format=json \
		--output="$T/fio.json" "$@"
}

# fio's bytes read plus written, from its JSON report
fio_bytes() {
	"$PY" -c 'import json,sys; j=json.load(open(sys.argv[1]))["jobs"][0]
print(j["read"]["io_bytes"] + j["write"]["io_bytes"])' "$T/fio.json"
}

# check_fio ENGINE RW NAME [FIO ARG...]: every byte fio moved is in the
# trace on $D/f, in events named NAME, by our count and DFAnalyzer's.
check_fio() {
	local engine=$1 rw=$2 name=$3 want
	shift 3
	fio_traced "$engine" "$rw" "$@"
	valid
	want=$(fio_bytes)
	expect_eq "fio's bytes" "$want" 1048576
	run tpy bytes "$TRACE" --by name --path "$D/f" --name "$name"
	expect_eq "$name bytes on $D/f" "$(cut -f3 <<<"$output")" "$want"
	run tpy dfa-bytes "$TRACE" --path "$D/f"
	expect_eq "DFAnalyzer's bytes on $D/f" "$output" "$(printf '%s\t%s' "$D/f" "$want")"
}

# In the kernel lab's guest each engine moves data one way in each
# direction (host_also): sequential and random take the same kernel path.
@test "fio psync: reads and writes, sequential and random" {
	host_only "plain syscalls, which io.bats checks in the guest"
	check_fio psync read pread
	check_fio psync randread pread
	check_fio psync write pwrite
	check_fio psync randwrite pwrite
}

@test "fio mmap: pages read and dirtied through the mapping, sequential and random" {
	require_feature mmap_read mmap_write
	check_fio mmap read mmap_read
	host_also check_fio mmap randread mmap_read
	check_fio mmap write mmap_write
	host_also check_fio mmap randwrite mmap_write
}

@test "fio io_uring: each request with its file, sequential and random" {
	require_feature io_uring
	check_fio io_uring read io_uring_read
	host_also check_fio io_uring randread io_uring_read
	check_fio io_uring write io_uring_write
	host_also check_fio io_uring randwrite io_uring_write
}

@test "fio io_uring with sqthread_poll: the SQPOLL thread's requests are the submitter's" {
	require_feature io_uring
	check_fio io_uring read io_uring_read --sqthread_poll=1
	check_fio io_uring randwrite io_uring_write --sqthread_poll=1
	# fio's job process submitted them; no event comes from another task
	run tpy events "$TRACE" --path "$D/f" --name io_uring_write --fields pid,tid
	expect_eq "submitting tasks" "$(sort -u <<<"$output" | wc -l)" 1
	host_also check_fio io_uring randread io_uring_read --sqthread_poll=1
	host_also check_fio io_uring write io_uring_write --sqthread_poll=1
}

@test "fio io_uring with registered files and buffers: fixed requests are named" {
	require_feature io_uring
	check_fio io_uring randread io_uring_read_fixed --fixedbufs=1 --registerfiles=1
	check_fio io_uring write io_uring_write_fixed --fixedbufs=1 --registerfiles=1
}

@test "fio libaio: each iocb with its result, sequential and random" {
	check_fio libaio read aio_read --iodepth=8 --direct=1
	host_also check_fio libaio randread aio_read --iodepth=8 --direct=1
	check_fio libaio write aio_write --iodepth=8
	host_also check_fio libaio randwrite aio_write --iodepth=8 --direct=1
}

@test "libaio: an iocb's event lasts from io_submit to the io_getevents that reaped it" {
	fio_traced libaio randread --iodepth=8 --direct=1
	run tpy events "$TRACE" --path "$D/f" --name aio_read --fields args.offset,args.count,args.ret
	# 256 distinct 4 KiB blocks, each read once, all of it
	expect_eq "iocbs" "$(cut -f1 <<<"$output" | sort -u | wc -l)" 256
	expect_eq "lengths and results" "$(cut -f2,3 <<<"$output" | sort -u)" "$(printf '4096\t4096')"
}

@test "io_uring through liburing: open, write, fsync, read, statx, close, a registered file" {
	require_feature io_uring
	traced -- "$WL/uring" "$D"
	valid
	check_truth --under "$D"
	# the ring's open named the fd that a syscall then used
	run tpy events "$TRACE" --under "$D" --name pread --fields path
	expect_eq "pread's file" "$output" "$D/u"
	# by its index, the registered file still has its name
	run tpy events "$TRACE" --under "$D" --name io_uring_read --fields args.fixed,path,args.ret
	expect_eq "fixed read" "$(grep '^1' <<<"$output")" "$(printf '1\t%s\t5000' "$D/u")"
}

@test "mmap: a cold pass and a cached pass over a mapping are told apart" {
	require_feature mmap_read page_misses
	traced -- "$WL/mapped" "$D"
	valid
	# pass 1: mapped, 64 pages read, all from storage but those mincore
	# found cached; pass 2: the same pages, all cached
	read -r _ _ _ pages cached2 <<<"$(grep -P '^mpass\t.*\t2\t' "$TRUTH")"
	expect_eq "pages" "$pages" 64
	expect_eq "cached before pass 2" "$cached2" 64
	check_scan_passes "$D"
}

@test "mmap: pages dirtied through a shared mapping are mmap_write, msync is there" {
	require_feature mmap_write
	traced -- "$WL/mapped" "$D"
	run tpy bytes "$TRACE" --by name --path "$D/dirty" --name mmap_write,msync
	expect_eq "dirtied" "$output" "$(printf 'mmap_write\t1\t65536\nmsync\t1\t0')"
	grep -qP "^mdirty\t$D/dirty\t16$" "$TRUTH"
}

@test "mmap: loading programs and libraries is not data I/O" {
	require_feature mmap_read
	traced -- "$WL/mapped" "$D"
	run tpy events "$TRACE" --name mmap_read,mmap_write --fields path
	# the workload's files and ld.so's cache, which ld.so maps to read
	expect_eq "files read through mappings" "$(sort -u <<<"$output")" \
		"$(printf '%s\n' /etc/ld.so.cache "$D/dirty" "$D/scan" | sort)"
}

@test "mmap: an exec that updates its program's atime on a filesystem without a journal is no mmap_write" {
	require_feature mmap_write
	command -v mkfs.ext4 >/dev/null || skip "needs mkfs.ext4 (e2fsprogs)"
	truncate -s 16M "$T/fs.img"
	mkfs.ext4 -q -F -O ^has_journal "$T/fs.img"
	mkdir "$T/fs"
	mount -o loop,relatime "$T/fs.img" "$T/fs" || skip "cannot mount a loop device here"
	MOUNTS+=("$T/fs")
	cp "$WL/util" "$T/fs/prog"
	# an old atime, which relatime renews at the exec, and the inode's
	# block clean: the exec itself dirties it, in the block device's pages
	touch -a -t 200001010000 "$T/fs/prog"
	sync -f "$T/fs"
	traced -- sh -c '"$0" exit 0' "$T/fs/prog"
	atime=$(stat -c %X "$T/fs/prog")
	[ "$atime" -gt 946771200 ] || { echo "# the exec left the atime at $atime: nothing was dirtied"; false; }
	run tpy events "$TRACE" --name mmap_read,mmap_write --fields name,path
	expect_eq "mapped I/O" "$(grep -v /etc/ld.so.cache <<<"$output" || true)" ""
}

@test "io_uring: a request whose fd field is no file (cancel, timeout, no-op) names no file, not fd 0's" {
	require_feature io_uring
	traced -- "$WL/uring" "$D" </dev/null
	valid
	want=$(awk -F'\t' '$1 == "nofile" { print $2 "\t-\t" $3 }' "$TRUTH" | sort)
	expect_eq "requests in the truth" "$(wc -l <<<"$want")" 3
	run tpy events "$TRACE" --pid "$(awk -F'\t' '$1 == "io" { print $3; exit }' "$TRUTH")" \
		--fields args.opcode,path,args.ret
	got=$(awk -F'\t' -v ops="$(cut -f1 <<<"$want" | paste -sd,)" \
		'BEGIN { split(ops, o, ","); for (i in o) want[o[i]] = 1 } $1 in want' <<<"$output" | sort)
	expect_eq "opcode, file, result" "$got" "$want"
}
