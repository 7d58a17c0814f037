#!/usr/bin/env bats
# GPU and collective calls from uprobes on the libraries (issue 26), on
# stand-in libcuda.so.1, libnccl.so.2 and libcufile.so.0 (tests/standin:
# the real sonames, symbols and signatures). gpujob reports every call it
# makes ("gpu" truth records); the trace must have exactly the probed
# ones, with their bytes, kernel names, copy kinds, ranks and files, in
# their regions and steps.
#
# The workload holds once its libraries are mapped ($GPUJOB_HOLD) until
# the tracer says (-v) it probed all three: a library is probed some
# milliseconds after the tracer reads that it was mapped, and calls
# before that are not seen (the README says so).

load lib/common
load lib/copies

GPUJOB="$WL/gpujob"
GPUJOB_DL="$WL/gpujob-dl"
TABLE="$ROOT/bpf/gpu.h"
fixture() { "$PY" "$ROOT/tests/lib/fixtures.py" "$@"; }

# await_probed N: the tracer said it probed N GPU libraries
await_probed() { await_gpu_probed "$T/dft.err" "$1"; }

# release: the held workload ($WL_CTL/loaded) goes on
release() {
	wait_file "$WL_CTL/loaded" 30
	kill -USR1 "$(cat "$WL_CTL/loaded")"
	rm -f "$WL_CTL/loaded"
}

# gpu_traced PROGRAM MODE [TRACER OPT...]: trace PROGRAM MODE $D 3 2 (or
# $GPUJOB_SIZES: NCOPIES NLAUNCH),
# released once its libraries are probed; the tracer must exit 0.
gpu_traced() {
	local prog=$1 mode=$2
	shift 2
	# shellcheck disable=SC2086 # two numbers
	GPUJOB_HOLD=1 "$DFT" -v -o "$TRACE" "$@" -- "$prog" "$mode" "$D" ${GPUJOB_SIZES:-3 2} \
		>>"$TRUTH" 2>"$T/dft.err" &
	DFT_PID=$!
	BG_PIDS+=("$DFT_PID")
	await_probed 3
	release
	await "$DFT_PID" 60
	[ "$AWAIT_STATUS" = 0 ] || { sed 's/^/#   /' "$T/dft.err"; return 1; }
}

# gpu_findings MODE: gpujob MODE (starve or fed) of 16 reads traced into
# $TRACE; summary --findings --json of it into $T/f.json
gpu_findings() {
	"$GPUJOB" input "$D" 1 16 >/dev/null
	GPUJOB_SIZES="1 16" gpu_traced "$GPUJOB" "$1"
	# the tracer's hold for the probes is part of the wall: any share
	"$DFT" summary -q --findings --json --findings-min-share 0 "$TRACE" >"$T/f.json"
}

gpu_check() {
	run tpy gpu-check "$TRACE" "$TRUTH" --table "$TABLE"
	echo "$output" | sed 's/^/#   /' | head -30
	[ "$status" = 0 ]
}

# truth_sum AWK-CONDITION: the sum of BYTES of the truth's gpu records
# that match (fields: $4 cat, $5 name, $6 bytes, $11 function)
truth_sum() {
	awk -F'\t' '$1 == "gpu" && $6 != "-" && ('"$1"') { s += $6 } END { print s + 0 }' "$TRUTH"
}

truth_count() {
	awk -F'\t' '$1 == "gpu" && ('"$1"') { n++ } END { print n + 0 }' "$TRUTH"
}

@test "gpu: copies, launches with their kernels' names, allocations, waits, collectives with ranks and cuFile I/O: each call exact, in its region and step" {
	gpu_traced "$GPUJOB" run
	valid
	gpu_check
	expect_eq "cuLaunchKernel calls" \
		"$(tpy count "$TRACE" --name cuLaunchKernel --cat CUDA_DRIVER_API)" 8
	run tpy events "$TRACE" --name cuLaunchKernel --fields args.kernel,args.grid_x,args.block_x,args.shared_bytes
	expect_eq "kernels launched" "$(sort <<<"$output" | uniq -c | awk '{$1=$1} 1')" \
		"4 gemm_tile 8 16 4096
4 vecadd 64 256 0"
}

@test "gpu: cuFile in compatibility mode reads with pread(2): the syscalls carry the bytes, the cuFile calls are CUFILE, and DFAnalyzer counts each byte once" {
	gpu_traced "$GPUJOB" run
	gpu_check
	want=$(truth_sum '$4 == "CUFILE" && ($5 == "pread" || $5 == "pwrite")')
	[ "$want" -gt 0 ]
	expect_eq "gds.dat's bytes by DFAnalyzer's rule" \
		"$(tpy dfa-bytes "$TRACE" --path "$D/gds.dat")" "$D/gds.dat	$want"
	expect_eq "the stand-in's syscalls on gds.dat, as many as its cuFile reads and writes" \
		"$(tpy count "$TRACE" --path "$D/gds.dat" --cat POSIX --name pread,pwrite)" \
		"$(truth_count '$4 == "CUFILE" && ($5 == "pread" || $5 == "pwrite")')"
	run tpy events "$TRACE" --cat CUFILE --name pread,pwrite --fields args.via
	expect_eq "args.via" "$(sort -u <<<"$output")" posix
	# summary counts each call once: a syscall in its row, a cuFile call
	# in its api's (not in pwrite's too, which named it)
	"$DFT" summary -q --json --by op "$TRACE" >"$T/sum.json"
	calls() { "$PY" -c 'import json,sys; print(sum(r["calls"] for r in json.load(open(sys.argv[1]))["groupings"][0]["rows"] if r["op"] == sys.argv[2]))' "$T/sum.json" "$1"; }
	for op in pread pwrite; do
		expect_eq "the $op row: the syscalls alone" "$(calls $op)" \
			"$(tpy count "$TRACE" --cat POSIX --name $op)"
	done
	for api in cuFileRead cuFileWrite cuFileReadAsync cuFileWriteAsync; do
		want=$(truth_count '$4 == "CUFILE" && $11 == "'$api'"')
		[ "$want" -gt 0 ]
		expect_eq "the $api row" "$(calls $api)" "$want"
	done
}

@test "gpu: cuFile through GPUDirect (no syscall moves the bytes): POSIX pread/pwrite events with args.ret, and DFAnalyzer counts them" {
	STANDIN_CUFILE_GDS=1 gpu_traced "$GPUJOB" run
	gpu_check
	want=$(truth_sum '$4 == "POSIX"')
	[ "$want" -gt 0 ]
	expect_eq "POSIX reads and writes of gds.dat: the cuFile calls alone" \
		"$(tpy count "$TRACE" --path "$D/gds.dat" --cat POSIX --name pread,pwrite,read,write)" \
		"$(truth_count '$4 == "POSIX"')"
	run tpy events "$TRACE" --path "$D/gds.dat" --cat POSIX --name pread,pwrite --fields args.api
	expect_eq "their api" "$(sort -u <<<"$output" | paste -sd' ')" \
		"cuFileBatchIOSubmit cuFileRead cuFileReadAsync cuFileWrite cuFileWriteAsync"
	expect_eq "gds.dat's bytes by DFAnalyzer's rule" \
		"$(tpy dfa-bytes "$TRACE" --path "$D/gds.dat")" "$D/gds.dat	$want"
}

@test "gpu: libraries opened with dlopen are probed as they are mapped" {
	gpu_traced "$GPUJOB_DL" run
	grep -q "^info	dlopen	libcuda.so.1	$ROOT/build/standin/libcuda.so.1$" "$TRUTH"
	gpu_check
}

@test "gpu: two processes in scope, each with its own communicator, kernels and file" {
	gpu_traced "$GPUJOB" fork
	gpu_check
	run tpy events "$TRACE" --name ncclAllReduce --fields pid,args.comm_rank,args.comm_size
	# each process's own 4-rank communicator, and the 8-rank one both made
	expect_eq "the processes' all-reduces, by communicator" \
		"$(sort -u <<<"$output" | awk '{print $2 "/" $3}' | sort | uniq -c | awk '{$1=$1} 1')" \
		"1 1/4
1 2/4
2 3/8"
	# each process made both from one ncclUniqueId of its own: one
	# args.comm_id a process (the kernel side read the id off the
	# stack at ncclCommInitRank), two in all
	run tpy events "$TRACE" --name ncclAllReduce --fields pid,args.comm_id
	expect_eq "communicator ids, a process's" \
		"$(sort -u <<<"$output" | grep -E $'\t[0-9a-f]{16}$' | cut -f1 | uniq -c | awk '{print $1}')" "1
1"
	expect_eq "communicator ids in all" "$(awk '{print $2}' <<<"$output" | sort -u | wc -l)" 2
	# each process destroys its 4- and 8-rank communicators (one id)
	# and the two of ncclCommInitAll (none)
	run tpy events "$TRACE" --name ncclCommDestroy --fields args.comm_id
	expect_eq "destroyed communicators' ids" "$(sort <<<"$output" | uniq -c | awk '{print $1}' | sort -rn)" "4
2
2"
}

@test "gpu: attached with -p to a running job: every call after the attach" {
	start_workload "$GPUJOB" wait "$D" 3 2
	"$DFT" -v -o "$TRACE" -p "$WL_PID" 2>"$T/dft.err" &
	DFT_PID=$!
	BG_PIDS+=("$DFT_PID")
	await_probed 3
	finish_attached
	gpu_check
}

@test "gpu: attached with -p, the libraries dlopen'd after the attach" {
	GPUJOB_HOLD=1 start_workload "$GPUJOB_DL" wait "$D" 3 2
	attach -v
	! grep -q 'GPU calls in' "$T/dft.err"
	kill -USR1 "$WL_PID"
	await_probed 3
	release
	await "$WL_PID" 60
	await "$DFT_PID" 60
	expect_eq "tracer status" "$AWAIT_STATUS" 0
	gpu_check
}

@test "gpu: --flight: the file holds the GPU calls' totals, a dump each call whole" {
	# the first call of 1 us or more fires; the dump waits for the end
	gpu_traced "$GPUJOB" run --flight 30 --flight-after 600 --trigger slow-io=0.001
	valid
	run tpy events "$TRACE" --cat CUDA_DRIVER_API,NCCL,CUFILE --fields args.folded
	expect_eq "GPU events in the file, each a total" "$(sort -u <<<"$output")" profile
	TRACE="$T/t-flight-1-slow-io.pfw.gz" valid
	TRACE="$T/t-flight-1-slow-io.pfw.gz" gpu_check
}

@test "gpu: --profile folds GPU calls like any call: calls and bytes per call exact, launches by kernel" {
	gpu_traced "$GPUJOB" run --profile
	valid
	run tpy events "$TRACE" --cat CUDA_DRIVER_API,NCCL,CUFILE --fields args.folded
	expect_eq "GPU events, each a total" "$(sort -u <<<"$output")" profile
	for name in cuMemcpyHtoD_v2 cuMemcpyDtoHAsync_v2 ncclAllReduce cuMemAlloc_v2; do
		run tpy events "$TRACE" --name "$name" --fields args.calls,args.bytes
		got=$(awk '{ c += $1; b += $2 } END { print c, b }' <<<"$output")
		expect_eq "$name calls and bytes" "$got" \
			"$(truth_count '$5 == "'"$name"'"') $(truth_sum '$5 == "'"$name"'"')"
	done
	run tpy events "$TRACE" --name cuLaunchKernel --fields args.kernel,args.calls
	expect_eq "launches by kernel" \
		"$(awk '{ n[$1] += $2 } END { for (k in n) print k, n[k] }' <<<"$output" | sort)" \
		"gemm_tile 4
vecadd 4"
}

@test "gpu: summary and report give the waits, bytes to and from the device per phase and step, and collective bytes per rank" {
	gpu_traced "$GPUJOB" run
	run "$DFT" summary --json "$TRACE"
	[ "$status" = 0 ]
	echo "$output" >"$T/sum.json"
	j() { "$PY" -c 'import json,sys; g=json.load(open(sys.argv[1]))["gpu"]; print(eval(sys.argv[2]))' "$T/sum.json" "$1"; }
	waits='$11 ~ /Synchronize|WaitEvent/'
	expect_eq "waits" "$(j 'g["waits"]')" "$(truth_count "$waits")"
	expect_eq "to the device" "$(j 'g["to_device_bytes"]')" "$(truth_sum '$7 == "HtoD"')"
	expect_eq "from the device" "$(j 'g["from_device_bytes"]')" "$(truth_sum '$7 == "DtoH"')"
	expect_eq "launches" "$(j 'g["launches"]')" "$(truth_count '$11 ~ /Launch/')"
	coll='$4 == "NCCL" && $11 !~ /Comm|Group|GetUniqueId/'
	expect_eq "collective bytes" "$(j 'g["collective_bytes"]')" "$(truth_sum "$coll")"
	expect_eq "to the device in forward, step 2" \
		"$(j '[r["to_device_bytes"] for r in g["by_phase_step"] if r["phase"] == "compute/forward" and r["step"] == 2][0]')" \
		"$(truth_sum '$7 == "HtoD" && $9 == "forward" && $10 == 2')"
	expect_eq "from the device in backward, step 1" \
		"$(j '[r["from_device_bytes"] for r in g["by_phase_step"] if r["phase"] == "compute/backward" and r["step"] == 1][0]')" \
		"$(truth_sum '$7 == "DtoH" && $9 == "backward" && $10 == 1')"
	expect_eq "collective bytes of rank 3 (its 3-of-8 communicator)" \
		"$(j '[r["bytes"] for r in g["by_rank"] if r["rank"] == 3][0]')" \
		"$(truth_sum "$coll"' && $7 == "rank=3,nranks=8"')"
	"$DFT" summary "$TRACE" >"$T/sum.txt"
	grep -q '^GPU, as the host saw it: ' "$T/sum.txt"
	grep -qE '^compute/forward +2 ' "$T/sum.txt"
	"$DFT" report -o "$T/r.html" "$TRACE" 2>/dev/null
	grep -q "data-key=\"to_device_bytes\" data-v=\"$(truth_sum '$7 == "HtoD"')\"" "$T/r.html"
}

@test "gpu: merge keeps the GPU events beside torch's operators, on the same process" {
	gpu_traced "$GPUJOB" run
	pid=$(awk -F'\t' '$1 == "gpu" { print $2; exit }' "$TRUTH")
	start_us=$(tpy events "$TRACE" --name cuLaunchKernel --fields ts | head -1)
	fixture kineto "$T/k.json" --pid "$pid" --start-us "$start_us" --base >/dev/null
	"$DFT" merge -o "$T/m.json" "$TRACE" "$T/k.json" 2>"$T/merge.err"
	got=$("$PY" -c 'import json,sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
gpu = [e for e in ev if e.get("cat") in ("CUDA_DRIVER_API", "NCCL", "CUFILE")]
mm = [e for e in ev if e.get("name") == "aten::mm"]
print(len(gpu), sorted({e["args"].get("kernel") for e in gpu if e["name"] == "cuLaunchKernelEx"}),
      sorted({e["pid"] for e in gpu + mm}) == [int(sys.argv[2])], len(mm))' "$T/m.json" "$pid")
	expect_eq "GPU events merged, a launch's kernel, torch's op on their process" "$got" \
		"$(tpy count "$TRACE" --cat CUDA_DRIVER_API,NCCL,CUFILE) ['vecadd'] True 1"
}

@test "gpu: --no-gpu probes none of them; the trace's start says '-gpu'" {
	GPUJOB_HOLD=1 "$DFT" -v --no-gpu -o "$TRACE" -- "$GPUJOB" run "$D" 3 2 >>"$TRUTH" 2>"$T/dft.err" &
	DFT_PID=$!
	BG_PIDS+=("$DFT_PID")
	release
	await "$DFT_PID" 60
	expect_eq "tracer status" "$AWAIT_STATUS" 0
	! grep -q 'GPU calls in' "$T/dft.err"
	expect_eq "GPU events" "$(tpy count "$TRACE" --cat CUDA_DRIVER_API,NCCL,CUFILE)" 0
	run tpy events "$TRACE" --all --name start --fields args.features
	[[ "$output" == *,-gpu,* ]]
}

# launches LIST: the trace's cuLaunchKernel calls by grid_x, one a line, sorted
launches() {
	tpy events "$TRACE" --name cuLaunchKernel --fields args.grid_x | sort -n
}

@test "gpu: 300 fresh copies of a library, each loaded, called and unloaded in turn: every call, each copy's probes released as it goes, the tracer's descriptors back where they began" {
	local n
	n=$(copies 300 20)
	copies_each "$STANDIN/liblaunch.so" "$n" "GPU calls"
	expect_eq "calls made" "$(grep -c '^info	call	' "$TRUTH")" "$n"
	expect_eq "launches traced, by grid_x (the copy)" "$(launches)" "$(seq "$n")"
	expect_eq "copies released" \
		"$(count_lines "^dftrace-bpf: probes in '$D/copy-[0-9]+.so' released")" "$n"
	expect_eq "the tracer's descriptors (before the first copy: $FDS_BEFORE; its programs loaded at their first use: $FDS_LAZY)" \
		"$FDS_AFTER" "$((FDS_BEFORE + FDS_LAZY))"
}

@test "gpu: more probes than the tracer holds at once: the copies past its bound wait unprobed, said once, and the calls of those probed are exact" {
	# 80 copies of libcuda.so.1: more uprobes than PROBED_SITES_MAX
	# (4,096, capture/probed.h) at once; or, with a perf event and its
	# link a uprobe (before Linux 6.6), more descriptors than a quarter
	# of the 1024 the tracer may open here
	local n=80 calls probed waiting
	(ulimit -n 1024 && exec "$DFT" -v -o "$TRACE" -- "$COPIES" all "$STANDIN/libcuda.so.1" \
		"$D" "$n") >>"$TRUTH" 2>"$T/dft.err" &
	DFT_PID=$!
	BG_PIDS+=("$DFT_PID")
	copies_pid loaded
	await_lines "^dftrace-bpf: (GPU calls in|not probing) '$D/copy-" "$n"
	# which copies were probed, before any call (none is released before)
	probed=$(sed -n "s|^dftrace-bpf: GPU calls in '$D/copy-\([0-9]*\).so': .*|\1|p" \
		"$T/dft.err" | sort -n)
	calls=$(sed -n "s|^dftrace-bpf: GPU calls in '$D/copy-1.so': \([0-9]*\) probed|\1|p" \
		"$T/dft.err")
	waiting=$(count_lines "^dftrace-bpf: not probing '$D/copy-")
	kill -USR1 "$COPIES_PID"
	await "$DFT_PID" 60
	expect_eq "tracer status" "$AWAIT_STATUS" 0
	[ "$waiting" -ge 1 ]
	expect_eq "copies probed or waiting" "$(( $(wc -l <<<"$probed") + waiting ))" "$n"
	# an entry and a return a call, within the bound
	[ "$(( $(wc -l <<<"$probed") * 2 * calls ))" -le 4096 ]
	expect_eq "said once, with the bound" \
		"$(count_lines "^dftrace-bpf: not probing '.*' while probes on [0-9]+ sites, in [0-9]+ descriptors, are held: at most 4096 and 256 at once")" 1
	expect_eq "launches traced: those of the probed copies" "$(launches)" "$probed"
}

@test "gpu: a library a forked child still maps when its parent unloads it keeps its probes: the child's call is traced" {
	copies_traced fork "$STANDIN/liblaunch.so" 1 child
	wait_line "$T/dft.err" "^dftrace-bpf: GPU calls in '$D/copy-1.so'"
	# the parent's unmapping has been read once its mark is in the trace
	tpy wait-for "$TRACE" --path "$D/closed" --alive "$DFT_PID" --timeout 30
	! grep -q "^dftrace-bpf: probes in '$D/copy-1.so' released" "$T/dft.err"
	kill -USR1 "$COPIES_PID"
	await "$DFT_PID" 60
	expect_eq "tracer status" "$AWAIT_STATUS" 0
	expect_eq "the child's launch" "$(tpy events "$TRACE" --name cuLaunchKernel --fields pid,args.grid_x)" \
		"$COPIES_PID	1"
}

@test "gpu: -p: a library mapped before the attach is held, and released when the process unloads it" {
	start_bg WL_PID "$COPIES" each "$STANDIN/liblaunch.so" "$D" 1
	copies_pid ready
	kill -USR1 "$WL_PID"
	for _ in $(seq 1500); do grep -q "$D/copy-1.so" "/proc/$WL_PID/maps" && break; sleep 0.02; done
	grep -q "$D/copy-1.so" "/proc/$WL_PID/maps"
	"$DFT" -v -o "$TRACE" -p "$WL_PID" 2>"$T/dft.err" &
	DFT_PID=$!
	BG_PIDS+=("$DFT_PID")
	wait_line "$T/dft.err" "^dftrace-bpf: GPU calls in '$D/copy-1.so'"
	kill -USR1 "$WL_PID"
	wait_file "$WL_CTL/done" 60
	wait_line "$T/dft.err" "^dftrace-bpf: probes in '$D/copy-1.so' released"
	kill -USR1 "$WL_PID"
	await "$WL_PID" 60
	await "$DFT_PID" 60
	expect_eq "tracer status" "$AWAIT_STATUS" 0
	expect_eq "the launch" "$(launches)" 1
}

@test "gpu: a recursion through a probed call: the outermost 16 calls in flight in a thread are recorded, the deeper ones counted lost" {
	copies_traced recurse "$STANDIN/liblaunch.so" 20 loaded
	wait_line "$T/dft.err" "^dftrace-bpf: GPU calls in '$D/copy-1.so'"
	kill -USR1 "$COPIES_PID"
	await "$DFT_PID" 60
	expect_eq "tracer status" "$AWAIT_STATUS" 0
	expect_eq "calls made, nested" "$(grep -c '^info	call	' "$TRUTH")" 20
	# DFT_GPU_DEPTH (bpf/gpu.h): grid_x 20 is the outermost
	expect_eq "launches traced" "$(launches)" "$(seq 5 20)"
	expect_eq "launches lost" "$(tpy lost "$TRACE" --op gpu_call)" 4
}

@test "gpu: findings: reads while the GPU has nothing queued (after a stream sync, before the next launch) are gpu_waits_on_io, within 10%; the same reads while it runs, none" {
	gpu_findings starve
	"$PY" - "$T/f.json" "$TRUTH" <<-'EOF'
	import json, sys
	found = [x for x in json.load(open(sys.argv[1]))["findings"] if x["rule"] == "gpu_waits_on_io"]
	p = [l.rstrip("\n").split("\t") for l in open(sys.argv[2]) if l.startswith("planted\t")]
	assert len(p) == 1 and len(found) == 1, (p, found)
	x, want = found[0], int(p[0][3])
	assert x["where"] == {"process": p[0][2]}, (x, p)
	assert abs(x["ns"] - want) <= 0.1 * want + int(p[0][5]), (x["ns"], p)
	print("# %d ns, the workload's %d" % (x["ns"], want))
	EOF
	rm -f "$TRACE" "$TRUTH"
	gpu_findings fed
	grep -qP "^planted\tnone\tgpujob \[" "$TRUTH"
	run "$PY" -c 'import json,sys; print([x for x in json.load(open(sys.argv[1]))["findings"] if x["rule"] == "gpu_waits_on_io"])' "$T/f.json"
	expect_eq "gpu_waits_on_io when fed" "$output" "[]"
}
