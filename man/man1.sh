#!/usr/bin/env bash
# man1.sh - pmwal(1) and one page per subcommand (pmwal-create(1), ...), from
# the option table each command is built from (cli/opttab.h), as the built
# tool prints it (pmwal --dump-options: tab-separated lines), so that the
# manual says what the tool does: SYNOPSIS, DESCRIPTION, OPTIONS and EXIT
# STATUS of every command.
# Run by CMake (man/CMakeLists.txt): man1.sh PMWAL OUTDIR VERSION DATE
set -euo pipefail
pmwal=$1 out=$2 version=$3 date=$4
mkdir -p "$out"
help=$("$pmwal" --help)
table=$("$pmwal" --dump-options)
cmds=$(awk -F'\t' '$1 == "command" {print $2}' <<<"$table")
[ -n "$cmds" ] || { echo "man1.sh: no commands in pmwal --dump-options" >&2; exit 1; }
# roff text from plain text: backslashes escaped, a leading . or ' made literal,
# and hyphens of options (--size) as \- so that they copy as typed.
esc() { sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/" -e 's/-/\\-/g'; }
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
		awk -F'\t' -v c="$c" '$1 == "command" && $2 == c {print $3}' <<<"$table" | esc
	done
	echo ".SH OPTIONS"
	echo ".TP"
	echo ".B \\-\\-help"
	echo "the commands; \\fBpmwal\\fP \\fICOMMAND\\fP \\fB\\-\\-help\\fP: a command's options"
	echo ".TP"
	echo ".B \\-\\-version"
	echo "the version of pmwal and of its on-disk format"
	echo ".SH EXIT STATUS"
	echo "Each command's page lists its own: 0 success, 1 failure, 2 bad usage or a"
	echo "target that cannot be read, 3 a corrupt log."
	echo ".SH SEE ALSO"
	echo ".BR pmwal (3)"
} >"$out/pmwal.1"
for c in $cmds; do
	rows=$(awk -F'\t' -v c="$c" '$2 == c' <<<"$table")
	summary=$(awk -F'\t' '$1 == "command" {print $3}' <<<"$rows")
	synopsis=$(awk -F'\t' '$1 == "command" {print $4}' <<<"$rows")
	desc=$(awk -F'\t' '$1 == "description" {print $3}' <<<"$rows")
	{
		echo ".TH PMWAL\\-${c^^} 1 \"$date\" \"pmwal $version\" \"pmwal manual\""
		echo ".SH NAME"
		echo "pmwal\\-$c \\- $(esc <<<"$summary")"
		echo ".SH SYNOPSIS"
		echo ".B pmwal $c"
		esc <<<"$synopsis"
		echo ".SH DESCRIPTION"
		# A description with indented lines (a list of modes) keeps its lines.
		if grep -q '^ ' <<<"$desc"; then
			echo ".nf"
			esc <<<"$desc"
			echo ".fi"
		else
			esc <<<"$desc"
		fi
		echo ".SH OPTIONS"
		awk -F'\t' '$1 == "option" {
			label = ($4 != "" ? "\\fB\\-" $4 "\\fP, " : "") "\\fB\\-\\-" $3 "\\fP"
			if ($5 != "")
				label = label " \\fI" $5 "\\fP"
			print ".TP"
			print label
			print $6
		}' <<<"$rows" | sed -e '/^\.TP$/b' -e '/^\\fB/b' -e 's/\\/\\e/g' -e 's/-/\\-/g' \
			-e "s/^\\([.']\\)/\\\\\\&\\1/"
		echo ".SH EXIT STATUS"
		awk -F'\t' '$1 == "exit" {
			if ($3 != "") {
				if (n++)
					print ""
				printf ".TP\n.B %s\n%s", $3, $4
			} else {
				sub(/^[ \t]+/, "", $4)
				printf " %s", $4
			}
		} END { if (n) print "" }' <<<"$rows" |
			sed -e '/^\.[TB]/b' -e 's/\\/\\e/g' -e 's/-/\\-/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"
		echo ".SH SEE ALSO"
		echo ".BR pmwal (1),"
		echo ".BR pmwal (3)"
	} >"$out/pmwal-$c.1"
done
