#!/usr/bin/env bash
# Builds, runs, minimises and measures pmwal's libFuzzer targets
# (tests/fuzz/, docs/fuzzing.md). Works from any directory.
#   fuzz.sh build              clang build in build/fuzz: fuzz_recovery, fuzz_sb, fuzz_faults
#   fuzz.sh seeds              rewrite the seed inputs of tests/fuzz/corpus_{raw,sb,faults}
#   fuzz.sh run [SECONDS]      each target in turn, SECONDS each (default 60), on a copy
#                              of its corpus in build/fuzz/work/<target>; crash inputs go
#                              to build/fuzz/artifacts; exits 1 if a run found any
#   fuzz.sh merge [--grow]     minimise corpus + work dir (-merge=1) into a fresh dir;
#                              replace tests/fuzz/corpus_<name> when the result is not
#                              larger (--grow: when all three stay under
#                              PMWAL_FUZZ_CORPUS_MAX bytes, default 3 MiB)
#   fuzz.sh coverage [SECONDS] source coverage (build/fuzz-cov) of wal/recovery.c and
#                              wal/format.c reached by replaying the committed corpora,
#                              after SECONDS (default 0) of fuzzing each on a copy
# Environment: CC (default clang), JOBS (build jobs, default 2).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
fuzz_dir=$root/build/fuzz
cov_dir=$root/build/fuzz-cov
cc=${CC:-clang}
jobs=${JOBS:-2}
targets=(recovery sb faults)
corpus_max=${PMWAL_FUZZ_CORPUS_MAX:-$((3 * 1024 * 1024))}

die() {
	echo "fuzz.sh: $*" >&2
	exit 2
}

corpus_of() { # target -> its committed corpus
	case $1 in
	recovery) echo "$root/tests/fuzz/corpus_raw" ;;
	*) echo "$root/tests/fuzz/corpus_$1" ;;
	esac
}

# Installs Debian packages when root, else says what to run (as deps.sh does).
install_pkgs() { # why pkg...
	local why=$1
	shift
	if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
		die "$why; install with: sudo apt-get install $*"
	fi
	echo "fuzz.sh: $why; installing $*" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

clang_major() {
	"$cc" -dumpversion | cut -d. -f1
}

# clang, its libFuzzer runtime, cmake; the rest of the build's libraries come
# from scripts/deps.sh test.
need_clang() {
	command -v cmake >/dev/null || install_pkgs "cmake not found" cmake
	if ! command -v "$cc" >/dev/null; then
		[ "$cc" = clang ] || die "compiler $cc (from CC) not found"
		install_pkgs "clang not found" clang
	fi
	"$cc" --version | head -1 | grep -q clang || die "$cc is not clang (libFuzzer needs clang; unset CC)"
	local rt
	rt=$("$cc" -print-runtime-dir 2>/dev/null || true)
	if ! ls "$rt"/libclang_rt.fuzzer*.a >/dev/null 2>&1 &&
		! "$cc" -print-file-name=libclang_rt.fuzzer-x86_64.a | grep -q /; then
		install_pkgs "libFuzzer runtime not found in ${rt:-the runtime dir of $cc}" \
			"libclang-rt-$(clang_major)-dev"
	fi
}

# llvm-profdata and llvm-cov of the compiler's own version (raw profiles are
# versioned: mixing releases fails to read them).
profdata=
llvmcov=
need_llvm_tools() {
	local v
	v=$(clang_major)
	if ! command -v "llvm-profdata-$v" >/dev/null || ! command -v "llvm-cov-$v" >/dev/null; then
		install_pkgs "llvm-profdata-$v or llvm-cov-$v not found" "llvm-$v"
	fi
	profdata=llvm-profdata-$v
	llvmcov=llvm-cov-$v
}

need_built() { # build dir
	for t in "${targets[@]}"; do
		[ -x "$1/tests/fuzz_$t" ] || die "$1/tests/fuzz_$t missing; run: scripts/fuzz.sh build"
	done
}

configure() { # build dir, extra cmake args...
	local dir=$1
	shift
	if ! cmake -S "$root" -B "$dir" -DCMAKE_C_COMPILER="$cc" -DPMWAL_FUZZ=ON -DPMWAL_TESTS=ON \
		-DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >"$dir.configure.log" 2>&1; then
		tail -20 "$dir.configure.log" >&2
		die "cmake configure of $dir failed (log: $dir.configure.log); missing libraries: bash scripts/deps.sh test"
	fi
	cmake --build "$dir" -j "$jobs" --target fuzz_recovery fuzz_sb fuzz_faults fuzz_seeds
}

cmd_build() {
	need_clang
	mkdir -p "$root/build"
	# UBSan findings stop the fuzzer like ASan's, instead of scrolling past.
	configure "$fuzz_dir" -DCMAKE_C_FLAGS="-fno-sanitize-recover=undefined"
	need_built "$fuzz_dir"
	echo "fuzz.sh: built fuzz_recovery, fuzz_sb, fuzz_faults in $fuzz_dir/tests"
}

cmd_seeds() {
	[ -x "$fuzz_dir/tests/fuzz_seeds" ] || die "$fuzz_dir/tests/fuzz_seeds missing; run: scripts/fuzz.sh build"
	"$fuzz_dir/tests/fuzz_seeds" "$root/tests/fuzz"
	for t in "${targets[@]}"; do
		echo "$(corpus_of "$t"): $(find "$(corpus_of "$t")" -type f | wc -l) files"
	done
}

# From the last status line libFuzzer printed ("#N: cov: C ft: F corp: ..."):
# the executions so far, or the number after "name: ".
last_stat() { # log, name (or "execs")
	local line
	line=$(grep -E '^#[0-9]+' "$1" | tail -1 || true)
	if [ "$2" = execs ]; then
		sed -nE 's/^#([0-9]+).*/\1/p' <<<"$line"
	else
		sed -nE "s/.* $2: ([0-9]+).*/\1/p" <<<"$line"
	fi
}

# What an input breaks, as one line: the check's message or the sanitizer's,
# with positions and counts blanked so that one bug reads as one line.
signature() { # binary, input
	local out
	out=$("$1" "$2" 2>&1 || true)
	grep -m1 -E 'fuzz_check:|fuzz_log:|ERROR: AddressSanitizer|runtime error|ERROR: libFuzzer: (timeout|out-of-memory)' \
		<<<"$out" | sed -E 's/^==[0-9]+==//; s/0x[0-9a-f]+/ADDR/g; s/[0-9]+ records/N records/g;
		s/(LSN|lsn|seq|at|after|above|says|end_seq|record) [0-9]+/\1 N/g; s/pc ADDR.*//' ||
		echo "(no message; rerun: $1 $2)"
}

cmd_run() {
	local secs=${1:-60} status=0
	[[ $secs =~ ^[0-9]+$ ]] || die "run: SECONDS must be a whole number, not '$secs'"
	need_built "$fuzz_dir"
	mkdir -p "$fuzz_dir/artifacts" "$fuzz_dir/work" "$fuzz_dir/logs"
	local table=()
	for t in "${targets[@]}"; do
		local bin=$fuzz_dir/tests/fuzz_$t work=$fuzz_dir/work/$t log=$fuzz_dir/logs/$t.log
		local stamp=$fuzz_dir/logs/$t.start files0 files1 t0 wall execs
		rm -rf "$work"
		cp -r "$(corpus_of "$t")" "$work"
		files0=$(find "$work" -type f | wc -l)
		touch "$stamp"
		echo "fuzz_$t: ${secs}s on $work (log: $log)"
		t0=$SECONDS
		# -fork=1: one worker process at a time (one core), restarted after a
		# crash so that a known finding does not end the run; each crash input
		# is kept under artifacts/. Timeouts and OOMs are kept there too.
		(cd "$fuzz_dir" && "$bin" "$work" -fork=1 -ignore_crashes=1 -ignore_timeouts=1 \
			-ignore_ooms=1 -max_total_time="$secs" -timeout=20 -rss_limit_mb=4096 \
			-artifact_prefix="$fuzz_dir/artifacts/$t-") >"$log" 2>&1 || true
		wall=$((SECONDS - t0))
		files1=$(find "$work" -type f | wc -l)
		execs=$(last_stat "$log" execs)
		local found=()
		mapfile -t found < <(find "$fuzz_dir/artifacts" -name "$t-*" -newer "$stamp" \
			! -name "$t-slow-unit-*" -type f | sort)
		table+=("$(printf '%-9s %10s %8s %6s %7s %6s %8s %6s' "$t" "${execs:-?}" \
			"$(( ${execs:-0} / (wall > 0 ? wall : 1) ))" "$(last_stat "$log" cov)" \
			"$(last_stat "$log" ft)" "$((files1 - files0))" "${#found[@]}" "$wall")")
		if [ ${#found[@]} -gt 0 ]; then
			status=1
			echo "  ${#found[@]} crash inputs, by what they break:"
			for f in "${found[@]}"; do
				echo "$(signature "$bin" "$f")	$f"
			done | sort | awk -F'\t' '{n[$1]++; if (!($1 in ex)) ex[$1] = $2}
				END {for (s in n) printf "  %4d x %s\n         e.g. %s\n", n[s], s, ex[s]}'
			for k in "$root"/tests/fuzz/findings/"$(basename "$(corpus_of "$t")" | sed 's/^corpus_//')"_*; do
				[ -f "$k" ] && echo "  known: $(signature "$bin" "$k")	(tests/fuzz/findings/$(basename "$k"))"
			done
		fi
	done
	printf '%-9s %10s %8s %6s %7s %6s %8s %6s\n' target execs exec/s cov ft new crashes secs
	printf '%s\n' "${table[@]}"
	echo "execs, cov, ft: libFuzzer's last status line; exec/s: execs over wall seconds;"
	echo "new: inputs added to build/fuzz/work/<target> (fold in with: scripts/fuzz.sh merge)"
	if [ $status -ne 0 ]; then
		echo "fuzz.sh: crash inputs in $fuzz_dir/artifacts; replay one: $fuzz_dir/tests/fuzz_<target> FILE" >&2
	fi
	return $status
}

bytes_of() { # dir -> total bytes of its files
	find "$1" -type f -printf '%s\n' | awk '{s += $1} END {print s + 0}'
}

cmd_merge() {
	local grow=0
	[ "${1:-}" = --grow ] && grow=1
	[ $# -le $grow ] || die "usage: fuzz.sh merge [--grow]"
	need_built "$fuzz_dir"
	mkdir -p "$fuzz_dir/merge"
	for t in "${targets[@]}"; do
		local corpus fresh inputs=() old new total
		corpus=$(corpus_of "$t")
		fresh=$fuzz_dir/merge/$t
		rm -rf "$fresh"
		mkdir -p "$fresh"
		inputs=("$corpus")
		[ -d "$fuzz_dir/work/$t" ] && inputs+=("$fuzz_dir/work/$t")
		"$fuzz_dir/tests/fuzz_$t" -merge=1 -timeout=20 -rss_limit_mb=4096 "$fresh" "${inputs[@]}" \
			>"$fuzz_dir/merge/$t.log" 2>&1 ||
			die "merge of $t failed (log: $fuzz_dir/merge/$t.log)"
		old=$(bytes_of "$corpus")
		new=$(bytes_of "$fresh")
		total=0
		for o in "${targets[@]}"; do
			[ "$o" = "$t" ] || total=$((total + $(bytes_of "$(corpus_of "$o")")))
		done
		total=$((total + new))
		local what
		what="$(basename "$corpus"): $(find "$corpus" -type f | wc -l) files $old bytes -> $(find "$fresh" -type f | wc -l) files $new bytes"
		if [ "$new" -le "$old" ] || { [ $grow -eq 1 ] && [ "$total" -le "$corpus_max" ]; }; then
			find "$corpus" -type f -delete
			cp "$fresh"/* "$corpus"/
			echo "$what: replaced"
		else
			echo "$what: kept the committed corpus (merged one is larger$([ $grow -eq 1 ] && echo ", all three would be $total > $corpus_max bytes"); it is in $fresh)"
		fi
	done
}

cmd_coverage() {
	local secs=${1:-0}
	[[ $secs =~ ^[0-9]+$ ]] || die "coverage: SECONDS must be a whole number, not '$secs'"
	need_clang
	need_llvm_tools
	mkdir -p "$root/build"
	local flags="-fprofile-instr-generate -fcoverage-mapping"
	configure "$cov_dir" -DCMAKE_C_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags"
	need_built "$cov_dir"
	rm -rf "$cov_dir/profiles" "$cov_dir/work"
	mkdir -p "$cov_dir/profiles" "$cov_dir/work"
	local objects=()
	for t in "${targets[@]}"; do
		local bin=$cov_dir/tests/fuzz_$t work=$cov_dir/work/$t
		cp -r "$(corpus_of "$t")" "$work"
		if [ "$secs" -gt 0 ]; then
			LLVM_PROFILE_FILE=/dev/null "$bin" "$work" -max_total_time="$secs" -timeout=20 \
				-rss_limit_mb=4096 -artifact_prefix="$cov_dir/work/$t-" >"$cov_dir/work/$t.fuzz.log" 2>&1 || true
		fi
		# -runs=0: run every input of the corpus once, then exit (writing the profile).
		LLVM_PROFILE_FILE="$cov_dir/profiles/$t-%p.profraw" "$bin" "$work" -runs=0 \
			-rss_limit_mb=4096 >"$cov_dir/work/$t.replay.log" 2>&1 ||
			die "replay of $t failed (log: $cov_dir/work/$t.replay.log)"
		echo "fuzz_$t: replayed $(find "$work" -type f | wc -l) inputs"
		objects+=(-object "$bin")
	done
	"$profdata" merge -sparse "$cov_dir"/profiles/*.profraw -o "$cov_dir/fuzz.profdata"
	# The first binary is the positional one; the others are -object.
	"$llvmcov" report "${objects[@]:1}" -instr-profile="$cov_dir/fuzz.profdata" \
		"$root/wal/recovery.c" "$root/wal/format.c" >"$cov_dir/report.txt"
	cat "$cov_dir/report.txt"
	# Columns: file, regions, missed, cover, functions, missed, executed, lines, missed, cover.
	awk '$1 ~ /\.c$/ {
		n = split($1, p, "/")
		printf "%s: lines %s (%d/%d), regions %s (%d/%d)\n", p[n], $10, $8 - $9, $8, $4, $2 - $3, $2
	}' "$cov_dir/report.txt"
}

case "${1:-}" in
build) cmd_build ;;
seeds) cmd_seeds ;;
run) shift; cmd_run "$@" ;;
merge) shift; cmd_merge "$@" ;;
coverage) shift; cmd_coverage "$@" ;;
*)
	sed -n '2,16p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
	exit 2
	;;
esac
