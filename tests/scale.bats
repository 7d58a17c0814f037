#!/usr/bin/env bats
# merge, summary and report at a job's scale: 2,048 rank files of 256
# hosts that a generator writes with known content
# (tests/workloads/ranktraces.c, checked by tests/lib/scale.py). How
# fast each core makes them is `make bench`'s (scripts/bench: scale).

load lib/common

SCALE="$ROOT/tests/lib/scale.py"
# peak memory of a command over 2,048 files, whatever their events
BUDGET_KB=$((256 * 1024))

# ranks N EVENTS SKEW_US [PER_HOST]: N rank files of EVENTS events,
# PER_HOST (8) ranks a host, host H's clock H * SKEW_US ahead, in
# $T/ranks; the truth in $T/truth
ranks() {
	rm -rf "$T/ranks" && mkdir -p "$T/ranks"
	"$WL/ranktraces" "$T/ranks" "$1" "$2" "${4:-8}" "$3" >"$T/truth"
}

# peak NAME CMD...: CMD run, its peak resident memory in $T/NAME.kb
peak() {
	local name=$1
	shift
	/usr/bin/time -f %M -o "$T/$name.kb" "$@"
}

@test "scale: 2,048 rank files of 256 hosts: merge holds every event once, in time order, each rank's bytes exact, each host's clock recovered to the ns; memory within budget" {
	ranks 2048 400 1000
	peak merge "$DFT" merge -q -o "$T/all.json" "$T/ranks"
	run "$PY" "$SCALE" merged "$T/all.json" "$T/truth" 1000
	echo "# $output"
	[ "$status" = 0 ]
	echo "# merge's peak: $(cat "$T/merge.kb") KB"
	(($(cat "$T/merge.kb") < BUDGET_KB))
}

@test "scale: summary and report of 2,048 rank files read on 1 and 2 cores say the same, each rank's calls and bytes exact; memory within budget" {
	ranks 2048 400 0
	peak one "$DFT" summary -q -j 1 --json --by rank "$T/ranks" >"$T/one.json"
	peak two "$DFT" summary -q -j 2 --json --by rank "$T/ranks" >"$T/two.json"
	run "$PY" "$SCALE" rows "$T/one.json" "$T/truth"
	echo "# $output"
	[ "$status" = 0 ]
	cmp "$T/one.json" "$T/two.json"
	"$DFT" summary -q -j 1 --by rank,step "$T/ranks" >"$T/one.txt"
	"$DFT" summary -q -j 2 --by rank,step "$T/ranks" >"$T/two.txt"
	cmp "$T/one.txt" "$T/two.txt"
	"$DFT" report -q -j 1 -o "$T/one.html" "$T/ranks"
	"$DFT" report -q -j 2 -o "$T/two.html" "$T/ranks"
	# but the minute each was made in ("made 2026-11-29 18:13 UTC by"):
	# the two can fall on either side of a minute's turn
	cmp <(sed 's/ · made [0-9: -]* UTC by / · made by /' "$T/one.html") \
		<(sed 's/ · made [0-9: -]* UTC by / · made by /' "$T/two.html")
	grep -q ' · made 20[0-9-]* [0-9:]* UTC by dftrace-bpf' "$T/one.html"
	echo "# summary's peak: $(cat "$T/one.kb") KB on 1 core, $(cat "$T/two.kb") KB on 2"
	(($(cat "$T/one.kb") < BUDGET_KB && $(cat "$T/two.kb") < BUDGET_KB))
}

@test "scale: merge's spools merged and its output written in threads of their own give the output one core gives; a temporary directory or an output's disk that fills is named, in one line, and nothing is written" {
	# 160 files: 40 rounds of 4, whose first 32 spools are merged into
	# one while the rounds go on (on one core: between them)
	ranks 160 400 1000
	"$DFT" merge -q -j 1 -o "$T/one.json" "$T/ranks"
	"$DFT" merge -q -j 2 -o "$T/two.json" "$T/ranks"
	cmp "$T/one.json" "$T/two.json"
	# the spools need some 15 MB here, the first 32 some 12: full in a
	# round's spool at 1 MB, in the merge of the first 32 at 16 MB
	mkdir "$T/small"
	mount -t tmpfs -o size=1M tmpfs "$T/small"
	MOUNTS+=("$T/small")
	for size in 1M 16M; do
		mount -o remount,size=$size "$T/small"
		for j in 1 2; do
			TMPDIR=$T/small run "$DFT" merge -q -j $j -o "$T/m.json" "$T/ranks"
			echo "# $size, -j $j: $output"
			[ "$status" = 1 ]
			[ "$output" = "dftrace-bpf merge: cannot write a temporary file in '$T/small': No space left on device" ]
			[ ! -e "$T/m.json" ]
			expect_eq "spools left" "$(find "$T/small" -mindepth 1 | wc -l)" 0
		done
	done
	# the output's disk: 512 KB, where the output takes some 0.9 MB
	# gzipped (its writer thread meets the full disk)
	mount -o remount,size=512k "$T/small"
	for out in m.json.gz m.json; do
		for j in 1 2; do
			run "$DFT" merge -q -j $j -o "$T/small/$out" "$T/ranks"
			echo "# $out, -j $j: $output"
			[ "$status" = 1 ]
			[ "$output" = "dftrace-bpf merge: cannot write '$T/small/$out': No space left on device" ]
			expect_eq "left" "$(find "$T/small" -mindepth 1 | wc -l)" 0
		done
	done
}

# Several hosts' files are read once to line them up; one host's are not.
@test "scale: a file that breaks among 64 is named, on any number of cores, and nothing is written" {
	for per_host in 8 64; do
		ranks 64 80 0 "$per_host"
		printf '[\n{"name":"pread","ph":"X","pid":1,"tid":1,"ts":' |
			gzip >"$T/ranks/rank-00031.pfw.gz"
		for j in 1 2 4; do
			for cmd in summary "report -o $T/r.html"; do
				# shellcheck disable=SC2086 # the command and its -o
				run "$DFT" $cmd -q -j "$j" --strict "$T/ranks"
				cmd=${cmd%% *}
				echo "# $cmd -j $j, $per_host ranks a host: $output"
				[ "$status" = 1 ]
				[ "$output" = "dftrace-bpf $cmd: '$T/ranks/rank-00031.pfw.gz':1: the file ends inside an event (truncated?)" ]
			done
		done
		[ ! -e "$T/r.html" ]
		run "$DFT" merge -q -j 2 --strict -o "$T/m.json" "$T/ranks"
		[ "$status" = 1 ]
		[[ "$output" == *"rank-00031.pfw.gz"* ]]
		[ ! -e "$T/m.json" ]
	done
}

@test "scale: --jobs takes 1 to 64 cores; anything else is refused in one line" {
	ranks 2 16 0
	for bad in 0 65 x 2x ""; do
		run "$DFT" summary -q -j "$bad" "$T/ranks"
		[ "$status" = 64 ]
		[[ "$output" == *"bad --jobs '$bad'"* ]]
	done
	run "$DFT" summary -q -j 64 --json --by rank "$T/ranks"
	[ "$status" = 0 ]
}

# The line comes half a second in: 4 million events take some seconds
# here (1 to 2 million a second), and more than a second on a machine
# some times faster.
@test "scale: on a terminal, summary and merge show the files done, the events and their rate" {
	ranks 256 16000 0
	script -qec "'$DFT' summary -j 2 '$T/ranks' >/dev/null" /dev/null >"$T/tty"
	grep -aqE 'dftrace-bpf: [0-9]+ of 256 files, [0-9]+ events, [0-9.]+ M events/s' "$T/tty"
	script -qec "'$DFT' merge -o '$T/m.json.gz' '$T/ranks'" /dev/null >"$T/tty"
	grep -aqE 'dftrace-bpf merge: [0-9]+ of 256 files, [0-9]+ of [0-9]+ events \([0-9]+%\), [0-9.]+ M events/s' "$T/tty"
}
