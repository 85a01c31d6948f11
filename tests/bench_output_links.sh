#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench_output_links.sh - pmwal's tools, run as root, never write through a
# link or into a directory another user controls (bench/outfile.h): a real
# second user makes an output directory and plants symbolic links to a
# root-only file at every name pmwal report, pmwal bench (-o, --json, --csv,
# fio logs, its targets), pmwal crashtest (--dir) and pmwal create write;
# each command must fail, naming the path, the owner and what to do, and the
# root file must stay as it was. The same outputs in root's own directory, and in a
# sticky shared one, are written (and written again, replaced whole).
# About 10 s.
# usage: bench_output_links.sh PATH/TO/pmwal
set -u
. "$(cd "$(dirname "$0")" && pwd)/support/bench_lib.sh"
pmwal=${1:?usage: bench_output_links.sh PATH/TO/pmwal}
pmwal=$(cd "$(dirname "$pmwal")" && pwd)/$(basename "$pmwal")
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root to create a second user (useradd)"; exit 0; }
command -v useradd >/dev/null && command -v setpriv >/dev/null ||
	{ echo "SKIP: useradd or setpriv not installed"; exit 0; }
user=pmwal-t-files-$$
useradd -M -r -s /usr/sbin/nologin "$user" 2>/dev/null ||
	{ echo "SKIP: useradd $user failed"; exit 0; }
work=$(mktemp -d /var/tmp/pmwal-outlinks.XXXXXX)
shm=$(mktemp -d /dev/shm/pmwal-outlinks.XXXXXX)
them=/tmp/pmwal-outlinks-$user
dirlink=/tmp/pmwal-outlinks-dirlink-$$
trap 'rm -rf "$work" "$shm" "$them" /tmp/pmwal-outlinks-sticky-$$ "$dirlink"; userdel "$user" 2>/dev/null' EXIT
as_them() { setpriv --reuid="$user" --regid="$user" --clear-groups "$@"; }
cd "$work" || exit 1
export PMWAL_BENCH_SHM=$shm

# The root-only file every planted link points at.
mkdir -m 0700 "$work/secret"
echo "root's own data $$" >"$work/secret/file"
chmod 0600 "$work/secret/file"
sum() { md5sum <"$work/secret/file" | cut -d' ' -f1; }
before=$(sum)
intact() { # intact WHAT: the root file is as it was
	[ "$(sum)" = "$before" ] || { fail "$1: wrote through a link into root's file"; \
		echo "root's own data $$" >"$work/secret/file"; }
}
quick=(--rw randread --size 1m --runtime 100ms --ramp 0 --direct 0 --quiet
	--no-primitives)

step "a result to report on, in root's own directory"
expect 0 "a tiny bench io" -- "$pmwal" bench io "$work/t.dat" "${quick[@]}" --json "$work/r.json"
[ -s "$work/r.json" ] || { fail "no result to report on"; finish bench_output_links; }

step "the other user's directory, a link at every name pmwal writes"
as_them mkdir -m 0755 "$them" || { fail "the second user cannot make $them"; finish bench_output_links; }
for n in index.html result.json jobs.csv series.csv out.json log_bw.1.log log_iops.1.log \
	log_lat.1.log t.dat pmwal-bench.dat pmwal-bench.dat.pmwal-bench; do
	as_them ln -s "$work/secret/file" "$them/$n"
done
expect 2 "report -o THEIR_DIR" -- "$pmwal" report "$work/r.json" -o "$them"
said "$them" "belongs to user $user" "root owns"
intact "report -o"
expect 2 "bench -o THEIR_DIR" -- "$pmwal" bench io "$work/t.dat" "${quick[@]}" -o "$them"
said "$them" "belongs to user $user"
intact "bench -o"
expect 2 "bench --json THEIR_DIR/out.json" -- "$pmwal" bench io "$work/t.dat" "${quick[@]}" \
	--json "$them/out.json"
said "$them" "belongs to user $user"
intact "bench --json"
expect 2 "bench --csv THEIR_DIR" -- "$pmwal" bench io "$work/t.dat" "${quick[@]}" --csv "$them"
said "belongs to user $user"
intact "bench --csv"
expect 2 "bench --write_bw_log THEIR_DIR/log" -- "$pmwal" bench io "$work/t.dat" "${quick[@]}" \
	--write_bw_log "$them/log" --write_iops_log "$them/log" --write_lat_log "$them/log"
said "belongs to user $user"
intact "bench fio logs"
expect 2 "bench io on a target in THEIR_DIR" -- "$pmwal" bench io "$them/new.dat" --rw write \
	--size 1m --runtime 100ms --ramp 0 --direct 0 --quiet
said "belongs to user $user"
[ -e "$them/new.dat" ] && fail "bench created a target in the other user's directory"
intact "bench target"
expect 2 "bench's default pmem target in THEIR_DIR (PMWAL_BENCH_SHM)" -- env \
	PMWAL_BENCH_SHM="$them" "$pmwal" bench log pmem --runtime 100ms --ramp 0 --quiet \
	--no-primitives
said "belongs to user $user"
intact "bench default target"
expect 2 "crashtest --dir THEIR_DIR" -- "$pmwal" crashtest --mode kill --medium nvme --seed 1 \
	--count 1 --dir "$them"
said "$them" "belongs to user $user"
ls "$them" | grep -q crashtest && fail "crashtest wrote its log into the other user's directory"
intact "crashtest --dir"

step "a link in place of the output directory itself"
as_them ln -s "$work/secret" "$them/outdir"
expect 2 "report -o LINK" -- "$pmwal" report "$work/r.json" -o "$them/outdir"
[ -e "$work/secret/index.html" ] && fail "report wrote into the directory a link named"
rm -f "$work/secret/index.html"
ln -s "$work/secret" "$work/rootlink"
expect 2 "report -o a link (root's own)" -- "$pmwal" report "$work/r.json" -o "$work/rootlink"
said "symbolic link" "name the directory it points to"
[ -e "$work/secret/index.html" ] && fail "report wrote through the -o link"
intact "-o link"

step "a directory anyone can write, not sticky"
mkdir -m 0777 "$work/open" && chmod 0777 "$work/open"
expect 2 "report -o a 0777 directory" -- "$pmwal" report "$work/r.json" -o "$work/open"
said "$work/open" "writable by other users" "chmod go-w"

step "a sticky shared directory: links of the other user refused, our files written"
sticky=/tmp/pmwal-outlinks-sticky-$$
mkdir -m 1777 "$sticky" && chmod 1777 "$sticky"
as_them ln -s "$work/secret/file" "$sticky/index.html"
expect 2 "report -o STICKY with their link" -- "$pmwal" report "$work/r.json" -o "$sticky"
said "$sticky/index.html" "symbolic link"
intact "sticky report"
as_them ln -s "$work/secret/file" "$sticky/j.json"
expect 2 "bench --json STICKY/their link" -- "$pmwal" bench io "$work/t.dat" "${quick[@]}" \
	--json "$sticky/j.json"
said "symbolic link"
intact "sticky --json"
as_them sh -c "echo theirs >'$sticky/theirs.json'"
expect 2 "bench --json STICKY/their file" -- "$pmwal" bench io "$work/t.dat" "${quick[@]}" \
	--json "$sticky/theirs.json"
said "belongs to user $user"
grep -qx theirs "$sticky/theirs.json" || fail "their file in the sticky directory was written"
as_them ln -s "$work/secret/file" "$sticky/x.log"
expect 2 "pmwal create --force through their link" -- "$pmwal" create "$sticky/x.log" \
	--size 1M --buffered --force
said "$sticky/x.log" "symbolic link made by user $user"
intact "pmwal create"
step "their link to a directory of root's, on the path of an output"
mkdir -m 0700 "$work/rootdir"
as_them ln -s "$work/rootdir" "$dirlink" || fail "the second user cannot link in /tmp"
expect 2 "report -o THEIR_LINK/b" -- "$pmwal" report "$work/r.json" -o "$dirlink/b"
said "symbolic link on its path"
expect 2 "bench --json THEIR_LINK/j.json" -- "$pmwal" bench io "$work/t.dat" "${quick[@]}" \
	--json "$dirlink/j.json"
[ -z "$(ls -A "$work/rootdir")" ] || fail "a file was written through their directory link: $(ls "$work/rootdir")"
expect 2 "pmwal create in THEIR_DIR" -- "$pmwal" create "$them/new.log" --size 1M --buffered
said "belongs to user $user"
[ -e "$them/new.log" ] && fail "pmwal create made a log in the other user's directory"
expect 0 "bench --json STICKY/new name" -- "$pmwal" bench io "$work/t.dat" "${quick[@]}" \
	--json "$sticky/mine.json"
[ -s "$sticky/mine.json" ] || fail "no JSON written to a free name in a sticky directory"

step "root's own directory: written, and replaced whole the second time"
expect 0 "report -o OWN" -- "$pmwal" report "$work/r.json" -o "$work/rep"
[ -s "$work/rep/index.html" ] || fail "no index.html"
ino1=$(stat -c %i "$work/rep/index.html")
expect 0 "report -o OWN again" -- "$pmwal" report "$work/r.json" -o "$work/rep"
[ "$(stat -c %i "$work/rep/index.html")" != "$ino1" ] ||
	fail "the second report wrote into the first's file instead of replacing it"
expect 0 "bench -o, --csv, --json, fio logs in OWN" -- "$pmwal" bench io "$work/t.dat" \
	"${quick[@]}" -o "$work/rep" --csv "$work/csv" --json "$work/o.json" \
	--write_bw_log "$work/lg"
for f in rep/index.html rep/result.json rep/jobs.csv rep/series.csv csv/jobs.csv \
	o.json lg_bw.1.log; do
	[ -s "$work/$f" ] || fail "$f not written"
done
ls -A "$work/rep" "$work/csv" "$work" | grep -q '^\.[a-z].*\.[0-9a-f]\{8\}$' &&
	fail "a temporary file was left behind"
expect 0 "--json /dev/null" -- "$pmwal" bench io "$work/t.dat" "${quick[@]}" --json /dev/null
[ -c /dev/null ] || fail "/dev/null is no longer a device"
intact "own directory"

finish bench_output_links
