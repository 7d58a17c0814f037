#!/usr/bin/env bats
# Annotations (include/dftrace/usdt.h): probes found in executables and
# libraries, regions written with DFTracer's names, I/O correlated with the
# enclosing phase, epoch and step, parent links and nesting.

load lib/common
load lib/copies
load lib/notes

EX="$ROOT/build/examples"
ANNOT="$ROOT/tests/lib/annot.py"

annot() {
	run "$PY" -S "$ANNOT" "$@"
	if [ "$status" != 0 ]; then
		echo "# annot.py $* failed:"
		printf '%s\n' "$output" | sed 's/^/#   /'
		return 1
	fi
}

# the cat/name pairs of both minitrain examples, exactly
expect_minitrain_names() {
	annot names "$TRACE"
	expect_eq "regions" "$output" "$(printf '%s\n' \
		"checkpoint	capture" "checkpoint	checkpoint.init" \
		"compute	backward" "compute	forward" "compute	step" \
		"data	item" "data	preprocess" "data	preprocess.collate" \
		"dataloader	fetch.block" "dataloader	fetch.iter" \
		"pipeline	epoch" "pipeline	train")"
}

@test "annotate: minitrain's regions have DFTracer's exact names and cats" {
	traced -- "$EX/minitrain" "$D/mt" 2 3
	valid
	expect_minitrain_names
}

@test "annotate: the annotation programs load at start for a command (a wrapper's children need them at once); a tracer that stays on loads them at the first file with probes, once, not for a program without; the kernel's BTF is parsed once for all start-up's loads" {
	dft -v -o "$TRACE" -- sh -c '"$1" "$2" 2 3; exit 0' sh "$EX/minitrain" "$D/mt"
	expect_eq "status" "$DFT_STATUS" 0
	expect_eq "programs loaded at start" "$(preloaded)" "$(printf '%s\n' 'GPU call' annotation)"
	expect_eq "programs loaded at their first use" "$(loaded_lazily)" ""
	# the feature probe's, the main instance's and the halves'
	expect_eq "the kernel's BTF, parsed" "$(btf_reads)" "once for start-up's 4 loads"
	# one core: one instance has them all
	(taskset -pc 0 "$BASHPID" >/dev/null &&
		dft -v -o "$TRACE" -- sh -c '"$1" "$2" 2 3; exit 0' sh "$EX/minitrain" "$D/mt"
		echo "$DFT_STATUS" >"$T/status")
	expect_eq "status, one core" "$(cat "$T/status")" 0
	expect_eq "programs loaded at start, one core" \
		"$(grep -c '^dftrace-bpf: main programs loaded in .*, with the annotation and GPU call programs$' \
			"$T/dft.err") $(grep -c "^dftrace-bpf: .* half's programs loaded" "$T/dft.err")" "1 0"
	expect_eq "the kernel's BTF, parsed, one core" "$(btf_reads)" "once for start-up's 2 loads"
	dft -v -o "$TRACE" --flight 5 --trigger exit -- "$WL/io" basic "$D"
	expect_eq "status" "$DFT_STATUS" 0
	expect_eq "--flight: programs loaded, no probes" "$(preloaded)$(loaded_lazily)" ""
	dft -v -o "$TRACE" --flight 5 --trigger exit -- "$EX/minitrain" "$D/mt" 2 3
	expect_eq "status" "$DFT_STATUS" 0
	expect_eq "--flight: programs loaded" "$(preloaded)$(loaded_lazily)" annotation
}

@test "annotate: annotation programs the kernel refuses at start leave out their regions only, on two cores and on one: the syscalls and the GPU call programs stay" {
	for cores in 0,1 0; do
		(taskset -pc "$cores" "$BASHPID" >/dev/null &&
			DFTRACE_BPF_TEST_REFUSE=annotation dft -v -o "$TRACE" -- "$EX/minitrain" "$D/mt" 1 2
			echo "$DFT_STATUS" >"$T/status")
		expect_eq "status, cores $cores" "$(cat "$T/status")" 0
		expect_eq "said, cores $cores" \
			"$(grep -c "^dftrace-bpf: cannot load the annotation programs: .*; their probes are left out" "$T/dft.err")" 1
		expect_eq "loaded, cores $cores" "$(preloaded)$(loaded_lazily)" "GPU call"
		valid
		expect_eq "regions, cores $cores" "$(grep -c '"cat":"\(data\|checkpoint\|pipeline\)"' "$TRACE")" 0
		# every read and write the example says it made is there
		tpy bytes "$TRACE" --by path,name --under "$D/mt" >"$T/got"
		expect_eq "bytes by file, cores $cores" "$(io_bytes "$T/got" "$TRUTH")" ok
		: >"$TRUTH"
	done
}

# io_bytes GOT TRUTH: "ok" if the trace's bytes by file and direction
# (GOT: trace.py bytes --by path,name) are minitrain's (its "io" lines),
# else the two sides
io_bytes() {
	"$DFT_TEST_PY" - "$1" "$2" <<-'EOF'
	import collections, json, sys
	got, want = collections.Counter(), collections.Counter()
	for line in open(sys.argv[1]):
	    path, name, calls, nbytes = line.rstrip("\n").split("\t")
	    for op in ("read", "write"):
	        if op in name and int(nbytes):
	            got[path, op] += int(nbytes)
	for line in open(sys.argv[2]):
	    r = json.loads(line) if line.startswith("{") else {}
	    if r.get("kind") == "io":
	        want[r["path"], r["op"]] += r["bytes"]
	print("ok" if got == want and want else "got %s, want %s" % (dict(got), dict(want)))
	EOF
}

# The lazy groups -v said were loaded at start (with the start's
# programs, or apart when those failed with them), and those loaded at
# their first use, a line each, sorted.
preloaded() {
	sed -n -e 's/^dftrace-bpf: .* programs loaded .*, with the \(.*\) programs$/\1/p' \
		-e 's/^dftrace-bpf: \(annotation\|GPU call\) programs loaded at start .*/\1/p' \
		"$T/dft.err" | sed 's/ and /\n/g' | sort
}
# how often the kernel's BTF was parsed at start, for how many loads
btf_reads() {
	sed -n "s/^dftrace-bpf: the kernel's BTF read \(.* loads\), in .* ms$/\1/p" "$T/dft.err"
}
loaded_lazily() {
	sed -n 's/^dftrace-bpf: \(annotation\|GPU call\) programs loaded in .*/\1/p' "$T/dft.err" | sort
}

@test "annotate: minitrain: every region, bytes by phase/epoch/step, links, nesting and counts match" {
	traced -- "$EX/minitrain" "$D/mt" 2 3
	valid
	annot check "$TRACE" "$TRUTH"
	# the example really read and wrote inside its phases
	grep -q '"cat":"checkpoint","name":"capture"' "$TRUTH"
	grep -q '"kind":"io".*"cat":"data","name":"item"' "$TRUTH"
}

@test "annotate: forked and exec'd workers' probes and I/O are their own" {
	traced -- "$EX/minitrain" "$D/mt" 1 2
	main=$(grep -m1 -o '"pid":[0-9]*' "$TRUTH" | cut -d: -f2)
	workers=$(grep '"kind":"io"' "$TRUTH" | grep -v "\"pid\":$main," | grep -o '"pid":[0-9]*' | sort -u | cut -d: -f2)
	expect_eq "worker processes" "$(echo $workers | wc -w)" 2
	for w in $workers; do
		expect_eq "item regions of $w" "$(tpy count "$TRACE" --pid "$w" --cat data --name item)" 1
	done
	# the exec'd one starts with a clean context: no epoch in its events
	grep -q '"epoch":-1' "$TRUTH"
	annot check "$TRACE" "$TRUTH"
}

@test "annotate: metadata mode writes CM epoch.start/epoch.end with timestamps" {
	traced -- "$EX/minitrain" "$D/mt" 2 1
	run tpy meta "$TRACE" CM
	expect_eq "CM names" "$(printf '%s\n' "$output" | "$PY" -S -c '
import json, sys
print(" ".join(json.loads(l)["args"]["name"] for l in sys.stdin if l.strip()))')" \
		"epoch.start epoch.end epoch.start epoch.end"
	printf '%s\n' "$output" | "$PY" -S -c '
import json, sys
for l in sys.stdin:
    if l.strip():
        assert json.loads(l)["args"]["value"].isdigit()'
}

@test "annotate: minitrain_cpp's regions have DFTracer's exact names, cats and parents, one per scope it ran" {
	host_only "the C++ API's scopes; its probes are the C API's, which the guest runs"
	traced -- "$EX/minitrain_cpp" "$D/cpp" 2 3
	valid
	expect_minitrain_names
	# each region's parent: the checkpoint is outside the fetch loop, whose
	# iterator dropped its last wait when it went out of scope
	expect_eq "region parents" "$(for c in pipeline dataloader data compute checkpoint; do
		tpy events "$TRACE" --cat "$c" --fields cat,name,args.phase_cat,args.phase
	done | sort -u)" "$(printf '%s\n' \
		"checkpoint	capture	pipeline	epoch" "checkpoint	checkpoint.init	-	-" \
		"compute	backward	dataloader	fetch.block" "compute	forward	dataloader	fetch.block" \
		"compute	step	dataloader	fetch.block" "data	item	dataloader	fetch.iter" \
		"data	preprocess	-	-" "data	preprocess.collate	dataloader	fetch.block" \
		"dataloader	fetch.block	pipeline	epoch" "dataloader	fetch.iter	pipeline	epoch" \
		"pipeline	epoch	pipeline	train" "pipeline	train	-	-")"
	# 2 epochs of 3 steps: 2 items a step (the cached ones too), 3 waits
	# (the last, empty one is no event, as pydftracer) and 3 bodies an
	# epoch, a checkpoint an epoch and the one that failed
	local r
	for r in "pipeline train 1" "pipeline epoch 2" "dataloader fetch.iter 6" \
		"dataloader fetch.block 6" "data item 12" "data preprocess 1" \
		"data preprocess.collate 6" "compute forward 6" "compute backward 6" \
		"compute step 6" "checkpoint capture 3" "checkpoint checkpoint.init 1"; do
		set -- $r
		expect_eq "$1/$2 regions" "$(tpy count "$TRACE" --cat "$1" --name "$2")" "$3"
	done
	run tpy meta "$TRACE" CM
	expect_eq "CM names" "$(printf '%s\n' "$output" | "$PY" -S -c '
import json, sys
print(" ".join(json.loads(l)["args"]["name"] for l in sys.stdin if l.strip()))')" \
		"epoch.start epoch.end epoch.start epoch.end"
}

@test "annotate: C++ RAII scopes end on return, exception, lambda exit and iterator destruction; bytes by phase/epoch/step match" {
	host_only "the C++ API's scopes; its probes are the C API's, which the guest runs"
	traced -- "$EX/minitrain_cpp" "$D/cpp" 2 3
	valid
	annot check "$TRACE" "$TRUTH"
	# the exceptions the loop caught, and the regions they left
	expect_eq "caught" "$(grep '"kind":"caught"' "$TRUTH" | "$PY" -S -c '
import json, sys
for l in sys.stdin:
    r = json.loads(l)
    print(r["cat"], r["name"], r["epoch"], r["step"])')" "$(printf '%s\n' \
		"compute step 0 1" "checkpoint capture 0 2")"
	# every region ended by its own end probe: none closed by the tracer
	expect_eq "unbalanced regions" "$(tpy events "$TRACE" --fields args.unbalanced | grep -vc '^-$')" 0
	# one optimizer step per (epoch, step), the one that threw included
	expect_eq "step regions" "$(tpy events "$TRACE" --cat compute --name step \
		--fields args.epoch,args.step | tr '\t\n' ', ')" "0,0 0,1 0,2 1,0 1,1 1,2 "
	# bytes by phase, epoch and step: the samples written, the reads that
	# missed the loader's cache, half a checkpoint and then a whole one
	expect_eq "bytes by phase/epoch/step" "$(tpy bytes "$TRACE" --under "$D/cpp" \
		--by args.phase_cat,args.phase,args.epoch,args.step |
		awk -F'\t' '$6 > 0 { print $1, $2, $3, $4, $6 }')" "$(printf '%s\n' \
		"checkpoint capture 0 2 98304" "checkpoint capture 1 2 65536" \
		"data item 0 0 12288" "data item 0 1 12288" "data item 0 2 4096" \
		"data item 1 0 8192" "data item 1 1 12288" "data item 1 2 4096" \
		"data preprocess - - 24576")"
	# the capture the exception left holds its half write, the retry the rest
	run tpy events "$TRACE" --json --fields id,ts,cat,name,args.p_idx,args.ret
	expect_eq "bytes written in each capture" "$(printf '%s\n' "$output" | "$PY" -S -c '
import json, sys
evs = [json.loads(l) for l in sys.stdin if l.strip()]
caps = sorted((e["ts"], e["id"]) for e in evs if (e["cat"], e["name"]) == ("checkpoint", "capture"))
print(" ".join(str(sum(e["args.ret"] for e in evs if e["args.p_idx"] == i and
                        e["name"] in ("write", "writev", "pwrite", "pwritev"))) for _, i in caps))')" \
		"32768 65536 65536"
	expect_eq "checkpoints" "$(cd "$D/cpp" && stat -c '%n %s' checkpoint_*)" "$(printf '%s\n' \
		"checkpoint_00.ckpt 65536" "checkpoint_01.ckpt 65536")"
}

# dlopen_traced LIB: trace dlopen_phase loading LIB; it reads a file in the
# library's data.preprocess region once the tracer has attached LIB.
dlopen_traced() {
	head -c 12345 /dev/urandom >"$D/in.bin"
	mkfifo "$T/in"
	"$DFT" -v -q -o "$TRACE" -- "$EX/dlopen_phase" "$1" "$D/in.bin" \
		<"$T/in" >>"$TRUTH" 2>"$T/dft.err" &
	DFT_PID=$!
	BG_PIDS+=("$DFT_PID")
	exec 7>"$T/in"
	wait_line "$T/dft.err" "annotations in '$1': [1-9]"
	echo go >&7
	exec 7>&-
	await "$DFT_PID"
	expect_eq "tracer status" "$AWAIT_STATUS" 0
	annot check "$TRACE" "$TRUTH"
	expect_eq "preprocess regions" "$(tpy count "$TRACE" --cat data --name preprocess)" 1
}

@test "annotate: a dlopen'd library's probes are found and attached (-- CMD)" {
	dlopen_traced "$EX/libphase.so"
}

@test "annotate: a library reached through a symlink (libphase.so.1 -> libphase.so.1.0) is attached" {
	mkdir "$T/lib"
	cp "$EX/libphase.so" "$T/lib/libphase.so.1.0"
	ln -s libphase.so.1.0 "$T/lib/libphase.so.1"
	dlopen_traced "$T/lib/libphase.so.1"
}

@test "annotate: -p finds probes in the running processes' libraries; one library, two processes" {
	head -c 1000 /dev/urandom >"$D/a.bin"
	head -c 2000 /dev/urandom >"$D/b.bin"
	mkfifo "$T/a" "$T/b"
	start_bg A sh -c "exec '$EX/dlopen_phase' '$EX/libphase.so' '$D/a.bin' <'$T/a'"
	exec 7>"$T/a"
	start_bg B sh -c "exec '$EX/dlopen_phase' '$EX/libphase.so' '$D/b.bin' <'$T/b'"
	exec 8>"$T/b"
	for _ in $(seq 1500); do [ "$(grep -c '^ready' "$TRUTH")" = 2 ] && break; sleep 0.02; done
	expect_eq "ready processes" "$(grep -c '^ready' "$TRUTH")" 2
	"$DFT" -v -q -o "$TRACE" -p "$A" -p "$B" 2>"$T/dft.err" &
	DFT_PID=$!
	BG_PIDS+=("$DFT_PID")
	wait_line "$T/dft.err" "annotations in '.*libphase.so': [1-9]"
	echo go >&7
	echo go >&8
	exec 7>&- 8>&-
	await "$A" 30
	await "$B" 30
	await "$DFT_PID"
	expect_eq "tracer status" "$AWAIT_STATUS" 0
	expect_eq "library attached once" "$(grep -c "annotations in '.*libphase.so'" "$T/dft.err")" 1
	annot check "$TRACE" "$TRUTH"
	expect_eq "regions of A" "$(tpy count "$TRACE" --pid "$A" --cat data --name preprocess)" 1
	expect_eq "regions of B" "$(tpy count "$TRACE" --pid "$B" --cat data --name preprocess)" 1
}

@test "annotate: unbalanced annotations are repaired, flagged, and the trace nests" {
	traced -- "$WL/annotate" "$D"
	valid
	annot unbalanced "$TRACE" "$TRUTH"
}

@test "annotate: threads sharing one fd table: every region, and each read inside its own (regions kept with the calls)" {
	local n
	n=$(lab_size 3000 600)
	traced -- "$WL/annotate" "$D" threads "$n"
	valid
	expect_eq "regions" "$(tpy count "$TRACE" --cat compute --name forward)" $((n * 3 / 2))
	annot check "$TRACE" "$TRUTH"
}

@test "annotate: regions from the threads' rings, from pinned registers, or through the specs where a file also has an older header's notes: every region and read" {
	# the pinned build's notes are all pinned, the older one's are not
	local pinned wl how n
	n=$(lab_size 3000 600)
	pinned=$(pinned_args)
	[ -n "$pinned" ]
	readelf -n "$WL/annotate" | grep -A3 -E 'Name: (region_|regions$)' | grep 'Arguments:' >"$T/notes"
	[ -s "$T/notes" ] && ! grep -qvF "Arguments: $pinned" "$T/notes"
	readelf -n "$WL/annotate-oldnotes" | grep -A3 'Name: region_' | grep 'Arguments:' |
		grep -qvF "Arguments: $pinned"
	for how in rings pinned older; do
		wl=annotate
		set --
		[ "$how" = pinned ] && set -- --no-region-rings
		[ "$how" = older ] && wl=annotate-oldnotes
		: >"$TRUTH"
		dft -v "$@" -o "$TRACE" -- "$WL/$wl" "$D" threads "$n"
		expect_eq "$how: status" "$DFT_STATUS" 0
		# the rings take the begins and ends of the header's literal
		# names, the pinned probes' own programs take them without
		# rings, and never a file's that also has an older header's
		# notes, whose sites write no ring
		case $how in
		rings) grep -qE "annotations in '[^']*/$wl': [0-9]+ probes attached, 2 with pinned arguments, regions from threads' rings$" "$T/dft.err" ;;
		pinned) grep -qE "annotations in '[^']*/$wl': [0-9]+ probes attached, 2 with pinned arguments$" "$T/dft.err" ;;
		older) grep -qE "annotations in '[^']*/$wl': [0-9]+ probes attached, regions from threads' rings$" "$T/dft.err" ;;
		esac
		valid
		expect_eq "$how: regions" "$(tpy count "$TRACE" --cat compute --name forward)" $((n * 3 / 2))
		annot check "$TRACE" "$TRUTH"
	done
}

@test "annotate: regions with no syscall in or between them come from the threads' rings: every region, each mapped page in its own, the last ones as a thread dies" {
	# 4 threads x 1001 pairs: 8008 records, 125 rings full, the rest
	# read at a fault or as a thread dies: the process by _exit, the
	# other threads, spinning, by the signal that exit sends them (in
	# the lab's guest 301 pairs: 37 rings full)
	local n
	n=$(lab_size 1001 301)
	dft -v -o "$TRACE" -- "$WL/annotate" "$D" no-syscalls "$n" >"$TRUTH"
	expect_eq "status" "$DFT_STATUS" 0
	grep -qE "annotations in '[^']*/annotate': [0-9]+ probes attached, 2 with pinned arguments, regions from threads' rings$" "$T/dft.err"
	valid
	expect_eq "forward" "$(tpy count "$TRACE" --cat compute --name forward)" $((4 * n))
	expect_eq "backward" "$(tpy count "$TRACE" --cat compute --name backward)" $((4 * n))
	annot check "$TRACE" "$TRUTH"
	# every page of the mapping read once, each in the backward region
	# that touched it: the ring is read at the fault, before its pages
	# (where this kernel has mapped reads: not 6.1)
	has_feature mmap_read || return 0
	expect_eq "pages by phase" "$(tpy events "$TRACE" --name mmap_read --path "$D/compute.dat" \
		--fields args.phase,args.pages | awk '{ n[$1] += $2 } END { for (p in n) print p, n[p] }')" \
		"backward $((4 * n))"
}

@test "annotate: regions named in a buffer written over as each ends keep their names (probes, not the ring)" {
	dft -o "$TRACE" -- "$WL/annotate" "$D" computed 300 >"$TRUTH"
	expect_eq "status" "$DFT_STATUS" 0
	valid
	for l in 0 1 2; do
		expect_eq "layer$l" "$(tpy count "$TRACE" --cat compute --name "layer$l")" 100
	done
	annot check "$TRACE" "$TRUTH"
}

@test "annotate: the exit summary's phase table shows a program's control bytes escaped, never raw" {
	dft -o "$TRACE" -- "$WL/annotate" "$D" $'\e]0;t\a' $'\e[2J\xc2\x9b\\'
	expect_eq "status" "$DFT_STATUS" 0
	# the names as the trace has them, and the table's line for them
	expect_eq "region in the trace" "$(tpy events "$TRACE" --under "$D" --fields args.phase_cat,args.phase | sort -u)" \
		$'\e]0;t\a\t\e[2J\xc2\x9b\\'
	# (the column is 30 wide: short names, to see them whole)
	grep -qF '\x1b]0;t\x07/\x1b[2J\xc2\x9b\\ ' "$T/dft.err" ||
		{ sed -n '/phase (cat\/name)/,$p' "$T/dft.err" | cat -v | sed 's/^/#   /'; return 1; }
	! LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$T/dft.err"
}

@test "annotate: the trace is complete before the uprobes are detached (the slow part of stopping on a busy host)" {
	"$DFT" -v -o "$TRACE" -- "$WL/annotate" "$D" compute forward >>"$TRUTH" 2>"$T/dft.err"
	# in order: the exit summary (written once the file is closed) ends
	# with its path, then the uprobes go
	run grep -nE "^trace: $TRACE\$|^dftrace-bpf: trace complete; detaching [0-9]+ uprobes\$" "$T/dft.err"
	[ "${#lines[@]}" = 2 ] || sed 's/^/#   /' "$T/dft.err"
	expect_eq "order" "$(printf '%s\n' "${lines[@]}" | sed 's/^[0-9]*://; s/[0-9]* uprobes/N uprobes/')" \
		"$(printf '%s\n' "trace: $TRACE" "dftrace-bpf: trace complete; detaching N uprobes")"
	valid
	expect_eq "the region" "$(tpy events "$TRACE" --cat compute --name forward --fields name)" forward
}

@test "annotate: 130 fresh copies of a library with every probe, each loaded, called and unloaded in turn: the region and read of each, its probes and specs released as it goes" {
	local n
	n=$(copies 130 6)
	copies_each "$STANDIN/libannotated.so" "$n" annotations
	expect_eq "calls made" "$(grep -c '^info	call	' "$TRUTH")" "$n"
	expect_eq "preprocess regions" "$(tpy count "$TRACE" --cat data --name preprocess)" "$n"
	# another provider's probe, named as ours, is left alone (a nop)
	expect_eq "its site in each copy" "$(awk -F'\t' '$2 == "other" { print $4 }' "$TRUTH" | sort | uniq -c |
		awk '{$1=$1} 1')" "$n 90"
	# copy i reads in-i.bin, of i bytes, inside its region
	expect_eq "reads by file and region" \
		"$(tpy events "$TRACE" --name read --under "$D" --fields path,args.phase,args.ret |
			awk -F'\t' '$1 ~ /\/in-[0-9]+\.bin$/ && $3 > 0' | sed "s|^$D/||" | sort -V)" \
		"$(for i in $(seq "$n"); do printf 'in-%d.bin\tpreprocess\t%d\n' "$i" "$i"; done)"
	expect_eq "copies released" \
		"$(count_lines "^dftrace-bpf: probes in '$D/copy-[0-9]+.so' released")" "$n"
	expect_eq "the tracer's descriptors (before the first copy: $FDS_BEFORE; its programs loaded at their first use: $FDS_LAZY)" \
		"$FDS_AFTER" "$((FDS_BEFORE + FDS_LAZY))"
}
