#!/usr/bin/env bash
# man1.sh - pmwal(1) and one page per subcommand (pmwal-create(1), ...), from
# the built tool's own --help, so that the manual says what the tool does.
# Run by CMake (man/CMakeLists.txt): man1.sh PMWAL OUTDIR VERSION DATE
set -euo pipefail
pmwal=$1 out=$2 version=$3 date=$4
mkdir -p "$out"
esc() { sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"; }
help=$("$pmwal" --help)
cmds=$(awk '/^commands:/ {on = 1; next} on && /^  [a-z]/ {print $1} on && /^$/ {on = 0}' <<<"$help")
[ -n "$cmds" ] || { echo "man1.sh: no commands in pmwal --help" >&2; exit 1; }
{
	echo ".TH PMWAL 1 \"$date\" \"pmwal $version\" \"pmwal manual\""
	echo ".SH NAME"
	echo "pmwal \\- create, write, read, check and benchmark pmwal write-ahead logs"
	echo ".SH SYNOPSIS"
	echo ".B pmwal"
	echo ".I COMMAND"
	echo "[\\fIOPTIONS\\fP] [\\fITARGET\\fP]"
	echo ".SH DESCRIPTION"
	echo ".nf"
	esc <<<"$help"
	echo ".fi"
	echo ".SH COMMANDS"
	for c in $cmds; do
		echo ".TP"
		echo ".BR pmwal\\-$c (1)"
		awk -v c="$c" '$1 == c {$1 = ""; sub(/^ +/, ""); print}' <<<"$help" | esc
	done
	echo ".SH SEE ALSO"
	echo ".BR pmwal (3)"
} >"$out/pmwal.1"
for c in $cmds; do
	text=$("$pmwal" "$c" --help 2>&1) || true
	what=$(awk -v c="$c" '$1 == c {$1 = ""; sub(/^ +/, ""); print}' <<<"$help")
	{
		echo ".TH PMWAL\\-${c^^} 1 \"$date\" \"pmwal $version\" \"pmwal manual\""
		echo ".SH NAME"
		echo "pmwal\\-$c \\- $(esc <<<"$what")"
		echo ".SH SYNOPSIS"
		echo ".B pmwal $c"
		echo "[\\fIOPTIONS\\fP]"
		echo ".SH DESCRIPTION"
		echo ".nf"
		esc <<<"$text"
		echo ".fi"
		echo ".SH SEE ALSO"
		echo ".BR pmwal (1),"
		echo ".BR pmwal (3)"
	} >"$out/pmwal-$c.1"
done
