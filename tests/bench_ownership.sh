#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench_ownership.sh - pmwal bench never destroys, grows, marks or deletes a
# file it did not create (bench/README.md, "Scratch files and --force"): a
# user's file under a default scratch name survives a run; a symlink at a
# scratch name is never followed; fakepmr: and pmem: files of the user's are
# refused for writes like plain ones; a read reads a user's file as it is;
# a forged marker is not trusted where xattrs work; a FIFO is refused, not
# waited on; I/O buffers are capped; a fake PMR the user names passes every
# phase of bench compare; a refused run leaves nothing it created behind.
# About 30 s on two cores.
# usage: bench_ownership.sh PATH/TO/pmwal
set -u
. "$(cd "$(dirname "$0")" && pwd)/support/bench_lib.sh"
pmwal=${1:?usage: bench_ownership.sh PATH/TO/pmwal}
pmwal=$(cd "$(dirname "$pmwal")" && pwd)/$(basename "$pmwal")
command -v python3 >/dev/null || { echo "SKIP: python3 not installed (scripts/deps.sh test)"; exit 77; }
command -v mkfifo >/dev/null || { echo "SKIP: mkfifo not installed"; exit 77; }
# A disk directory (O_DIRECT) and a tmpfs one (pmem:, fakepmr:).
work=$(mktemp -d /var/tmp/pmwal-own.XXXXXX)
shm=$(mktemp -d /dev/shm/pmwal-own.XXXXXX)
trap 'rm -rf "$work" "$shm"' EXIT
cd "$work" || exit 1

sum() { md5sum <"$1" 2>/dev/null | cut -d' ' -f1; }
unchanged() { # unchanged FILE SUM WHAT
	[ -f "$1" ] || { fail "$3: $1 is gone"; return; }
	[ "$(sum "$1")" = "$2" ] || fail "$3: $1 changed"
}
marked() { # marked FILE: bench's xattr is on FILE itself (not through a link)
	python3 -c 'import os,sys; os.getxattr(sys.argv[1], "user.pmwal.bench", follow_symlinks=False)' "$1" 2>/dev/null
}
quick=(--runtime 100ms --ramp 0 --quiet)

step "1. a user's file under a default scratch name survives a read run"
mkdir -p "$work/u"
head -c 4M /dev/urandom >"$work/u/pmwal-bench.dat"
s=$(sum "$work/u/pmwal-bench.dat")
expect 0 "read of a user's pmwal-bench.dat" -- "$pmwal" bench io "$work/u/pmwal-bench.dat" \
	--rw randread --direct 0 "${quick[@]}"
unchanged "$work/u/pmwal-bench.dat" "$s" "read run"
head -c 4M /dev/urandom >"$shm/pmwal-bench-pmr.wal"
s2=$(sum "$shm/pmwal-bench-pmr.wal")
expect 0 "read of a user's fakepmr pmwal-bench-pmr.wal" -- "$pmwal" bench io \
	"fakepmr:$shm/pmwal-bench-pmr.wal" --rw randread "${quick[@]}"
unchanged "$shm/pmwal-bench-pmr.wal" "$s2" "fakepmr read run"
# ... and a default-named file bench itself creates is deleted at the end
mkdir -p "$work/n"
expect 0 "write to a new default name" -- "$pmwal" bench io "$work/n/pmwal-bench.dat" \
	--rw write --size 4m --direct 0 "${quick[@]}"
[ -e "$work/n/pmwal-bench.dat" ] && fail "bench left its own pmwal-bench.dat behind"

step "2. a symlink at a scratch name: never followed, never marked"
head -c 16M /dev/urandom >"$shm/precious"
ln -s precious "$shm/pmwal-bench.dat"
s=$(sum "$shm/precious")
expect 2 "pmem write through a symlink" -- "$pmwal" bench io "pmem:$shm/pmwal-bench.dat" \
	--rw write "${quick[@]}"
said "did not create" "--force"
expect 0 "pmem read through a symlink" -- "$pmwal" bench io "pmem:$shm/pmwal-bench.dat" \
	--rw randread "${quick[@]}"
marked "$shm/precious" && fail "a read through a symlink marked the user's file as bench's"
expect 2 "pmem write after the read" -- "$pmwal" bench io "pmem:$shm/pmwal-bench.dat" \
	--rw write "${quick[@]}"
unchanged "$shm/precious" "$s" "symlinked pmem"
[ -L "$shm/pmwal-bench.dat" ] || fail "the user's symlink was removed"
head -c 4M /dev/urandom >"$work/precious"
ln -s precious "$work/link.dat"
s=$(sum "$work/precious")
expect 2 "file write through a symlink" -- "$pmwal" bench io "$work/link.dat" --rw write \
	--direct 0 "${quick[@]}"
unchanged "$work/precious" "$s" "symlinked file"
ln -s "$work/nowhere" "$work/dangling.dat"
expect 2 "a dangling symlink" -- "$pmwal" bench io "$work/dangling.dat" --rw write --size 4m \
	--direct 0 "${quick[@]}"
[ -e "$work/nowhere" ] && fail "bench created the target of a dangling symlink"

step "3. fakepmr: and pmem: files of the user's are refused for writes"
head -c 16M /dev/urandom >"$shm/user.bin"
s=$(sum "$shm/user.bin")
expect 2 "fakepmr write to a user's file" -- "$pmwal" bench io "fakepmr:$shm/user.bin" \
	--rw write "${quick[@]}"
said "did not create" "--force"
expect 2 "pmem write to a user's file" -- "$pmwal" bench io "pmem:$shm/user.bin" \
	--rw randwrite "${quick[@]}"
unchanged "$shm/user.bin" "$s" "fakepmr/pmem write"
expect 0 "fakepmr write with --force" -- "$pmwal" bench io "fakepmr:$shm/user.bin" \
	--rw write --force "${quick[@]}"
# a fakepmr file bench creates is its own: marked, reused without --force
expect 0 "fakepmr new file" -- "$pmwal" bench io "fakepmr:$shm/new.pmr" --rw write \
	--size 4m "${quick[@]}"
marked "$shm/new.pmr" || fail "the fakepmr file bench created is not marked"
[ "$(stat -c %s "$shm/new.pmr" 2>/dev/null)" = 4194304 ] || fail "fakepmr file is not --size 4m"
expect 0 "fakepmr second run" -- "$pmwal" bench io "fakepmr:$shm/new.pmr" --rw write "${quick[@]}"

step "5. a read run reads a user's file as it is"
printf 'my notes\n' >"$work/notes.txt"
s=$(sum "$work/notes.txt")
expect 2 "read --size beyond a user's file" -- "$pmwal" bench io "$work/notes.txt" --rw randread \
	--size 4m --direct 0 "${quick[@]}"
said "smaller\|or less" "--force"
unchanged "$work/notes.txt" "$s" "read run --size 4m"
: >"$work/empty.txt"
expect 2 "read of an empty user's file" -- "$pmwal" bench io "$work/empty.txt" --rw randread \
	--direct 0 "${quick[@]}"
[ -s "$work/empty.txt" ] && fail "a read run filled a user's empty file"
head -c 1M /dev/urandom >"$work/data.bin"
s=$(sum "$work/data.bin")
expect 0 "read of a user's 1 MiB file" -- "$pmwal" bench io "$work/data.bin" --rw randread \
	--direct 0 "${quick[@]}"
unchanged "$work/data.bin" "$s" "read run"
head -c 1M /dev/urandom >"$shm/small.pmem"
s=$(sum "$shm/small.pmem")
expect 2 "pmem read --size beyond a user's file" -- "$pmwal" bench io "pmem:$shm/small.pmem" \
	--rw randread --size 4m "${quick[@]}"
unchanged "$shm/small.pmem" "$s" "pmem read run --size 4m"

step "1b. bench log and recovery refuse a user's file with data"
head -c 4M /dev/urandom >"$work/userlog.dat"
s=$(sum "$work/userlog.dat")
expect 2 "bench log on a user's file" -- "$pmwal" bench log "$work/userlog.dat" --no-primitives \
	"${quick[@]}"
said "did not create" "--force"
expect 2 "bench recovery on a user's file" -- "$pmwal" bench recovery "$work/userlog.dat" \
	--size 4m --quiet
unchanged "$work/userlog.dat" "$s" "bench log/recovery"
expect 0 "bench log on a new file, twice" -- "$pmwal" bench log "$work/newlog.dat" \
	--no-primitives "${quick[@]}"
expect 0 "bench log on a new file, twice" -- "$pmwal" bench log "$work/newlog.dat" \
	--no-primitives "${quick[@]}"

step "7. a forged marker is not trusted where xattrs work"
head -c 4M /dev/urandom >"$shm/forged.dat"
s=$(sum "$shm/forged.dat")
printf 'pmwal bench scratch file dev=%s ino=%s\n' "$(stat -c %d "$shm/forged.dat")" \
	"$(stat -c %i "$shm/forged.dat")" >"$shm/forged.dat.pmwal-bench"
expect 2 "write to a file with a forged marker" -- "$pmwal" bench io "$shm/forged.dat" \
	--rw write --direct 0 "${quick[@]}"
said "did not create"
unchanged "$shm/forged.dat" "$s" "forged marker"

step "8. a FIFO is refused by name, not waited on"
mkfifo "$work/fifo"
expect 2 "FIFO target" -- "$pmwal" bench io "$work/fifo" --rw read --size 4m "${quick[@]}"
said "FIFO"
printf '[j]\nfilename=%s\nrw=read\nsize=4m\nruntime=100ms\n' "$work/fifo" >"$work/fifo.fio"
expect 2 "FIFO in a job file" -- "$pmwal" bench io --job "$work/fifo.fio" --quiet
said "FIFO"
expect 2 "FIFO as fakepmr" -- "$pmwal" bench io "fakepmr:$work/fifo" --rw read "${quick[@]}"
expect 2 "a directory" -- "$pmwal" bench io "$work" --rw read "${quick[@]}"
said "directory"

step "9. I/O buffers are capped before anything is allocated"
expect 2 "bs=64m iodepth=4096" -- "$pmwal" bench io "$work/big.dat" --bs 64m --iodepth 4096 \
	--size 64m "${quick[@]}"
said "--bs" "--iodepth" "--numjobs"
[ -e "$work/big.dat" ] && fail "a refused run left big.dat behind"

step "10. bench compare with a fake PMR the user names: every phase runs"
expect 0 "compare file/pmem/fakepmr" -- "$pmwal" bench compare "$work/cmp.dat" \
	"pmem:$shm/cmp.dat" "fakepmr:$shm/cmpp.dat" --runtime 100ms --ramp 0 --size 16m \
	--prim-time 20ms --direct 0 --json "$work/cmp.json"
[ "$(grep -c 'log rec=4k thr=8' "$work/out.txt")" -ge 4 ] || fail "compare lacks log thr=8 rows"
[ "$(grep -c '^recovery' "$work/out.txt")" -ge 3 ] || fail "compare lacks recovery rows"
marked "$shm/cmpp.dat" || fail "the fakepmr file compare created is not marked"
# a second run reuses what the first created
expect 0 "compare again" -- "$pmwal" bench compare "$work/cmp.dat" "fakepmr:$shm/cmpp.dat" \
	--runtime 100ms --ramp 0 --size 16m --prim-time 20ms --direct 0

step "a refused run leaves nothing it created behind"
expect 2 "--until-full beyond free space" -- "$pmwal" bench io "$work/full.dat" --rw write \
	--until-full --size 100t --direct 0 --quiet
[ -e "$work/full.dat" ] && fail "a refused --until-full left full.dat behind"
[ -e "$work/full.dat.pmwal-bench" ] && fail "a refused run left a marker behind"

finish bench_ownership
