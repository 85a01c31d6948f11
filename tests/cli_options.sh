#!/usr/bin/env bash
# What each command says it takes is what it takes: every command's --help
# lists exactly the options it accepts (each option of any command is tried
# on every command), an option of another command is refused naming it,
# usage errors are JSON under --json, counts are singular where they are one,
# create names the option typed, the bench table does not cut a target's
# name, and the bash completion loads and completes.
# cli_options.sh PMWAL COMPLETION_FILE
set -uo pipefail
pmwal=$1 completion=$2
dir=$(mktemp -d /var/tmp/pmwal-cliopt-XXXXXX)
trap 'rm -rf "$dir"' EXIT
cd "$dir" || exit 1
fails=0 passes=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
pass() { passes=$((passes + 1)); }
check() { # check NAME EXPECTED_RC CMD...: runs it (bounded), output in out/err
	local name=$1 want=$2; shift 2
	timeout 60 "$@" >out 2>err; local rc=$?
	if [ "$rc" -ne "$want" ]; then
		fail "$name: exit $rc, wanted $want"; cat out err
	else
		pass
	fi
}
expect() { # expect NAME PATTERN (in the last output)
	if grep -q -- "$2" out err; then pass; else
		fail "$1: no '$2' in output"; cat out err; fi
}
refute() { # refute NAME PATTERN (not in the last output)
	if grep -q -- "$2" out err; then fail "$1: '$2' in output"; cat out err; else pass; fi
}

table=$("$pmwal" --dump-options 2>/dev/null) || fail "pmwal --dump-options: exit $?"
cmds=$("$pmwal" --help | awk '/^commands:/ {on = 1; next} on && /^  [a-z]/ {print $1} on && /^$/ {on = 0}')
[ "$cmds" = "$(awk -F'\t' '$1 == "command" {print $2}' <<<"$table")" ] && pass ||
	fail "pmwal --help and --dump-options list different commands"
[ "$(wc -w <<<"$cmds")" -ge 12 ] || fail "--dump-options lists $(wc -w <<<"$cmds") commands"
# Every option any command has, with the value it takes (if any).
all=$(awk -F'\t' '$1 == "option" && $3 != "help" {print $3 "\t" $5}' <<<"$table" | sort -u -k1,1)
# A plausible value for an option's value name: what matters is that the
# option itself is taken, a refused value names the option, not "unknown".
value_for() { # sets val
	case $1 in
	"") val= ;;
	BYTES | SIZE) val=1M ;;
	MODE) val=refuse ;;
	M) val=pmem ;;
	RW) val="read" ;;
	POLICY) val=durable ;;
	FMT) val=normal ;;
	*DIR* | *FILE* | PATH | PREFIX | JOB) val=$dir/nowhere ;;
	*) val=1 ;;
	esac
}
for c in $cmds; do
	"$pmwal" "$c" --help >help 2>&1 || fail "$c --help: exit $?"
	listed=$(awk '/^options:$/ {on = 1; next} /^$/ {on = 0} on' help |
		grep -oE '^  (-[a-zA-Z], |    )--[a-z0-9_-]+' | grep -oE -- '--[a-z0-9_-]+' | sort)
	want=$(awk -F'\t' -v c="$c" '$1 == "option" && $2 == c {print "--" $3}' <<<"$table" | sort)
	[ "$listed" = "$want" ] && pass || fail "$c --help lists $(echo $listed) but its table $(echo $want)"
	grep -q '^exit status:' help && pass || fail "$c --help has no exit status"
	while IFS=$'\t' read -r name arg; do
		[ -n "$name" ] || continue
		value_for "$arg"
		# An unknown option after it: nothing runs, whatever the command.
		msg=$(timeout 20 "$pmwal" "$c" "--$name" ${val:+"$val"} --no-such-option-zz x 2>&1 >/dev/null)
		rc=$?
		refused=0
		re="--$name is not an option of pmwal $c|(unknown option|unexpected)[^']*'?--$name([^a-z0-9_-]|\$)"
		[[ $msg =~ $re ]] && refused=1
		if [[ $'\n'$listed$'\n' == *$'\n'--$name$'\n'* ]]; then
			[ $refused = 0 ] && [ $rc -eq 2 ] && pass ||
				fail "pmwal $c --$name: listed in --help but refused (exit $rc): $msg"
		else
			[ $refused = 1 ] && [ $rc -eq 2 ] && pass ||
				fail "pmwal $c --$name: not in --help but taken (exit $rc): $msg"
		fi
	done <<<"$all"
done

# An option of another command is refused naming it, and who takes it.
check other_cmd_option 2 "$pmwal" dump --fdatasync "$dir/log"
expect other_cmd_option_named "--fdatasync is not an option of pmwal dump"
expect other_cmd_option_taker "create"
check create_salvage 2 "$pmwal" create "$dir/log" --size 1M --salvage
expect create_salvage_named "--salvage is not an option of pmwal create"
[ ! -e "$dir/log" ] && pass || fail "create --salvage made $dir/log"

# Usage errors under --json: the error object on stdout, as failures give.
for args in "verify --json" "dump --bogus --json $dir/log" "create $dir/log --json" \
	"release --json $dir/log" "probe --json a b" "crashtest --json --medium floppy" \
	"tail --json $dir/log --from x"; do
	# shellcheck disable=SC2086
	check "json_usage: $args" 2 "$pmwal" $args
	cmd=${args%% *}
	# -s: an empty stdout is no object (jq -e passes on no input at all)
	jq -se --arg c "$cmd" 'length == 1 and (.[0] | .command == $c and .exit == 2 and
		(.error | length > 0))' out >/dev/null &&
		pass || { fail "json_usage: $args: stdout is not the error object"; cat out; }
	[ -s err ] && pass || fail "json_usage: $args: nothing on stderr"
done
check text_usage_no_json 2 "$pmwal" verify
[ ! -s out ] && pass || fail "a usage error without --json wrote to stdout: $(cat out)"

# create names the option the user typed, not the library's field.
check create_small 2 "$pmwal" create "$dir/small" --size 4k --buffered
expect create_small_named "--size 4k: below the minimum of"
refute create_small_field "options.capacity_bytes"

# A device too small, no --size given: the device's size is named as such.
truncate -s 16k "$dir/small.img"
if loop=$(losetup -f --show "$dir/small.img" 2>/dev/null); then
	check create_small_device 2 "$pmwal" create "$loop" --buffered
	losetup -d "$loop"
	expect create_small_device_named "the target's size (no --size given): 16384 is below"
	refute create_small_device_field "options.capacity_bytes"
else
	echo "SKIP create_small_device: no loop device here"
fi

# One record is a record.
check create 0 "$pmwal" create "$dir/log" --size 1M --buffered
check append_one 0 bash -c "echo one | '$pmwal' append --buffered '$dir/log'"
expect append_one_singular "appended 1 record (LSN"
check append_two 0 bash -c "printf 'a\nb\n' | '$pmwal' append --buffered '$dir/log'"
expect append_two_plural "appended 2 records (LSN"
check append_one_fixed 0 bash -c "printf abcd | '$pmwal' append --buffered --record-size 4 '$dir/log'"
expect append_one_fixed_singular "appended 1 record of 4 bytes"
check verify_one 0 "$pmwal" verify --buffered "$dir/log"
refute verify_no_1_blocks " 1 blocks"

# The bench table shows a target's whole name (it was cut at 16 characters).
long="$dir/a-target-name-longer-than-sixteen.dat"
check bench_long_target 0 "$pmwal" bench io "$long" --rw write --bs 4k --iodepth 1 \
	--size 1m --runtime 100ms --ramp 0 --direct 0
expect bench_long_target_whole "$long"

# The completion: loads, completes commands, options and target prefixes.
complete_words() { # complete_words WORD...: the completions of the last word
	bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
		COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}; _pmwal; echo "${COMPREPLY[*]}"' \
		_ "$completion" "$@" 2>&1
}
got=$(bash -c 'source "$1"; complete -p pmwal' _ "$completion" 2>&1)
[[ $got == *"-F _pmwal pmwal"* ]] && pass || fail "completion: complete -p pmwal: $got"
got=$(complete_words pmwal cr)
[ "$got" = "create crashtest" ] && pass || fail "completion: pmwal cr: '$got'"
got=$(complete_words pmwal create --fd)
[ "$got" = "--fdatasync" ] && pass || fail "completion: pmwal create --fd: '$got'"
got=$(complete_words pmwal dump --fd)
[ -z "$got" ] && pass || fail "completion: pmwal dump --fd (dump has no --fdatasync): '$got'"
got=$(complete_words pmwal append x --tail "")
[ "$got" = "refuse pad short" ] && pass || fail "completion: --tail: '$got'"
got=$(cd "$dir" && complete_words pmwal verify fakep)
[ "$got" = "fakepmr:" ] && pass || fail "completion: pmwal verify fakep: '$got'"
got=$(complete_words pmwal verify "pmem:$dir/lo")
[ "$got" = "pmem:$dir/log" ] && pass || fail "completion: pmwal verify pmem:$dir/lo: '$got'"
# Where ':' splits words (bash without bash-completion): the path after it.
got=$(complete_words pmwal verify pmem : "$dir/lo")
[ "$got" = "$dir/log" ] && pass || fail "completion: pmwal verify pmem : $dir/lo: '$got'"
for c in $cmds; do
	got=$(complete_words pmwal "$c" --)
	want=$(awk -F'\t' -v c="$c" '$1 == "option" && $2 == c {printf "%s--%s", n++ ? " " : "", $3}' <<<"$table")
	[ "$got" = "$want" ] && pass || fail "completion: pmwal $c --: '$got', its table '$want'"
done

echo "cli_options: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
