#!/usr/bin/env bats
# Scopes beyond a pid tree: -a, --cgroup, --uid, --comm. Each workload's
# own records are the truth; what is out of scope must be absent.

load lib/common

CGROOT=/sys/fs/cgroup/unified

setup_file() {
	[ -d "$CGROOT" ] || CGROOT=/sys/fs/cgroup
}

teardown() {
	# the test's processes end first: a cgroup with one is not removed
	# (common_teardown says if one lives on)
	end_test_processes || true
	# a hierarchy mounted inside itself: unmounted before its directory goes
	for m in "${MOUNTS[@]}"; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done
	MOUNTS=()
	for cg in "${CGROUPS[@]}"; do
		# processes the test left there go back to the root first
		while read -r p; do echo "$p" >"$CGROOT/cgroup.procs" 2>/dev/null; done \
			<"$cg/cgroup.procs" 2>/dev/null
		rmdir "$cg" 2>/dev/null || true
	done
	common_teardown
}

CGROUPS=()
# new_cgroup VAR: a new cgroup's directory into VAR, removed by teardown
# (not in a $(...): the list it goes in would be the subshell's)
new_cgroup() {
	local new_cgroup_dir="$CGROOT/dft-test-$$-$RANDOM"

	mkdir "$new_cgroup_dir"
	CGROUPS+=("$new_cgroup_dir")
	printf -v "$1" '%s' "$new_cgroup_dir"
}

# agent OUT ARGS...: the tracer in the background (DFT_PID); returns once
# it traces (its file is named only then)
agent() {
	local out=$1
	shift
	"$DFT" -q -o "$out" "$@" 2>"$T/dft.err" &
	DFT_PID=$!
	BG_PIDS+=("$DFT_PID")
	wait_file "$out" 30 || { cat "$T/dft.err"; return 1; }
}

# stop_agent: SIGINT, and it must exit 0
stop_agent() {
	kill -INT "$DFT_PID"
	await "$DFT_PID" 60
	[ "$AWAIT_STATUS" = 0 ] || { echo "# tracer exited $AWAIT_STATUS"; cat "$T/dft.err"; return 1; }
}

# in_cgroup CG CMD...: run CMD inside cgroup CG, its records to $TRUTH
in_cgroup() {
	local cg=$1
	shift
	sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$cg" "$@" >>"$TRUTH"
}

@test "scope: --cgroup traces exactly its processes, those already in it and those moved in, not a sibling outside" {
	new_cgroup cg
	mkdir -p "$D/in" "$D/out"
	# already in the cgroup before the tracer starts, waiting
	rm -f "$WL_CTL/ready"
	sh -c 'echo $$ >"$0/cgroup.procs" && exec "$1" write - "$2" wait' "$cg" "$WL/util" "$D/in" \
		>>"$TRUTH" 2>>"$T/bg.err" &
	early=$!
	BG_PIDS+=("$early")
	wait_file "$WL_CTL/ready" 20
	agent "$T/t.pfw" --cgroup "$cg"
	kill -USR1 "$early"
	await "$early" 30
	in_cgroup "$cg" "$WL/io" basic "$D/in"
	"$WL/util" write - "$D/out" >>"$T/outside.tsv"
	stop_agent
	TRACE="$T/t.pfw" check_truth --under "$D/in"
	run tpy events "$T/t.pfw" --under "$D/out"
	[ -z "$output" ]
	grep -q "$D/out/write-" "$T/outside.tsv"
}

@test "scope: -a sees a process started after it attached, and not itself" {
	agent "$T/t.pfw" -a
	"$WL/io" basic "$D" >>"$TRUTH"
	stop_agent
	TRACE="$T/t.pfw" check_truth --under "$D"
	run tpy events "$T/t.pfw" --pid "$DFT_PID"
	[ -z "$output" ]
}

@test "scope: --comm matches after an exec and after a rename (prctl), nothing else" {
	agent "$T/t.pfw" --comm dftwanted
	mkdir -p "$D/a" "$D/b" "$D/c"
	cp "$WL/util" "$T/dftwanted"
	"$T/dftwanted" write - "$D/a" >>"$TRUTH"		# exec'd under the name
	"$WL/util" write dftwanted "$D/b" >>"$TRUTH"		# renamed itself
	"$WL/util" write - "$D/c" >>"$T/other.tsv"		# neither
	stop_agent
	TRACE="$T/t.pfw" check_truth --under "$D/a"
	TRACE="$T/t.pfw" check_truth --under "$D/b"
	run tpy events "$T/t.pfw" --under "$D/c"
	[ -z "$output" ]
}

@test "scope: --uid traces a user's processes and not root's" {
	agent "$T/t.pfw" --uid nobody
	mkdir -p "$D/n" "$D/r"
	chmod 777 "$D/n"
	setpriv --reuid=65534 --regid=65534 --clear-groups "$WL/util" write - "$D/n" >>"$TRUTH"
	"$WL/util" write - "$D/r" >>"$T/root.tsv"
	stop_agent
	TRACE="$T/t.pfw" check_truth --under "$D/n"
	run tpy events "$T/t.pfw" --under "$D/r"
	[ -z "$output" ]
}

@test "scope: two tracers with disjoint scopes: each has its own processes, neither the other's, nor the other tracer" {
	mkdir -p "$D/one" "$D/two"
	agent "$T/one.pfw" --comm dftone
	first=$DFT_PID
	agent "$T/two.pfw" --comm dfttwo
	second=$DFT_PID
	"$WL/util" write dftone "$D/one" >>"$T/one.tsv"
	"$WL/util" write dfttwo "$D/two" >>"$T/two.tsv"
	DFT_PID=$second stop_agent
	DFT_PID=$first stop_agent
	TRUTH="$T/one.tsv" TRACE="$T/one.pfw" check_truth --under "$D/one"
	TRUTH="$T/two.tsv" TRACE="$T/two.pfw" check_truth --under "$D/two"
	run tpy events "$T/one.pfw" --under "$D/two"
	[ -z "$output" ]
	run tpy events "$T/two.pfw" --under "$D/one"
	[ -z "$output" ]
	for f in one two; do
		for p in "$first" "$second"; do
			run tpy events "$T/$f.pfw" --pid "$p"
			[ -z "$output" ]
		done
	done
}

@test "scope: a process that execs another tracer leaves this trace" {
	dft -q -o "$TRACE" -- sh -c '"$0" -q -o "$1" -- "$2" write - "$3" >/dev/null' \
		"$DFT" "$T/inner.pfw" "$WL/util" "$D"
	[ "$DFT_STATUS" = 0 ]
	# the inner tracer has the write; the outer one none of it
	[ -n "$(tpy events "$T/inner.pfw" --under "$D" --name write)" ]
	run tpy events "$TRACE" --under "$D"
	[ -z "$output" ]
}

@test "scope: launcher rank variables reach the process's metadata, end event and -D file name" {
	dft -q -D "$T/out" -- env RANK=3 WORLD_SIZE=8 LOCAL_RANK=1 "$WL/util" write - "$D"
	[ "$DFT_STATUS" = 0 ]
	f=$(ls "$T"/out/"$HOSTTAG"-r3-util-*.pfw.gz)
	[ -n "$f" ]
	zcat "$f" | grep '"name":"PR"' | grep -q '"args":{"name":"rank","value":"3"}'
	zcat "$f" | grep '"name":"PR"' | grep -q '"args":{"name":"world_size","value":"8"}'
	zcat "$f" | grep '"name":"PR"' | grep -q '"args":{"name":"local_rank","value":"1"}'
	# the file began before the exec that set them: the end event says them
	zcat "$f" | grep '"name":"end"' | grep -q '"rank":3,"world_size":8'
	# and the merge names the process after it
	"$DFT" merge -q -o "$T/view.json" "$T/out"
	grep -q "rank 3 \\\\u00b7 util \[" "$T/view.json"
}

@test "scope: bad scopes are one line and a usage error" {
	mkdir -p "$T/plain"
	for args in "--cgroup $T/plain" "--cgroup $T/missing" "--uid no-such-user-x" \
		"--comm ''" "--comm a-name-longer-than-15" "-a --comm x" "-a --uid 0" \
		"--cgroup $CGROOT"; do
		eval "run \"\$DFT\" $args -- true"
		[ "$status" = 64 ]
		[[ "${lines[0]}" == "dftrace-bpf: "[a-z\'-]* ]]
	done
	run "$DFT" --cgroup "$T/plain" -- true
	[[ "$output" == *"'$T/plain' is not a cgroup v2 directory"* ]]
	run "$DFT" --uid no-such-user-x -- true
	[[ "$output" == *"unknown user 'no-such-user-x'"* ]]
}

@test "cluster: the Slurm prolog and epilog trace the job's cgroup into a per-job directory" {
	new_cgroup cg
	export SLURM_JOB_ID=4242 DFTRACE_BPF_DIR="$T/jobs" DFTRACE_BPF_CGROUP="$cg" \
		DFTRACE_BPF_RUN="$T/run" DFTRACE_BPF="$DFT"
	"$ROOT/scripts/cluster/slurm-prolog"
	pid=$(cat "$T/run/4242.pid")
	BG_PIDS+=("$pid")
	# the job's step: in the cgroup, with the rank Slurm gives it
	in_cgroup "$cg" env SLURM_PROCID=7 SLURM_NTASKS=8 "$WL/util" write - "$D"
	"$ROOT/scripts/cluster/slurm-epilog"
	! kill -0 "$pid" 2>/dev/null
	[ ! -e "$T/run/4242.pid" ]
	f=$(ls "$T"/jobs/4242/"$HOSTTAG"-r7-util-*.pfw.gz)
	TRACE="$f" valid
	TRACE="$f" check_truth --under "$D"
}

@test "cluster: with SLURM_JOB_USER the job's directory and files are that user's alone (0700, 0600), and the epilog signals only root's pid file" {
	new_cgroup cg
	mkdir -p "$T/jobs"
	chmod 755 "$T/jobs"
	chmod 777 "$D"
	export SLURM_JOB_ID=4243 SLURM_JOB_USER=nobody DFTRACE_BPF_DIR="$T/jobs" \
		DFTRACE_BPF_CGROUP="$cg" DFTRACE_BPF_RUN="$T/run" DFTRACE_BPF="$DFT"
	"$ROOT/scripts/cluster/slurm-prolog"
	pid=$(cat "$T/run/4243.pid")
	BG_PIDS+=("$pid")
	expect_eq "the pid file's owner" "$(stat -c %U "$T/run/4243.pid")" root
	in_cgroup "$cg" setpriv --reuid=nobody --regid=nogroup --clear-groups \
		env SLURM_PROCID=3 "$WL/util" write - "$D"
	"$ROOT/scripts/cluster/slurm-epilog"
	! kill -0 "$pid" 2>/dev/null
	expect_eq "the job's directory" "$(stat -c '%U %a' "$T/jobs/4243")" "nobody 700"
	f=$(ls "$T"/jobs/4243/"$HOSTTAG"-r3-util-*.pfw.gz)
	expect_eq "its file" "$(stat -c '%U %a' "$f")" "nobody 600"
	[ ! -e "$T/jobs/4243/.dftrace-bpf.pid" ]
	TRACE="$f" valid
	TRACE="$f" check_truth --under "$D"
	# a link planted where the job's directory goes is refused
	ln -s /etc "$T/jobs/4244"
	SLURM_JOB_ID=4244 run "$ROOT/scripts/cluster/slurm-prolog"
	[ "$status" = 1 ]
	[ "$output" = "dftrace-bpf prolog: '$T/jobs/4244' is a symbolic link" ]
}

@test "scope: a second -a tracer does not trace a tracer already running, nor does the first trace it" {
	mkdir -p "$D/x"
	agent "$T/one.pfw" -a
	first=$DFT_PID
	agent "$T/two.pfw" -a
	second=$DFT_PID
	# both write what they see; each writes its file at least once more
	# while the other runs
	"$WL/io" basic "$D/x" >>"$TRUTH"
	for f in one two; do
		size=$(stat -c %s "$T/$f.pfw")
		for ((i = 0; i < 600; i++)); do
			[ "$(stat -c %s "$T/$f.pfw")" -gt "$size" ] && break
			sleep 0.1
		done
	done
	stop_agent
	DFT_PID=$first stop_agent
	TRACE="$T/two.pfw" check_truth --under "$D/x"
	run tpy events "$T/two.pfw" --pid "$first"
	expect_eq "the first tracer's events in the second's trace" "$(grep -c . <<<"$output")" 0
	# the first sees the shell that became the second, up to its exec,
	# and nothing after: the exec takes the tracer out of its trace
	run tpy events "$T/one.pfw" --pid "$second" --fields ts,name
	expect_eq "the second tracer's events after its exec in the first's trace" \
		"$(sort -n <<<"$output" | awk -F'\t' 'e { n++ } $2 == "exec" { e = 1 } END { print n + 0 }')" 0
}

@test "scope: a --cgroup directory removed and made anew under its name: said when it goes, followed when it comes back" {
	new_cgroup cg
	mkdir -p "$D/before" "$D/after"
	agent "$T/t.pfw" --cgroup "$cg"
	in_cgroup "$cg" "$WL/util" write - "$D/before"
	rmdir "$cg"
	wait_line "$T/dft.err" "dftrace-bpf: the cgroup '$cg' is gone; traced again if made anew"
	mkdir "$cg"
	wait_line "$T/dft.err" "dftrace-bpf: the cgroup '$cg' was made anew: traced from now"
	in_cgroup "$cg" "$WL/io" basic "$D/after"
	stop_agent
	TRACE="$T/t.pfw" check_truth --under "$D"
	expect_eq "stderr lines" "$(wc -l <"$T/dft.err")" 2
}

@test "scope: --cgroup through the hierarchy mounted inside itself (as at /sys/fs/cgroup and /sys/fs/cgroup/unified): its depth from the mounts, its processes traced" {
	local inner cg name
	new_cgroup inner
	new_cgroup cg
	name=${cg##*/}
	mount -t cgroup2 none "$inner" || skip "cannot mount cgroup2 at '$inner'"
	MOUNTS+=("$inner")
	# $inner shows the hierarchy's root: $inner/$name is $cg, one level down
	[ -d "$inner/$name" ]
	start_bg NOISE "$WL/util" noise "$T/noise.dat"
	wait_file "$WL_CTL/noise_ready"
	echo "$NOISE" >"$cg/cgroup.procs"
	dft -q -o "$TRACE" --cgroup "$inner/$name" -d 1
	expect_eq "tracer" "$DFT_STATUS" 0
	[ "$(tpy count "$TRACE" --pid "$NOISE" --name pwrite)" -gt 0 ]
}
