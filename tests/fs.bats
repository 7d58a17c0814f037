#!/usr/bin/env bats
# The file systems programs run from: overlayfs (the root of every
# container), tmpfs and bind mounts. Pages read and dirtied through a
# mapping are named by the path the process mapped, with the pages
# hiddenio.bats counts on the host's file system; an exec'd program, its
# interpreter and its libraries load without any data I/O; and no file
# is named by the kernel's (dev, ino) alone ("dev:ino 254:0:N"). On
# overlayfs the page cache, so every page fault, knows a mapped file by
# its layer's inode (ovl_mmap puts the layer's file in vma->vm_file),
# while the fd, stat() and, from Linux 6.8, /proc/PID/maps show the
# overlay's: another dev always, another ino once copied up.

load lib/common

# overlay NAME [tmpfs]: mount an overlay at $T/NAME (O), its lower layer
# $T/NAME.lower (LOWER: what is there already, as overlayfs wants its
# lower layers left alone while mounted) on $T's file system, its upper
# layer (UPPER) and work directory there too, or on a tmpfs of their own.
# Falls back to the tmpfs where $T's file system cannot be an upper layer
# (an overlay itself, as in a container).
overlay() {
	local rw="$T/$1.rw"
	O="$T/$1"
	LOWER="$T/$1.lower"
	UPPER="$rw/upper"
	mkdir -p "$O" "$LOWER" "$rw"
	grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null ||
		skip "no overlayfs in this kernel"
	if [ "${2:-}" != tmpfs ]; then
		mkdir -p "$UPPER" "$rw/work"
		if mount -t overlay overlay \
			-o "lowerdir=$LOWER,upperdir=$UPPER,workdir=$rw/work" "$O" 2>/dev/null; then
			MOUNTS=("$O" "${MOUNTS[@]}")
			return 0
		fi
		rm -rf "$UPPER" "$rw/work"
	fi
	mount -t tmpfs -o size=64m tmpfs "$rw" || skip "cannot mount a tmpfs here"
	MOUNTS=("$rw" "${MOUNTS[@]}")
	mkdir -p "$UPPER" "$rw/work"
	mount -t overlay overlay -o "lowerdir=$LOWER,upperdir=$UPPER,workdir=$rw/work" "$O" ||
		skip "cannot mount overlayfs here"
	# unmounted before the tmpfs under it: teardown goes in order
	MOUNTS=("$O" "${MOUNTS[@]}")
}

# tmpfs_at DIR / bind_at SRC DIR: mount one there, unmounted by teardown
tmpfs_at() {
	mkdir -p "$1"
	mount -t tmpfs -o size=64m tmpfs "$1" || skip "cannot mount a tmpfs here"
	MOUNTS=("$1" "${MOUNTS[@]}")
}

bind_at() {
	mkdir -p "$1" "$2"
	mount --bind "$1" "$2" || skip "cannot bind mount here"
	MOUNTS=("$2" "${MOUNTS[@]}")
}

# named_all [DIR...]: no file in the trace is named by its (dev, ino)
# alone. On failure, says which, and what stat() says of the files under
# each DIR.
named_all() {
	local bad f
	run tpy paths "$TRACE"
	bad=$(grep '^"dev:ino ' <<<"$output" || true)
	[ -z "$bad" ] && return 0
	echo "# files named by (dev, ino) (dev as major:minor):"
	sed 's/^/#   /' <<<"$bad"
	run tpy events "$TRACE" --name mmap_read,mmap_write --fields name,path,args.ret
	grep 'dev:ino' <<<"$output" | sed 's/^/#   event: /'
	for f in "$@"; do
		find "$f" -type f -exec stat -c '#   stat: %n %Hd:%Ld:%i' {} + 2>/dev/null | head -20
	done
	return 1
}

# check_mapped DIR [nowrite]: $WL/mapped's files in DIR, traced alone,
# named by their paths, with hiddenio.bats's pages: two passes over
# DIR/scan (check_scan_passes: where this kernel has mmap reads), 16
# pages of DIR/dirty dirtied (where it has mmap writes, and unless
# nowrite), and its msync.
check_mapped() {
	local dir=$1
	if has_feature mmap_read; then
		check_scan_passes "$dir"
	fi
	run tpy bytes "$TRACE" --by name --path "$dir/dirty" --name mmap_write,msync
	if [ "${2:-}" = nowrite ] || ! has_feature mmap_write; then
		# tmpfs (shmem) keeps no dirty accounting: no writeback_dirty_folio
		# for its pages, so no mmap_write, on any path; only the msync
		expect_eq "msync of $dir/dirty" "$(grep '^msync' <<<"$output")" "$(printf 'msync\t1\t0')"
	else
		expect_eq "dirtied in $dir/dirty" "$output" "$(printf 'mmap_write\t1\t65536\nmsync\t1\t0')"
	fi
	grep -qP "^mdirty\t$dir/dirty\t16$" "$TRUTH"
}

# trace_mapped DIR: trace $WL/mapped (or $MAPPED) writing and mapping its
# files in DIR
trace_mapped() {
	: >"$TRUTH"
	mkdir -p "$1"
	traced -- "${MAPPED:-$WL/mapped}" "$1"
	valid
}

# check_exec PROG: trace PROG's exec through sh, as programs are run; its
# loading is no data I/O (ld.so reads its cache through a mapping: data),
# nothing is named dev:ino, and the exec names PROG.
check_exec() {
	local prog=$1 h
	: >"$TRUTH"
	traced -- sh -c '"$0" exit 0' "$prog"
	valid
	named_all "$(dirname "$prog")"
	run tpy events "$TRACE" --name mmap_read,mmap_write --fields name,path,args.ret
	expect_eq "I/O through mappings at the exec of $prog" \
		"$(grep -v -P '\t/etc/ld\.so\.cache\t' <<<"$output" || true)" ""
	h=$(tpy events "$TRACE" --name exec --fields args.exec_hash | tail -1)
	expect_eq "the program exec'd" \
		"$(tpy meta "$TRACE" SH | jq -r --arg h "$h" 'select(.args.value == $h) | .args.name')" \
		"$prog"
}

@test "fs: overlayfs: files created in the upper layer, read and dirtied through mappings, are named by their paths, pages exact" {
	require_feature overlay_names mmap_write
	overlay ovl
	trace_mapped "$O/d"
	# the premise: the overlay's inode is not the layer's
	[ "$(stat -c %d "$O/d/scan")" != "$(stat -c %d "$UPPER/d/scan")" ]
	named_all "$O/d" "$UPPER/d"
	check_mapped "$O/d"
}

@test "fs: overlayfs: a program mapping its files, itself run from the overlay, names them by their paths" {
	require_feature overlay_names mmap_write
	mkdir "$T/ovl.lower"
	cp "$WL/mapped" "$T/ovl.lower/mapped"
	overlay ovl
	MAPPED="$O/mapped" trace_mapped "$O/d"
	named_all "$O" "$LOWER" "$UPPER"
	check_mapped "$O/d"
	# the program's own pages are loading, not data: what it reads
	# through mappings is ld.so's cache and its scan file
	run tpy events "$TRACE" --name mmap_read,mmap_write --fields path
	local want=("$O/d/dirty")
	has_feature mmap_read && want+=(/etc/ld.so.cache "$O/d/scan")
	expect_eq "files read or written through mappings" "$(sort -u <<<"$output")" \
		"$(printf '%s\n' "${want[@]}" | sort)"
}

@test "fs: overlayfs: a lower file read through a mapping, then copied up and written through one, bytes exact" {
	require_feature mmap_read mmap_write overlay_names
	[ -x /usr/bin/fio ] || skip "needs fio (scripts/install-deps)"
	mkdir "$T/ovl.lower"
	head -c 1048576 /dev/urandom >"$T/ovl.lower/f"
	# written back: fio's random pass over a file still dirty misses its
	# first page now and then, on any file system (as of this writing)
	sync -f "$T/ovl.lower/f"
	overlay ovl
	traced -- /usr/bin/fio --name=j --filename="$O/f" --size=1M --bs=4k \
		--rw=randread --ioengine=mmap --output=/dev/null
	[ ! -e "$UPPER/f" ] || { echo "# a read copied $O/f up"; false; }
	named_all "$O" "$LOWER"
	run tpy bytes "$TRACE" --by name --path "$O/f" --name mmap_read
	expect_eq "read through a mapping of the lower file" "$output" \
		"$(printf 'mmap_read\t%s\t1048576' "$(cut -f2 <<<"$output")")"
	run tpy dfa-bytes "$TRACE" --path "$O/f"
	expect_eq "DFAnalyzer's bytes" "$output" "$(printf '%s\t1048576' "$O/f")"
	# opened for writing: copied up, a new inode in the upper layer, its
	# copied pages written back before they are dirtied again
	: >>"$O/f"
	[ -e "$UPPER/f" ] || { echo "# $O/f was not copied up"; false; }
	sync -f "$O/f"
	traced -- /usr/bin/fio --name=j --filename="$O/f" --size=1M --bs=4k \
		--rw=write --ioengine=mmap --output=/dev/null
	named_all "$O" "$LOWER" "$UPPER"
	run tpy bytes "$TRACE" --by name --path "$O/f" --name mmap_write
	expect_eq "dirtied through a mapping of the copied-up file" "$output" \
		"$(printf 'mmap_write\t%s\t1048576' "$(cut -f2 <<<"$output")")"
}

@test "fs: overlayfs: a program exec'd from it loads without data I/O and nothing is named dev:ino" {
	require_feature overlay_names
	mkdir "$T/ovl.lower"
	cp "$WL/util" "$T/ovl.lower/prog"
	overlay ovl
	check_exec "$O/prog"
	# once copied up (a new inode in the upper layer), the same
	: >>"$O/prog"
	[ -e "$UPPER/prog" ]
	check_exec "$O/prog"
}

@test "fs: overlayfs as a container's root: its program, interpreter and libraries load without data I/O" {
	require_feature overlay_names
	command -v chroot >/dev/null || skip "needs chroot"
	command -v ldd >/dev/null || skip "needs ldd"
	local lib root="$T/root.lower"
	mkdir "$root"
	cp "$WL/util" "$root/prog"
	# ld.so (the ELF interpreter the kernel maps) and libc, where the
	# program asks for them
	for lib in $(ldd "$WL/util" | grep -o '/[^ ]*'); do
		mkdir -p "$root$(dirname "$lib")"
		cp "$lib" "$root$lib"
	done
	overlay root
	LC_ALL=C traced -- chroot "$O" /prog exit 0
	valid
	named_all "$O"
	# chroot itself, on the host, reads ld.so's cache
	run tpy events "$TRACE" --name mmap_read,mmap_write --fields name,path,args.ret
	expect_eq "I/O through mappings" \
		"$(grep -v -P '\t/etc/ld\.so\.cache\t' <<<"$output" || true)" ""
}

@test "fs: overlayfs with its upper layer on tmpfs: mapped files and an exec'd program are named by their paths" {
	require_feature mmap_read page_misses overlay_names
	mkdir "$T/ovl.lower"
	cp "$WL/util" "$T/ovl.lower/prog"
	overlay ovl tmpfs
	check_exec "$O/prog"
	trace_mapped "$O/d"
	named_all "$O/d" "$UPPER/d"
	# the files are tmpfs's, in the upper layer: no mmap_write (below)
	check_mapped "$O/d" nowrite
}

@test "fs: tmpfs: mapped files and an exec'd program are named by their paths" {
	require_feature mmap_read page_misses
	tmpfs_at "$T/tmp"
	cp "$WL/util" "$T/tmp/prog"
	check_exec "$T/tmp/prog"
	trace_mapped "$T/tmp/d"
	named_all "$T/tmp"
	check_mapped "$T/tmp/d" nowrite
}

@test "fs: a bind mount: mapped files and an exec'd program are named by their paths there" {
	require_feature mmap_write
	bind_at "$T/src" "$T/bind"
	cp "$WL/util" "$T/bind/prog"
	check_exec "$T/bind/prog"
	trace_mapped "$T/bind/d"
	named_all "$T/bind"
	check_mapped "$T/bind/d"
}
