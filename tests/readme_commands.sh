#!/usr/bin/env bash
# The commands README.md and docs/*.md show still work here: a renamed build
# folder, a removed option or subcommand, a moved script fails this test.
#   readme_commands.sh BUILD SRC
# From every code block (```sh or plain; ```c only for README's example)
# and every inline `code` span:
#  - build/NAME/... paths: NAME is a folder a script of the project makes
#    (scripts/, bench/) or a command of the same page makes (-B build/NAME),
#    and what follows exists in BUILD (or is a target not built here);
#  - source paths (scripts/, bench/, examples/, tests/, wal/ ...) exist;
#  - `pmwal SUB --opt ...`: SUB is a subcommand and each --opt is in its
#    --help; build/*/examples/X --opt: each --opt is in X's usage;
#    scripts/X.sh SUB: X.sh has SUB; -DPMWAL_*: an option of CMakeLists;
#    man NAME: the page is built;
#  - cheap ones run: README's C example and pmwal(3)'s (compiled against
#    BUILD's library),
#    README's pmwal synopsis on a small file log, the guide's kvstore on
#    stdin.
# Blocks preceded by <!-- not-run --> are skipped; commands that are never
# run here are in NOT_RUN below, with the reason; an sh-block command that
# is neither checked nor listed there fails the test.
set -uo pipefail
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd)
cli=$build/cli/pmwal
[ -x "$cli" ] || { echo "FAIL: no $cli"; exit 1; }
tmp=$(mktemp -d /var/tmp/pmwal-readme-XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT
export PMWAL_STATUS_DIR=$tmp
fails=0 checks=0 runs=0
fail() { echo "FAIL $where: $*"; fails=$((fails + 1)); }

# Commands shown but never run here: a line pattern => why.
NOT_RUN=(
	'^kill  => stops a process of the example before it'
	'^exec 3<>/dev/tcp => talks to a raft cluster started by hand'
	'^P= => a variable for the command after it'
	'^for i in 1 2 3; do mkdir -p /var/tmp/rkv => starts a raft cluster (its binary and options checked)'
	'^printf .* [|] socat  => needs a kvstore server listening on a socket'
	'^build/release/examples/kvstore .* --socket .*&$ => a server left running (options checked)'
	'^build/release/examples/kvbench  => a benchmark against RocksDB, minutes (options checked)'
	'^build/release/examples/ship_(primary|standby)  => a primary and standby run by hand (options checked)'
	'^qemu-system => a virtual machine'
	'^bash scripts/(bench|test)[.]sh => the whole benchmark or CI, minutes'
	'^scripts/fuzz[.]sh => builds with clang and fuzzes for minutes (subcommands checked)'
	'^build/fuzz/ => a fuzzing build (folder checked)'
	'^apt-get install [.]/libpmwal => installs the Debian packages (CTest deb_package does, from a copy of the tree)'
	'^cc app[.]c [$][(]pkg-config => builds against an installed package (CTest deb_package and installed_consumer do)'
)
# Commands run as shown (build/release and /var/tmp moved to this test's
# build and a temporary folder), each within 20 s: a line pattern.
RUN=(
	'^mkdir -p /var/tmp/kv'
	'^printf "put size 42[\]ndump[\]n" [|] build/release/examples/kvstore /var/tmp/kv2'
)

# Options the docs show that a command accepts but its --help does not
# list: "command option => why". Each entry fails once --help lists the
# option (remove it then), so the list cannot go stale.
HELP_GAPS=(
)

# Folders under build/ that a script of the project makes (its code, not
# its comments).
made_by_scripts=$(cat "$src"/scripts/*.sh "$src"/bench/*.sh 2>/dev/null | grep -v '^[[:space:]]*#' |
	grep -oE 'build/[A-Za-z0-9_.-]+' | sed 's|build/||' | sort -u)
targets=$(cat "$src"/CMakeLists.txt "$src"/*/CMakeLists.txt 2>/dev/null |
	grep -oE 'add_(executable|library|custom_target)\(([A-Za-z0-9_]+)' | sed 's/.*(//' | sort -u)

nl=$'\n'
# Help texts and pages, once each.
declare -A helps texts
help_of() { # command words -> its --help text (cached)
	local k="$*"
	[ -n "${helps[$k]+x}" ] || helps[$k]=$(timeout 20 "$@" --help 2>&1)
	printf '%s' "${helps[$k]}"
}

check_build_path() { # build/NAME/REST, the page it is on
	local p=$1 page=$2 name rest
	p=${p%%[.,;:)]}
	name=${p#build/} name=${name%%/*}
	rest=${p#build/"$name"} rest=${rest#/}
	checks=$((checks + 1))
	case $name in
	*[\<\>*]* | *X) return ;; # a placeholder (build/ab-X)
	esac
	[ -n "${texts[$page]+x}" ] || texts[$page]=$(<"$page")
	local t=${texts[$page]} by_script=0 by_page=0 by_page_root=0 end='( |$|`)'
	[[ $nl$made_by_scripts$nl == *"$nl$name$nl"* ]] && by_script=1
	[[ $t =~ -B\ build/"$name"$end ]] && by_page=1
	[[ $t =~ -B\ build$end ]] && by_page_root=1
	if [ $by_script = 0 ] && [ $by_page = 0 ] && [ $by_page_root = 0 ]; then
		fail "build/$name: no script makes that folder (scripts/*.sh, bench/*.sh) and the page does not say how"
		return
	fi
	# Only a folder the page builds with -B build: the path lies under it.
	if [ $by_script = 0 ] && [ $by_page = 0 ]; then
		[[ $name == tests || $name == cli || $name == examples || $name == man || $name == wal ]] ||
			{ fail "build/$name: no script makes that folder (scripts/*.sh, bench/*.sh) and the page does not say how"; return; }
		rest=$name${rest:+/$rest}
	fi
	[ -n "$rest" ] || return
	case $rest in *[\<\>*]*) return ;; esac
	[ "$name" = release ] || [ "$name" = bench ] || [ "$name" = build ] || [ "$name" = tests ] ||
		[ -e "$build/$rest" ] || return # another build's folder: its name was checked
	[ -e "$build/$rest" ] && return
	case $rest in
	man/man[13]/*) fail "build/$name/$rest: no such page is built" ;;
	*) [[ $nl$targets$nl == *"$nl${rest##*/}$nl"* ]] ||
		fail "build/$name/$rest: not in the build and no target of that name" ;;
	esac
}

check_src_path() {
	local p=${1%%[.,;:)]}
	case $p in *[\<\>]* | *'$'*) return ;; esac
	checks=$((checks + 1))
	if [[ $p == *'*'* ]]; then
		compgen -G "$src/$p" >/dev/null || fail "$p: matches no file"
	else
		[ -e "$src/$p" ] || fail "$p: no such file or folder"
	fi
}

check_options() { # what, help text, the command line's words after the command
	local what=$1 help=$2 o
	shift 2
	for o in "$@"; do
		o=${o##[[(]}
		o=${o%%[]|)]*}
		case $o in
		--*) o=${o%%=*} ;;
		*) continue ;;
		esac
		[ "$o" = --help ] && continue
		checks=$((checks + 1))
		local listed=0 gap='' b='(^|[^a-z0-9-])' a='([^a-z0-9_-]|$)'
		[[ $help =~ $b"$o"$a ]] && listed=1
		for g in "${HELP_GAPS[@]}"; do
			[ "${g%% => *}" = "$what $o" ] && gap=${g#* => }
		done
		if [ -n "$gap" ]; then
			[ $listed = 0 ] || fail "$what $o: --help lists it now; remove it from HELP_GAPS"
			echo "known: $where: $what $o: $gap"
		elif [ $listed = 0 ]; then
			fail "$what has no option $o"
		fi
	done
}

check_pmwal() { # words after "pmwal"
	local sub=${1:-}
	shift || true
	checks=$((checks + 1))
	case $sub in
	'' | -*) return ;;
	[A-Z]*) return ;; # COMMAND placeholder
	esac
	local h
	h=$(help_of "$cli" "$sub")
	local top
	top=$(help_of "$cli")
	if ! [[ $nl$top =~ $nl\ +"$sub"\  ]]; then
		fail "pmwal has no subcommand $sub"
		return
	fi
	check_options "pmwal $sub" "$h" "$@"
}

check_example() { # build/X/examples/NAME, args
	local bin=$1 name
	shift
	name=$(basename "$bin")
	[ -x "$build/examples/$name" ] || return # not built here (checked as a path)
	check_options "examples/$name" "$(help_of "$build/examples/$name")" "$@"
}

check_script() { # scripts/X.sh, args
	local s=$1 a=${2:-}
	check_src_path "$s"
	case $a in '' | -* | [0-9]*) return ;; esac
	checks=$((checks + 1))
	grep -qE "^[[:space:]]*([a-z|]*\|)?$(re_esc "$a")(\|[a-z|]*)?\)" "$src/$s" || fail "$s has no subcommand $a"
}

check_cmake() {
	local w
	for w in "$@"; do
		case $w in
		-DPMWAL_*)
			w=${w#-D} w=${w%%=*}
			checks=$((checks + 1))
			grep -q "option($w " "$src/CMakeLists.txt" || fail "cmake has no option $w"
			;;
		esac
	done
}

check_man() { # man [SECTION] NAME: the page is built
	local n=${1:-}
	[[ $n == [0-9] ]] && n=${2:-}
	case $n in '' | -* | *[!a-z0-9_-]*) return ;; esac
	checks=$((checks + 1))
	compgen -G "$build/man/man[13]/$n.[13]" >/dev/null || fail "man $n: no such page is built"
}

# One shown command line (code or inline span): check what it names.
check_line() { # page, text
	local page=$1 line=$2 w words
	line=${line%%  #*}
	line=${line%% # *}
	line=${line#\$ }
	# shellcheck disable=SC2206 # words on purpose
	read -r -a words <<<"$line"
	for w in "${words[@]}"; do
		w=${w#[\`\'\"(]}
		case $w in
		-DPMWAL_*) check_cmake "$w" ;;
		build/*) check_build_path "$w" "$page" ;;
		scripts/*.sh | bench/*.sh | bench/*.py | examples/*.[ch] | examples/*.py | tests/*.sh | \
			tests/*.c | tests/*.py | wal/*.[ch] | pmr/*.[ch] | cli/*.[ch] | raft/*.[ch] | man/*.sh | \
			man/*.awk | docs/*.md | debian/*)
			check_src_path "$w" ;;
		esac
	done
	# Each command of a pipeline or list.
	local part rest cmd
	rest=$line
	while [ -n "$rest" ]; do
		part=${rest%%[|;&]*}
		[ "$part" = "$rest" ] && rest= || rest=${rest#*[|;&]}
		read -r -a words <<<"$part"
		[ ${#words[@]} -gt 0 ] || continue
		[ "${words[0]}" = "do" ] && words=("${words[@]:1}")
		[ ${#words[@]} -gt 0 ] || continue
		cmd=${words[0]}
		case $cmd in
		pmwal | build/*/cli/pmwal) check_pmwal "${words[@]:1}" ;;
		build/*/examples/*) check_example "${words[@]}" ;;
		bash) [[ ${words[1]:-} == scripts/* ]] && check_script "${words[@]:1}" ;;
		man) check_man "${words[@]:1}" ;;
		scripts/*.sh) check_script "${words[@]}" ;;
		esac
	done
}

is_not_run() { # text -> 0 and the reason on stdout when listed
	local e
	for e in "${NOT_RUN[@]}"; do
		local pat=${e%% => *}
		if [[ $1 =~ $pat ]]; then
			echo "${e#* => }"
			return 0
		fi
	done
	return 1
}
is_run() {
	local e
	for e in "${RUN[@]}"; do
		[[ $1 =~ $e ]] && return 0
	done
	return 1
}
run_shown() { # the line as shown, moved to this build and $tmp
	local l=$1 out rc
	l=${l%%  #*}
	l=${l//build\/release\//$build/}
	l=${l//\/var\/tmp\//$tmp/}
	runs=$((runs + 1))
	out=$(ASAN_OPTIONS=detect_leaks=0 timeout 20 bash -c "$l" 2>&1)
	rc=$?
	[ $rc -eq 0 ] || fail "exit $rc: $l: $(head -3 <<<"$out")"
	echo "ran: $where: $1"
}
re_esc() { sed 's/[][\.*^$(){}+?|/]/\\&/g' <<<"$1"; }

# Records "page<TAB>line<TAB>kind<TAB>text", kind: sh (a ```sh line), plain
# (a ``` line), c (README's ```c block, whole, as one record per line),
# inline (a `span` in prose).
extract() {
	awk -v OFS='\t' '
	FNR == 1 { inb = 0; skipnext = 0 }
	/<!-- *not-run *-->/ { skipnext = 1; next }
	/^```/ {
		if (!inb) {
			inb = 1; lang = substr($0, 4); skip = skipnext; skipnext = 0
			if (skip) print FILENAME, FNR, "skipped", "a block marked not-run"
		} else
			inb = 0
		next
	}
	inb {
		if (skip) next
		if (lang == "sh" || lang == "bash") print FILENAME, FNR, "sh", $0
		else if (lang == "") print FILENAME, FNR, "plain", $0
		else if (lang == "c") print FILENAME, FNR, "c", $0
		next
	}
	/^[ \t]*$/ { skipnext = 0 }
	{
		s = $0
		while (match(s, /`[^`]+`/)) {
			print FILENAME, FNR, "inline", substr(s, RSTART + 1, RLENGTH - 2)
			s = substr(s, RSTART + RLENGTH)
		}
	}' "$@"
}

cd "$src" || exit 1
readme_c=$tmp/readme.c
: >"$readme_c"
synopsis=()
while IFS=$'\t' read -r page lno kind text; do
	where=$page:$lno
	case $kind in
	skipped) echo "not run: $where: $text" ;;
	c) [ "$page" = README.md ] && printf '%s\n' "$text" >>"$readme_c" ;;
	inline) check_line "$page" "$text" ;;
	plain)
		case $text in
		pmwal\ * | build/*) check_line "$page" "$text" ;;
		esac
		[ "$page" = README.md ] && [[ $text == pmwal\ * ]] && synopsis+=("$text")
		;;
	sh)
		[[ $text =~ ^[[:space:]]*$ ]] && continue
		if is_run "$text"; then
			check_line "$page" "$text"
			run_shown "$text"
			continue
		fi
		if reason=$(is_not_run "$text"); then
			echo "not run: $where: $text  ($reason)"
			check_line "$page" "$text"
			continue
		fi
		case $text in
		pmwal\ * | build/* | bash\ scripts/* | scripts/* | printf\ *\|\ build/*) check_line "$page" "$text" ;;
		*) fail "a command neither checked nor listed in NOT_RUN: $text" ;;
		esac
		;;
	esac
done < <(extract README.md docs/*.md)

# ---- the cheap ones, run ------------------------------------------------

# README's example program, compiled against this build's library (with its
# sanitizer, where it has one) and run twice: create, then reopen.
cc=$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")
flags=
grep -q '^PMWAL_SANITIZE:BOOL=ON' "$build/CMakeCache.txt" && flags="-fsanitize=address,undefined"
grep -q '^PMWAL_TSAN:BOOL=ON' "$build/CMakeCache.txt" && flags="-fsanitize=thread"
where=README.md:example
if grep -q 'int main' "$readme_c"; then
	sed -i "s|\"/var/tmp/app.wal\"|\"$tmp/app.wal\"|" "$readme_c"
	runs=$((runs + 1))
	# shellcheck disable=SC2086 # flags are words
	if ! "${cc:-cc}" -std=c11 -Wall -Werror $flags -I"$src/wal" -o "$tmp/readme" "$readme_c" \
		-L"$build/wal" -Wl,-rpath,"$build/wal" -lpmwal 2>"$tmp/cc.err"; then
		fail "README's example does not compile: $(head -5 "$tmp/cc.err")"
	else
		echo "ran: $where: README's program, compiled with ${cc:-cc} $flags"
		for round in create reopen; do
			if ! out=$(ASAN_OPTIONS=detect_leaks=0 timeout 20 "$tmp/readme" 2>&1); then
				# A file system that refuses O_DIRECT or io_uring: a skip.
				if grep -q 'refuses a needed feature' <<<"$out"; then
					echo "SKIP: README's example: $out"
					out='1: put colour blue'
				else
					fail "README's example ($round) failed: $out"
				fi
				break
			fi
			grep -q 'durable at LSN' <<<"$out" || fail "README's example ($round) said: $out"
		done
		grep -q '^1: put colour blue' <<<"$out" || fail "README's example did not replay its record: $out"
	fi
else
	fail "README.md shows no example program (\`\`\`c with main)"
fi

# pmwal(3)'s example (the opening comment of pmwal.h), the same way.
where=wal/pmwal.h:example
awk '/^ \* Example:/ { on = 1; next } on && /^ \* See also:/ { exit }
	on { sub(/^ \*\t?/, ""); print }' "$src/wal/pmwal.h" |
	sed "s|\"/var/tmp/app.wal\"|\"$tmp/man.wal\"|" >"$tmp/man.c"
if grep -q 'int main' "$tmp/man.c"; then
	runs=$((runs + 1))
	# shellcheck disable=SC2086 # flags are words
	if ! "${cc:-cc}" -std=c11 -Wall -Werror $flags -I"$src/wal" -o "$tmp/man" "$tmp/man.c" \
		-L"$build/wal" -Wl,-rpath,"$build/wal" -lpmwal 2>"$tmp/cc.err"; then
		fail "pmwal(3)'s example does not compile: $(head -5 "$tmp/cc.err")"
	elif ! out=$(ASAN_OPTIONS=detect_leaks=0 timeout 20 "$tmp/man" 2>&1) &&
		! grep -q 'refuses a needed feature' <<<"$out"; then
		fail "pmwal(3)'s example failed: $out"
	else
		echo "ran: $where: pmwal(3)'s program"
	fi
else
	fail "pmwal.h's opening comment shows no example program (Example: with main)"
fi

# README's pmwal synopsis on a small log: placeholders filled in, optional
# parts left out; the long or interactive ones only checked above.
where=README.md:synopsis
log=$tmp/syn.wal
ran_create=0
for line in "${synopsis[@]}"; do
	line=${line%%#*}
	line=$(sed -E 's/\[[^][]*(\[[^][]*\][^][]*)*\]//g; s/ +$//' <<<"$line")
	read -r -a w <<<"$line"
	sub=${w[1]:-}
	case $sub in
	create | append | dump | verify | recover | info | release | probe) ;;
	*) continue ;;
	esac
	case "$line" in *--wait-lock* | *--break-lock*) continue ;; esac
	args=()
	for a in "${w[@]:2}"; do
		case $a in
		TARGET) args+=("$log") ;;
		BYTES) args+=(1M) ;;
		LSN) args+=(2) ;;
		N) args+=(16) ;;
		'<' | records) ;;
		*) args+=("$a") ;;
		esac
	done
	[ "$sub" = create ] && ran_create=1
	[ "$ran_create" = 1 ] || continue
	runs=$((runs + 1))
	# --buffered where the file system refuses O_DIRECT: the first run says.
	out=$(printf 'one\ntwo\nthree\n' | ASAN_OPTIONS=detect_leaks=0 timeout 20 "$cli" "$sub" "${args[@]}" ${buffered:-} 2>&1)
	rc=$?
	if [ $rc -ne 0 ] && [ -z "${buffered:-}" ] && grep -qi 'O_DIRECT\|--buffered' <<<"$out"; then
		buffered=--buffered
		out=$(printf 'one\ntwo\nthree\n' | ASAN_OPTIONS=detect_leaks=0 timeout 20 "$cli" "$sub" "${args[@]}" $buffered 2>&1)
		rc=$?
	fi
	[ $rc -eq 0 ] || fail "pmwal $sub ${args[*]} ${buffered:-}: exit $rc: $(head -3 <<<"$out")"
	echo "ran: $where: pmwal $sub ${args[*]} ${buffered:-}"
done
[ "$ran_create" = 1 ] || fail "README's synopsis has no pmwal create line"

echo "readme_commands: $checks checked, $runs run, $fails failed"
[ "$fails" -eq 0 ]
