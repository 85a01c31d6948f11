#!/usr/bin/env bash
# The section-1 manual: every page (pmwal(1), pmwal-CMD(1)) has a SYNOPSIS,
# OPTIONS and EXIT STATUS, renders without a warning (groff -ww), and each
# command's page lists the options its --help lists, no more and no fewer.
# man1_check.sh PMWAL MAN1_DIR
set -uo pipefail
pmwal=$1 man1=$2
command -v groff >/dev/null || { echo "man1_check: groff missing (groff-base): skipped"; exit 77; }
fails=0 pages=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
cmds=$("$pmwal" --help | awk '/^commands:/ {on = 1; next} on && /^  [a-z]/ {print $1} on && /^$/ {on = 0}')
[ -n "$cmds" ] || fail "no commands in pmwal --help"
for p in "$man1"/pmwal.1 $(for c in $cmds; do echo "$man1/pmwal-$c.1"; done); do
	[ -f "$p" ] || { fail "no page $p"; continue; }
	pages=$((pages + 1))
	for s in NAME SYNOPSIS DESCRIPTION OPTIONS "EXIT STATUS"; do
		grep -qx "\\.SH \"\\{0,1\\}$s\"\\{0,1\\}" "$p" || fail "$p: no $s section"
	done
	w=$(groff -man -ww -z "$p" 2>&1)
	[ -z "$w" ] || fail "$p: groff warnings: $w"
done
for c in $cmds; do
	p=$man1/pmwal-$c.1
	[ -f "$p" ] || continue
	# Options as the page renders them (\- is -), and as --help lists them.
	page=$(awk '/^\.SH OPTIONS/ {on = 1; next} /^\.SH/ {on = 0} on && prev == ".TP" {print} {prev = $0}' "$p" |
		sed 's/\\-/-/g' | grep -oE -- '--[a-z0-9_-]+' | sort)
	help=$("$pmwal" "$c" --help | awk '/^options:$/ {on = 1; next} /^$/ {on = 0} on' |
		grep -oE '^  (-[a-zA-Z], |    )--[a-z0-9_-]+' | grep -oE -- '--[a-z0-9_-]+' | sort)
	[ -n "$help" ] || fail "pmwal $c --help lists no options"
	[ "$page" = "$help" ] || fail "pmwal-$c.1 lists $(echo $page); --help $(echo $help)"
	grep -A1 -x '\.TP' "$p" | grep -qx '\.B 0' || fail "pmwal-$c.1: no exit status 0"
done
echo "man1_check: $pages pages, $fails failed"
[ "$fails" -eq 0 ]
