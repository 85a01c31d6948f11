#!/usr/bin/env bash
# The CLI as a user runs it: create, append, dump, verify (text and JSON),
# info, release, recover; a torn tail and a corruption made with dd are
# reported as such, with the documented exit codes; bad input exits 2.
set -uo pipefail
pmwal=$1
dir=$(mktemp -d /var/tmp/pmwal-cli-XXXXXX)
trap 'rm -rf "$dir"; rm -f "${shm:-}"' EXIT
log=$dir/log
fails=0 passes=0
check() { # check NAME EXPECTED_RC CMD...
	local name=$1 want=$2; shift 2
	"$@" >"$dir/out" 2>"$dir/err"; local rc=$?
	if [ "$rc" -ne "$want" ]; then
		echo "FAIL $name: exit $rc, wanted $want"; cat "$dir/out" "$dir/err"; fails=$((fails + 1))
	else
		passes=$((passes + 1))
	fi
}
expect() { # expect NAME PATTERN (in the last output)
	if grep -q -- "$2" "$dir/out" "$dir/err"; then passes=$((passes + 1)); else
		echo "FAIL $1: no '$2' in output"; cat "$dir/out" "$dir/err"; fails=$((fails + 1)); fi
}

flip() { # flip FILE OFFSET: invert one byte (setting it could leave it as it was)
	local b
	b=$(od -An -tu1 -j"$2" -N1 "$1" | tr -d ' ')
	printf "$(printf '\\%03o' $((255 - b)))" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

check help 0 "$pmwal" --help
check create 0 "$pmwal" create "$log" --size 1M
check create_again_refused 2 "$pmwal" create "$log" --size 1M
expect create_again_msg "--force"
check append 0 bash -c "seq 1 3000 | '$pmwal' append '$log'"
check dump 0 "$pmwal" dump "$log" --from 2999
expect dump_lsn $'^2999\t2999$'
check dump_json 0 "$pmwal" dump "$log" --from 3000 --json
expect dump_json_data '"data": *"3000"'
check verify_clean 0 "$pmwal" verify "$log" --json
expect verify_clean_verdict '"verdict": "clean"'
expect verify_records '"records": 3000'
check info 0 "$pmwal" info "$log"
expect info_durability "durability"
check release 0 "$pmwal" release "$log" 1001
check dump_after_release 0 "$pmwal" dump "$log"
expect dump_head $'^1001\t1001$'

# Half of a valid block in the slot after a cleanly closed log: the closed
# superblock attests where the log ends, so it is not even a torn tail.
end=$("$pmwal" verify "$log" --json | sed -n 's/.*"end_offset": \([0-9]*\).*/\1/p')
dd if="$log" of="$log" bs=512 count=4 skip=$(((end - 4096) / 512)) seek=$((end / 512)) conv=notrunc status=none
check verify_torn 0 "$pmwal" verify "$log" --json
expect verify_torn_verdict '"verdict": "clean"'
check recover_torn 0 "$pmwal" recover "$log"
check append_after_torn 0 bash -c "echo after | '$pmwal' append '$log'"
check verify_after 0 "$pmwal" verify "$log" --json
expect verify_after_records '"last_lsn": 3001'

# A corruption: one flipped byte in a block in the middle of the log. A byte
# of its header (log_id): a payload byte at a fixed offset may fall in the
# padding after the block's last record, which no checksum covers, and where
# a block's records end depends on how the appends were grouped (under ASan
# it did: the flip went unseen and the log read clean).
mid=$((8192 + 4 * 4096 + 20))
flip "$log" $mid
check verify_corrupt 3 "$pmwal" verify "$log" --json
expect verify_corrupt_verdict '"verdict": "corrupt"'
expect verify_corrupt_offset '"corrupt_offset": 24576'
check append_refused_on_corrupt 3 bash -c "echo x | '$pmwal' append '$log'"
expect corrupt_msg "salvage"
check recover_salvage 3 "$pmwal" recover "$log" --salvage

# One format on every medium: a log copied from a file to a pmem region and
# back verifies and keeps appending.
# A name of its own (mktemp): cp follows a link another user could plant
# under a fixed name in the shared /dev/shm.
shm=$(mktemp /dev/shm/pmwal-cli-XXXXXX)
check medium_create 0 "$pmwal" create "$dir/m.log" --size 2M
check medium_append 0 bash -c "seq 1 777 | '$pmwal' append '$dir/m.log'"
cp "$dir/m.log" "$shm"
check medium_verify_pmem 0 "$pmwal" verify "pmem:$shm" --json
expect medium_pmem_records '"records": 777'
check medium_append_pmem 0 bash -c "seq 778 800 | '$pmwal' append 'pmem:$shm'"
cp "$shm" "$dir/m2.log"
rm -f "$shm"
check medium_verify_back 0 "$pmwal" verify "$dir/m2.log" --json
expect medium_back_records '"last_lsn": 800'

# A block device (a loop device over a file), where this machine allows one.
if loop=$(losetup -f --show "$(truncate -s 8M "$dir/img" && echo "$dir/img")" 2>/dev/null); then
	check blk_create 0 "$pmwal" create "$loop"
	check blk_append 0 bash -c "seq 1 1000 | '$pmwal' append '$loop'"
	check blk_verify 0 "$pmwal" verify "$loop" --json
	expect blk_records '"records": 1000'
	check blk_info 0 "$pmwal" info "$loop"
	expect blk_medium "blockdev"
	losetup -d "$loop"
else
	echo "cli_round_trip: no loop device here; block-device lane skipped"
fi

# Several processes: pmwal tail --follow prints records as another process
# appends them; a standby (--wait-lock) takes over when the writer exits; a
# writer stopped while another breaks its lock is fenced (issue 15).
export PMWAL_STATUS_DIR=$dir
flog=$dir/follow.log
check follow_create 0 "$pmwal" create "$flog" --size 4M
"$pmwal" tail "$flog" --follow >"$dir/tail.out" 2>"$dir/tail.err" & tailpid=$!
sleep 0.2
check follow_append1 0 bash -c "printf 'a\nb\n' | '$pmwal' append '$flog'"
check follow_append2 0 bash -c "printf 'c\n' | '$pmwal' append '$flog'"
for _ in $(seq 100); do [ "$(wc -l <"$dir/tail.out")" -ge 3 ] && break; sleep 0.05; done
kill -TERM $tailpid; wait $tailpid; rc=$?
[ $rc -eq 0 ] && passes=$((passes + 1)) || { echo "FAIL tail --follow exit $rc"; fails=$((fails + 1)); }
[ "$(cut -f2 "$dir/tail.out" | tr '\n' ' ')" = "a b c " ] && passes=$((passes + 1)) ||
	{ echo "FAIL tail --follow printed:"; cat "$dir/tail.out" "$dir/tail.err"; fails=$((fails + 1)); }
check tail_from_end 0 "$pmwal" tail "$flog" --from end
[ ! -s "$dir/out" ] && passes=$((passes + 1)) || { echo "FAIL tail --from end printed records"; fails=$((fails + 1)); }
check tail_bad_from 2 "$pmwal" tail "$flog" --from soon
expect tail_bad_from_msg "an LSN or 'end'"
check dump_no_follow 2 "$pmwal" dump "$flog" --follow
check wait_and_break 2 "$pmwal" append "$flog" --wait-lock --break-lock
# A writer holding the log (a slow stdin), a standby waiting on it.
(sleep 1; echo w1) | "$pmwal" append "$flog" >"$dir/w1.out" 2>&1 & w1=$!
sleep 0.3
(echo s1) | "$pmwal" append "$flog" --wait-lock >"$dir/s1.out" 2>&1 & s1=$!
sleep 0.2
kill -0 $s1 2>/dev/null && passes=$((passes + 1)) || { echo "FAIL standby did not wait"; cat "$dir/s1.out"; fails=$((fails + 1)); }
wait $w1; wait $s1; rc=$?
[ $rc -eq 0 ] && grep -q "LSN 5..5" "$dir/s1.out" && passes=$((passes + 1)) ||
	{ echo "FAIL standby: exit $rc"; cat "$dir/w1.out" "$dir/s1.out"; fails=$((fails + 1)); }
# A stopped writer; another breaks its lock; it resumes fenced.
(echo x1; sleep 1; echo x2) | "$pmwal" append "$flog" >"$dir/x.out" 2>&1 & xp=$!
sleep 0.4
xpid=$(pgrep -f "append $flog\$" | head -1)
kill -STOP "$xpid"
check refused_while_held 1 bash -c "echo y | '$pmwal' append '$flog'"
expect refused_names_pid "pid $xpid"
check break_lock 0 bash -c "echo y | '$pmwal' append '$flog' --break-lock"
kill -CONT "$xpid"
wait $xp; rc=$?
[ $rc -ne 0 ] && grep -q "took the log over" "$dir/x.out" && passes=$((passes + 1)) ||
	{ echo "FAIL the stopped writer was not fenced: exit $rc"; cat "$dir/x.out"; fails=$((fails + 1)); }
check follow_dump 0 "$pmwal" dump "$flog"
# x1 is in the log only if the fenced writer said it was durable.
want="a b c w1 s1 y "
grep -q "durable: LSN 6" "$dir/x.out" && want="a b c w1 s1 x1 y "
[ "$(cut -f2 "$dir/out" | tr '\n' ' ')" = "$want" ] && passes=$((passes + 1)) ||
	{ echo "FAIL records after takeovers:"; cat "$dir/out"; fails=$((fails + 1)); }
unset PMWAL_STATUS_DIR

# Bad input: exit 2 with a message, never a crash.
check unknown_cmd 2 "$pmwal" frobnicate
check missing_target 2 "$pmwal" verify
check no_such_file 2 "$pmwal" verify "$dir/nope"
expect no_such_msg "no such file"
check not_a_log 2 "$pmwal" verify /etc/hostname
check bad_size 2 "$pmwal" create "$dir/x" --size 12Q
check bad_lsn 2 "$pmwal" release "$log" abc
check bad_option 2 "$pmwal" dump "$log" --bogus
check directory 2 "$pmwal" verify "$dir"
expect directory_msg "is a directory"
check char_device 2 "$pmwal" verify /dev/null
expect char_device_msg "not a regular file or block device"
echo "precious" >"$dir/user.txt"
check create_over_user_file 2 "$pmwal" create "$dir/user.txt" --size 1M
expect create_over_user_file_msg "not a pmwal log"
[ "$(cat "$dir/user.txt")" = precious ] && passes=$((passes + 1)) ||
	{ echo "FAIL: create changed a user's file"; fails=$((fails + 1)); }
if command -v mkfs.ext4 >/dev/null; then
	truncate -s 8M "$dir/fs.img" && mkfs.ext4 -q -F "$dir/fs.img"
	check create_over_filesystem 2 "$pmwal" create "$dir/fs.img" --size 1M
	expect create_over_filesystem_msg "ext2/3/4 filesystem"
	check create_over_filesystem_forced 0 "$pmwal" create "$dir/fs.img" --size 1M --force
fi
check create_no_size 2 "$pmwal" create "$dir/nosize"
expect create_no_size_msg "--size"
check bad_pmr_address 2 "$pmwal" verify pmr:zzzz
expect bad_pmr_msg "PCI address"

echo "cli_round_trip: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
