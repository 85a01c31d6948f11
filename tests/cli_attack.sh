#!/usr/bin/env bash
# The CLI against targets that are not what they seem and inputs meant to make
# it lie (issue 13, classes 6 and 7): FIFOs, sockets and character devices are
# refused by name without hanging; no prefix lets create overwrite a user's
# file; a mapped log on a full filesystem fails with a message instead of
# SIGBUS; a failed create removes what it made; append refuses absurd record
# sizes, splits batches into groups that fit, and says what became durable
# when it fails part-way; extra arguments and bad values are refused by name;
# --json errors are JSON. Needs root for the tmpfs and loop lanes (skipped
# with a reason otherwise).
set -uo pipefail
pmwal=$1
dir=$(mktemp -d /var/tmp/pmwal-attack-XXXXXX)
loops=()
cleanup() {
	for l in "${loops[@]}"; do losetup -d "$l" 2>/dev/null; done
	for m in "$dir/full" "$dir/wfull"; do
		mountpoint -q "$m" && { umount "$m" || umount -l "$m"; }
	done
	rm -rf "$dir"
}
trap cleanup EXIT
fails=0 passes=0
fail() { echo "FAIL $1"; cat "$dir/out" "$dir/err" 2>/dev/null; fails=$((fails + 1)); }
check() { # check NAME EXPECTED_RC CMD... (stdin from /dev/null, at most 10 s)
	local name=$1 want=$2; shift 2
	timeout 10 "$@" </dev/null >"$dir/out" 2>"$dir/err"; local rc=$?
	if [ "$rc" -ne "$want" ]; then fail "$name: exit $rc, wanted $want"; else passes=$((passes + 1)); fi
}
expect() { # expect NAME PATTERN (in the last output)
	if grep -q -- "$2" "$dir/out" "$dir/err"; then passes=$((passes + 1)); else
		fail "$1: no '$2' in output"; fi
}
ok() { # ok NAME CONDITION...
	if "${@:2}"; then passes=$((passes + 1)); else fail "$1"; fi
}
# A small tmpfs, full after @2 bytes; empty when this machine cannot mount.
flip() { # flip FILE OFFSET: invert one byte (setting it could leave it as it was)
	local b
	b=$(od -An -tu1 -j"$2" -N1 "$1" | tr -d ' ')
	printf "$(printf '\\%03o' $((255 - b)))" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

small_fs() {
	local m=$dir/$1
	mkdir -p "$m"
	if [ "$(id -u)" -eq 0 ] && mount -t tmpfs -o "size=$2" tmpfs "$m" 2>/dev/null; then
		echo "$m"
	fi
}

log=$dir/log
"$pmwal" create "$log" --size 1M >/dev/null || { echo "cannot create a log"; exit 1; }
echo one | "$pmwal" append "$log" 2>/dev/null || { echo "cannot append"; exit 1; }

# ---- class 6: targets that are not what they seem ----------------------

# A FIFO: opening one blocks until a writer comes; every command must refuse
# it by name, through every prefix, instead of hanging.
mkfifo "$dir/fifo"
for prefix in "" file: pmem: fakepmr:; do
	t=$prefix$dir/fifo
	check "fifo_create_$prefix" 2 "$pmwal" create "$t" --size 1M
	expect "fifo_create_msg_$prefix" "fifo is a FIFO, not a"
	for cmd in dump verify info recover; do
		check "fifo_${cmd}_$prefix" 2 "$pmwal" "$cmd" "$t"
		expect "fifo_${cmd}_msg_$prefix" "fifo is a FIFO, not a"
	done
done
check fifo_append 2 "$pmwal" append "pmem:$dir/fifo"
expect fifo_append_msg "is a FIFO"
check fifo_release 2 "$pmwal" release "fakepmr:$dir/fifo" 1
expect fifo_release_msg "is a FIFO"

# A socket and character devices other than device-DAX.
if python3 -c "import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])" \
	"$dir/sock" 2>/dev/null; then
	for prefix in "" pmem: fakepmr:; do
		check "socket_verify_$prefix" 2 "$pmwal" verify "$prefix$dir/sock"
		expect "socket_msg_$prefix" "sock is a socket, not a"
	done
else
	echo "cli_attack: no python3 to make a socket; socket lane skipped"
fi
for prefix in pmem: fakepmr:; do
	check "devnull_verify_$prefix" 2 "$pmwal" verify "${prefix}/dev/null"
	expect "devnull_msg_$prefix" "/dev/null is a character device"
	check "devzero_info_$prefix" 2 "$pmwal" info "${prefix}/dev/zero"
	expect "devzero_msg_$prefix" "/dev/zero is a character device"
done
check devnull_create_pmem 2 "$pmwal" create pmem:/dev/null --size 1M
expect devnull_create_msg "/dev/null is a character device"

# probe fakepmr:PATH looks at PATH: the simulated registers would read
# healthy whatever it is. A FIFO (without blocking), a missing file, a
# character device or an empty file is refused by name, exit 2, JSON with
# --json; a real fake PMR file probes fine.
check probe_fakepmr_fifo 2 "$pmwal" probe "fakepmr:$dir/fifo"
expect probe_fakepmr_fifo_msg "fifo is a FIFO, not a regular file"
check probe_fakepmr_missing 2 "$pmwal" probe "fakepmr:$dir/nope,wbm=1"
expect probe_fakepmr_missing_msg "nope: no such file.*pmwal create fakepmr:"
check probe_fakepmr_devnull 2 "$pmwal" probe fakepmr:/dev/null
expect probe_fakepmr_devnull_msg "/dev/null is a character device, not a regular file"
: >"$dir/empty"
check probe_fakepmr_empty 2 "$pmwal" probe "fakepmr:$dir/empty"
expect probe_fakepmr_empty_msg "empty: the file holds 0 bytes"
check probe_fakepmr_json 2 "$pmwal" probe "fakepmr:$dir/fifo" --json
ok probe_fakepmr_json_object jq -se 'length == 1 and .[0].exit == 2 and (.[0].error | test("is a FIFO"))' "$dir/out" >/dev/null
"$pmwal" create "fakepmr:$dir/fake.pmr" --size 1M >/dev/null
check probe_fakepmr_file 0 "$pmwal" probe "fakepmr:$dir/fake.pmr" --json
ok probe_fakepmr_file_size jq -se 'length == 1 and (.[0] | .pmr.bar_bytes == 1048576)' "$dir/out" >/dev/null

# create never overwrites a user's file without --force, whatever the prefix.
for prefix in file: fakepmr:; do
	echo precious >"$dir/user.txt"
	check "user_file_$prefix" 2 "$pmwal" create "$prefix$dir/user.txt" --size 1M
	expect "user_file_msg_$prefix" "not a pmwal log; pass --force"
	ok "user_file_kept_$prefix" [ "$(cat "$dir/user.txt")" = precious ]
done

# With --force, a file of odd size (not whole 4 KiB blocks) becomes a log.
echo hello >"$dir/odd.txt"
check odd_size_force 0 "$pmwal" create "$dir/odd.txt" --size 1M --force
check odd_size_force_verify 0 "$pmwal" verify "$dir/odd.txt"

if full=$(small_fs full 1M) && [ -n "$full" ]; then
	# A mapped log over a sparse file on a full filesystem: refused at
	# create and at open with the target and the size, never SIGBUS.
	truncate -s 4M "$full/sparse"
	check pmem_sparse_create 1 "$pmwal" create "pmem:$full/sparse" --size 4M --force
	expect pmem_sparse_create_msg "$full/sparse: cannot allocate 4194304 bytes: No space left"
	"$pmwal" create "pmem:$dir/p.log" --size 4M >/dev/null
	rm -f "$full/sparse"
	cp --sparse=always "$dir/p.log" "$full/p.log"
	check pmem_sparse_append 1 bash -c "seq 1 100000 | '$pmwal' append 'pmem:$full/p.log'"
	expect pmem_sparse_append_msg "$full/p.log: cannot allocate 4194304 bytes"
	rm -f "$full/p.log"
	# The same with blocks held past the end of the file (fallocate
	# --keep-size): its block count covers its size, yet a hole is
	# under the mapping. Allocating only holes must still find it.
	if "$pmwal" create "pmem:$full/k.log" --size 256K >/dev/null &&
		fallocate -p -o 128K -l 128K "$full/k.log" &&
		fallocate -n -o 256K -l 128K "$full/k.log"; then
		dd if=/dev/zero of="$full/fill" bs=4k 2>/dev/null
		check pmem_keep_size_hole 1 bash -c "seq 1 5000 | '$pmwal' append 'pmem:$full/k.log'"
		expect pmem_keep_size_hole_msg "$full/k.log: cannot allocate 262144 bytes: No space left"
		rm -f "$full/fill"
	fi
	rm -f "$full/k.log"

	# A create that fails removes the file it made, and only that file.
	for prefix in "" pmem: fakepmr:; do
		check "failed_create_$prefix" 1 "$pmwal" create "$prefix$full/big" --size 8M --buffered
		expect "failed_create_msg_$prefix" "No space left"
		ok "failed_create_removed_$prefix" [ ! -e "$full/big" ]
	done
else
	echo "cli_attack: cannot mount a small tmpfs here; full-filesystem lane skipped"
fi

# A create killed while it zero-fills a large new file removes that file.
"$pmwal" create "$dir/killed" --size 2G --buffered >/dev/null 2>&1 &
pid=$!
sleep 0.3
kill -TERM "$pid"
wait "$pid"
rc=$?
ok "killed_create_was_running (exit $rc)" [ "$rc" -eq 143 ]
ok killed_create_removed [ ! -e "$dir/killed" ]
rm -f "$dir/killed"

# An all-zero superblock area (a create killed by SIGKILL) reads as an
# interrupted create, naming the file.
truncate -s 1M "$dir/zeros"
check zero_superblock 2 "$pmwal" verify "$dir/zeros"
expect zero_superblock_msg "zeros: not a pmwal log: no superblock .*interrupted .pmwal create"
# Opened to write, the log's lock is the opener's own: it must not read as
# another process creating it ("pid N holds it ... do not remove it").
check zero_superblock_append 2 "$pmwal" append "$dir/zeros"
expect zero_superblock_append_msg "no superblock .*interrupted .pmwal create"

# ---- class 7: the CLI telling the truth ---------------------------------

# Absurd or too large record sizes are refused by name before anything runs.
check record_size_1T 2 bash -c "echo x | '$pmwal' append '$log' --record-size 1T"
expect record_size_1T_msg "\-\-record-size"
"$pmwal" create "$dir/small_rec" --size 1M --record-max 4K >/dev/null
check record_size_over_max 2 bash -c "head -c 8192 /dev/zero | '$pmwal' append '$dir/small_rec' --record-size 8K"
expect record_size_over_max_msg "\-\-record-size 8K: larger than the log's maximum record (4096 bytes)"

# A batch of records that do not fit one group together is split; no record
# is too large here.
"$pmwal" create "$dir/batch" --size 64M --record-max 1M >/dev/null
check batch_split 0 bash -c "head -c 8M /dev/zero | '$pmwal' append '$dir/batch' --record-size 256K"
expect batch_split_msg "appended 32 records of 262144 bytes (LSN 1\.\.32), durable"
check batch_split_lines 0 bash -c "for i in \$(seq 1 64); do head -c 100000 /dev/zero | tr '\\0' x; echo; done | '$pmwal' append '$dir/batch'"
expect batch_split_lines_msg "appended 64 records (LSN 33..96), durable"

# --record-size N: every record is exactly N bytes. An input that does not
# end on a whole record is refused unless --tail says otherwise: from a file
# before anything is appended, from a pipe after the whole records (exit 1,
# what is durable named). --tail pad and --tail short say what they did.
"$pmwal" create "$dir/fixed" --size 1M >/dev/null
head -c 250 /dev/zero | tr '\0' a >"$dir/in250"
check tail_refused_file 2 bash -c "'$pmwal' append '$dir/fixed' --record-size 100 <'$dir/in250'"
expect tail_refused_file_msg "input is 250 bytes, not a whole number of 100-byte records (50 bytes over); nothing appended"
check tail_refused_file_nothing 0 "$pmwal" verify "$dir/fixed" --json
ok tail_refused_file_nothing_records jq -se 'length == 1 and (.[0] | .records == 0)' "$dir/out" >/dev/null
check tail_refused_pipe 1 bash -c "cat '$dir/in250' | '$pmwal' append '$dir/fixed' --record-size 100"
expect tail_refused_pipe_msg "last 50 bytes are not a whole 100-byte record and were not appended"
expect tail_refused_pipe_durable "durable: LSN 1\.\.2"
check tail_refused_pipe_json 1 bash -c "cat '$dir/in250' | '$pmwal' append '$dir/fixed' --record-size 100 --json"
ok tail_refused_pipe_json_object jq -se 'length == 1 and .[0].tail_bytes_not_appended == 50 and .[0].durable_records == 2' "$dir/out" >/dev/null
check tail_pad 0 bash -c "'$pmwal' append '$dir/fixed' --record-size 100 --tail pad <'$dir/in250'"
expect tail_pad_msg "appended 3 records of 100 bytes (LSN 5\.\.7), durable; the last (LSN 7) holds the input's last 50 bytes and 50 zero bytes of padding"
check tail_short 0 bash -c "cat '$dir/in250' | '$pmwal' append '$dir/fixed' --record-size 100 --tail short --json"
ok tail_short_json jq -se 'length == 1 and (.[0] | .records == 3 and .last_lsn == 10 and .record_bytes == 100 and .last_record_bytes == 50)' "$dir/out" >/dev/null
check tail_sizes 0 "$pmwal" dump "$dir/fixed" --json
ok tail_sizes_each jq -se '[.[].len] == [100,100,100,100,100,100,100,100,100,50]' "$dir/out" >/dev/null
check tail_needs_record_size 2 bash -c "'$pmwal' append '$dir/fixed' --tail pad <'$dir/in250'"
expect tail_needs_record_size_msg "\-\-tail needs \-\-record-size"
check tail_help 0 "$pmwal" append --help
expect tail_help_msg "records of exactly N bytes"

# A log whose every record was released holds none: verify, recover, dump and
# info say so and name the next LSN and the head, never "LSN 0..0".
"$pmwal" create "$dir/released" --size 1M >/dev/null
seq 1 5 | "$pmwal" append "$dir/released" 2>/dev/null
"$pmwal" release "$dir/released" 6
for cmd in verify recover; do
	check "released_$cmd" 0 "$pmwal" "$cmd" "$dir/released"
	expect "released_${cmd}_none" "records      none: the log holds no records"
	expect "released_${cmd}_next" "next LSN     6 (head LSN 6)"
	ok "released_${cmd}_no_lsn_0" bash -c "! grep -q \"LSN 0\" \"$dir/out\""
	check "released_${cmd}_json" 0 "$pmwal" "$cmd" "$dir/released" --json
	ok "released_${cmd}_json_fields" jq -se 'length == 1 and (.[0] | .records == 0 and .first_lsn == null and .last_lsn == null and .next_lsn == 6 and .head_lsn == 6)' "$dir/out" >/dev/null
done
check released_dump 0 "$pmwal" dump "$dir/released"
ok released_dump_stdout_empty [ ! -s "$dir/out" ]
expect released_dump_msg "released: the log holds no records (next LSN 6, head LSN 6)"
check released_info 0 "$pmwal" info "$dir/released"
expect released_info_msg "records        none live (head LSN 6), next LSN 6"
check released_info_json 0 "$pmwal" info "$dir/released" --json
ok released_info_json_fields jq -se 'length == 1 and (.[0] | .head_lsn == 6 and .next_lsn == 6 and .used_blocks == 0)' "$dir/out" >/dev/null
check released_some_verify 0 "$pmwal" verify "$dir/fixed"
expect released_some_verify_msg "next LSN     11 (head LSN 1)"

# A failure part-way says what is durable.
"$pmwal" create "$dir/tiny" --size 64K >/dev/null
check full_part_way 1 bash -c "seq 1 100000 | '$pmwal' append '$dir/tiny'"
expect full_part_way_msg "durable: LSN 1\.\.[0-9]"
check full_nothing 1 bash -c "seq 1 10 | '$pmwal' append '$dir/tiny'"
expect full_nothing_msg "nothing durable"
check too_big_nothing 1 bash -c "head -c 5000 /dev/zero | tr '\\0' x | '$pmwal' append '$dir/small_rec'"
expect too_big_nothing_msg "nothing durable"

# Writes that fail under the buffered commit policy (a loop device whose
# backing file is on a full tmpfs): the failure and what is durable are told.
if wfull=$(small_fs wfull 256K) && [ -n "$wfull" ] && truncate -s 16M "$wfull/img" &&
	loop=$(losetup -f --show "$wfull/img" 2>/dev/null); then
	loops+=("$loop")
	"$pmwal" create "$loop" >/dev/null 2>&1
	check write_error_part_way 1 bash -c "seq 1 300000 | '$pmwal' append '$loop'"
	expect write_error_msg "Input/output error\|No space left"
	expect write_error_durable "durable: LSN 1\.\.[0-9]\|nothing durable"
	expect write_error_close "closing the log failed"
else
	echo "cli_attack: no loop device over a small tmpfs here; write-error lane skipped"
fi

# dump --salvage over a damaged log must not pass off a partial dump as the
# whole log: what was not dumped is named and the exit is 3 (corrupt).
"$pmwal" create "$dir/dmg" --size 1M >/dev/null
seq 1 3000 | "$pmwal" append "$dir/dmg" 2>/dev/null
# (A header byte: a payload byte at a fixed offset may be unchecked padding.)
flip "$dir/dmg" $((8192 + 4 * 4096 + 20))
check salvage_dump_partial 3 "$pmwal" dump "$dir/dmg" --salvage
expect salvage_dump_partial_msg "the dump is incomplete: [0-9]* records were skipped\|counted none lost"
expect salvage_dump_partial_attested "durable up to LSN 3000"

# dump --salvage reads past the damage: the groups after it are dumped, the
# records lost with the damaged group are named, and the exit is still 3.
"$pmwal" create "$dir/slv" --size 1M >/dev/null
for i in 0 1 2 3 4; do seq $((i * 600 + 1)) $((i * 600 + 600)) | "$pmwal" append "$dir/slv" >/dev/null; done
flip "$dir/slv" $((8192 + 2 * 4096 + 20))
check salvage_dump_past_damage 3 "$pmwal" dump "$dir/slv" --salvage
ok salvage_dump_first grep -q "^1	1$" "$dir/out"
ok salvage_dump_after_damage grep -q "^3000	3000$" "$dir/out"
expect salvage_dump_skipped "skipped LSN [0-9]*\.\.[0-9]* (damaged"
"$pmwal" dump "$dir/slv" --salvage --json >"$dir/out" 2>"$dir/err"
ok salvage_dump_json_after_damage grep -q '"lsn": *3000' "$dir/out"

# Extra positional arguments and bad values are refused by name.
for cmd in dump verify info recover; do
	check "extra_$cmd" 2 "$pmwal" "$cmd" "$log" surplus
	expect "extra_${cmd}_msg" "unexpected argument 'surplus'"
done
check extra_append 2 bash -c "echo x | '$pmwal' append '$log' surplus"
expect extra_append_msg "unexpected argument 'surplus'"
check extra_release 2 "$pmwal" release "$log" 1 surplus
expect extra_release_msg "unexpected argument 'surplus'"
check extra_create 2 "$pmwal" create "$dir/new" --size 1M surplus
expect extra_create_msg "unexpected argument 'surplus'"
check bad_lsn_named 2 "$pmwal" release "$log" 12abc
expect bad_lsn_named_msg "LSN: '12abc'"
check bad_from_named 2 "$pmwal" dump "$log" --from -3
expect bad_from_named_msg "\-\-from: '-3'"
check bad_size_named 2 "$pmwal" create "$dir/new" --size 12Q
expect bad_size_named_msg "\-\-size: '12Q'"
# A file needs a size, wherever it lives: under /dev too (/dev/shm).
for t in "$dir/nosize" "pmem:/dev/shm/pmwal-attack-nosize-$$" "fakepmr:/dev/shm/pmwal-attack-nosize-$$"; do
	check "create_nosize_${t%%:*}" 2 "$pmwal" create "$t"
	expect "create_nosize_${t%%:*}_msg" "\-\-size BYTES is required for a log in a file"
done
ok create_nosize_made_nothing test -z "$(ls /dev/shm/pmwal-attack-nosize-$$* 2>/dev/null)"
# A log file in a directory under /dev/shm (a tmpfs of its own, not /dev's
# devtmpfs) is a file like any other: created, appended to, read back,
# buffered or not (where the tmpfs refuses O_DIRECT the refusal names
# --buffered). A missing node in /dev itself is a missing device: refused,
# nothing made.
shmd=$(mktemp -d /dev/shm/pmwal-attack-shm.XXXXXX)
check shm_create_buffered 0 "$pmwal" create "$shmd/x.log" --size 1M --buffered
check shm_append_buffered 0 bash -c "seq 1 100 | '$pmwal' append --buffered '$shmd/x.log'"
check shm_dump_buffered 0 "$pmwal" dump --buffered "$shmd/x.log" --from 100
expect shm_dump_buffered_lsn $'^100\t100$'
timeout 10 "$pmwal" create "$shmd/d.log" --size 1M </dev/null >"$dir/out" 2>"$dir/err"
case $? in
0)	passes=$((passes + 1))
	check shm_append_direct 0 bash -c "seq 1 7 | '$pmwal' append '$shmd/d.log'"
	check shm_dump_direct 0 "$pmwal" dump "$shmd/d.log" --from 7
	expect shm_dump_direct_lsn $'^7\t7$' ;;
2)	expect shm_create_direct_refused_msg "\-\-buffered" ;;
*)	fail "shm_create_direct: exit $?, wanted 0 or 2 (naming --buffered)" ;;
esac
rm -rf "$shmd"
for node in /dev/pmwal-attack-missing-$$ /dev/loop7p1; do
	[ -e "$node" ] && continue
	check "dev_missing_refused_${node##*/}" 2 "$pmwal" create "$node" --size 1M --buffered
	expect "dev_missing_msg_${node##*/}" "no such device"
	ok "dev_missing_made_nothing_${node##*/}" test ! -e "$node"
done

for cmd in create append dump verify recover info release; do
	check "unknown_option_$cmd" 2 "$pmwal" "$cmd" --bogus "$log"
	expect "unknown_option_${cmd}_msg" "pmwal $cmd: unknown option '--bogus'"
done
check unknown_short_option 2 "$pmwal" verify -q "$log"
expect unknown_short_option_msg "pmwal verify: unknown option '-q'"
check missing_value 2 "$pmwal" dump "$log" --from
expect missing_value_msg "pmwal dump: option '--from' needs a value"

# A missing mapped log is not to be "created by giving a size" to a reader.
for prefix in pmem: fakepmr:; do
	check "missing_mapped_$prefix" 2 "$pmwal" verify "$prefix$dir/nope"
	expect "missing_mapped_msg_$prefix" "nope: no such file; create the log first"
done

# --json: an error is one JSON object on stdout.
for cmd in verify dump info; do
	check "json_error_$cmd" 2 "$pmwal" "$cmd" "$dir/nope" --json
	ok "json_error_${cmd}_object" jq -se 'length == 1 and (.[0].error | test("no such file"))' "$dir/out" >/dev/null
done

# crashtest: bad input is refused by name; an interrupt stops the campaign,
# kills its writers and removes their files.
check crashtest_point_past_end 1 "$pmwal" crashtest --mode exhaustive --medium nvme-fua --point 999999
expect crashtest_point_past_end_msg "past the workload's last event"
check crashtest_seconds_exhaustive 2 "$pmwal" crashtest --mode exhaustive --seconds 3
expect crashtest_seconds_exhaustive_msg "bounded by --count"
check crashtest_missing_value 2 "$pmwal" crashtest --count
expect crashtest_missing_value_msg "option '--count' needs a value"
check crashtest_bad_medium 2 "$pmwal" crashtest --medium floppy
expect crashtest_bad_medium_msg "want pmem, nvme, nvme-fua, fakepmr or all"
check crashtest_json_error 2 "$pmwal" crashtest --medium floppy --json
ok crashtest_json_error_object jq -se 'length == 1 and (.[0].error | test("floppy"))' "$dir/out" >/dev/null
mkdir -p "$dir/ctk"
"$pmwal" crashtest --mode kill --dir "$dir/ctk" --seconds 30 >"$dir/out" 2>"$dir/err" &
ctpid=$!
sleep 1.5
ctchild=$(pgrep -P "$ctpid" | head -1)
kill -INT "$ctpid"
wait "$ctpid"
ok crashtest_interrupt_exit test $? -eq 130
expect crashtest_interrupt_msg "interrupted (Interrupt)"
ok crashtest_interrupt_child_seen test -n "$ctchild"
ok crashtest_interrupt_no_files test -z "$(find "$dir/ctk" /dev/shm -maxdepth 1 -name "pmwal-crashtest-$ctchild-*")"
ok crashtest_interrupt_no_processes test -z "$(pgrep -f "crashtest --mode kill --dir $dir/ctk" || true)"
check append_nothing 0 "$pmwal" append "$log"
expect append_nothing_msg "appended 0 records: the input held none"
# A device node that is not there is no log to create: never a file in /dev.
check create_missing_dev_node 2 "$pmwal" create /dev/pmwal-no-such-node --size 16M
expect create_missing_dev_node_msg "no such device"
ok create_missing_dev_node_no_file test ! -e /dev/pmwal-no-such-node
# Nor through a mapped medium's prefix (pmem:, fakepmr:).
for pfx in pmem fakepmr; do
	node=/dev/pmwal-no-such-node-$pfx-$$
	check "create_missing_dev_node_$pfx" 2 "$pmwal" create "$pfx:$node" --size 1M
	expect "create_missing_dev_node_${pfx}_msg" "no such device"
	ok "create_missing_dev_node_${pfx}_no_file" test ! -e "$node"
	rm -f "$node"
done

# A target whose name is not UTF-8 (a file name of another encoding): --json
# still prints its object, naming it with U+FFFD for each byte JSON cannot
# carry, not nothing.
u8=$dir/$'log\xff'
check json_name_create 0 "$pmwal" create "$u8" --size 1M --json
ok json_name_create_object jq -se 'length == 1 and (.[0].target | endswith("/log\ufffd"))' "$dir/out" >/dev/null
for cmd in verify info recover; do
	check "json_name_$cmd" 0 "$pmwal" "$cmd" "$u8" --json
	ok "json_name_${cmd}_object" jq -se 'length == 1 and (.[0].target | endswith("/log\ufffd"))' "$dir/out" >/dev/null
done

# A dump whose records cannot be written (a full disk) fails, not exit 0.
check dump_to_full_disk 1 bash -c "'$pmwal' dump '$log' >/dev/full"
expect dump_to_full_disk_msg "No space left on device"

# tail --follow whose reader goes away while SIGPIPE is ignored (as systemd
# runs services) stops, exit 1, at the first record it cannot write.
flog=$dir/flog
"$pmwal" create "$flog" --size 1M >/dev/null
bash -c "trap '' PIPE
	(for i in \$(seq 100); do echo r\$i; sleep 0.02; done) | '$pmwal' append '$flog' >/dev/null 2>&1 &
	timeout 10 '$pmwal' tail '$flog' --follow 2>'$dir/err' | head -1 >/dev/null
	echo \${PIPESTATUS[0]} >'$dir/tailrc'; wait"
ok tail_follow_reader_gone test "$(cat "$dir/tailrc")" = 1
expect tail_follow_reader_gone_msg "Broken pipe"

# A line that never ends (no newline: /dev/zero) is refused once it is longer
# than the log's largest record, instead of being read into memory until
# there is none.
check append_endless_line 1 bash -c "'$pmwal' append '$log' </dev/zero"
expect append_endless_line_msg "larger than the log's maximum record size"

echo "cli_attack: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
