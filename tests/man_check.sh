#!/usr/bin/env bash
# The installed manual: every page of man/ (built into BUILD/man) parses for
# the whatis database (lexgrog), renders without a warning (groff -ww, and
# man -l as a user reads it), and has the sections a reader looks for:
# every function of pmwal.h a page with NAME, SYNOPSIS, DESCRIPTION, RETURN
# VALUE, ERRORS and SEE ALSO; every struct, enum, callback type and opaque
# handle a page with NAME, SYNOPSIS and DESCRIPTION, each field explained;
# NAME lines whole, not cut. The installed header names man pages, never
# source files or docs that are not installed. Every subcommand of pmwal(1)
# has its page.
set -uo pipefail
build=$1 src=$2
command -v lexgrog >/dev/null && command -v groff >/dev/null || {
	echo "man_check: lexgrog or groff missing (man-db, groff-base): skipped"; exit 77; }
hdr=$src/wal/pmwal.h m3=$build/man/man3
fails=0 pages=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
# The sections of a page, one a line.
sections() { sed -n 's/^\.SH "\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$1"; }
for p in "$build"/man/man1/*.1 "$m3"/*.3; do
	pages=$((pages + 1))
	lexgrog "$p" >/dev/null 2>&1 || { fail "lexgrog: $p"; lexgrog "$p"; }
	w=$(groff -man -ww -z "$p" 2>&1)
	[ -z "$w" ] || { fail "groff warnings: $p"; echo "$w"; }
	if command -v man >/dev/null; then
		w=$(LC_ALL=C MANWIDTH=80 man -l "$p" 2>&1 >/dev/null)
		[ -z "$w" ] || { fail "man -l warnings: $p"; echo "$w"; }
	fi
done
[ -f "$m3/pmwal.3" ] || fail "no page pmwal(3)"
# Section 3: what the header declares, and what each kind of page must hold.
funcs=$(grep -oE '^[a-z][a-z0-9_ *]*[ *]pmwal_[a-z0-9_]+\(' "$hdr" | sed -E 's/.*[ *](pmwal_[a-z0-9_]+)\($/\1/' | sort -u)
types=$( { grep -oE '^(struct|enum) pmwal_[a-z0-9_]+ *(\{|;)' "$hdr" | awk '{print $2}' | tr -d '{;'
	grep -oE '^typedef .*\(\*pmwal_[a-z0-9_]+\)' "$hdr" | grep -oE 'pmwal_[a-z0-9_]+'; } | sort -u)
[ "$(echo "$funcs" | wc -w)" -ge 30 ] || fail "only $(echo "$funcs" | wc -w) functions found in $hdr"
need() { # page, sections...
	local page=$1 s have
	shift
	[ -f "$m3/$page.3" ] || { fail "no page for $page"; return; }
	have=$(sections "$m3/$page.3")
	for s in "$@"; do
		grep -qxF "$s" <<<"$have" || fail "$page(3) has no $s section"
	done
}
for f in $funcs; do
	need "$f" NAME SYNOPSIS DESCRIPTION "RETURN VALUE" ERRORS "SEE ALSO"
done
for t in $types; do
	need "$t" NAME SYNOPSIS DESCRIPTION "SEE ALSO"
done
need pmwal NAME SYNOPSIS DESCRIPTION EXAMPLES "SEE ALSO"
for p in "$m3"/*.3; do
	# NAME: "name \- summary", whole: not cut with "...", parentheses
	# balanced, not ending on a word that leads somewhere, short enough to
	# be one line of whatis.
	line=$(sed -n '/^\.SH NAME/{n;p;q}' "$p")
	sum=${line#* \\- }
	open=${sum//[^(]/} close=${sum//[^)]/}
	case $sum in
	"$line" | "" | *... | *,) fail "NAME of $(basename "$p"): \"$line\"" ;;
	*) if [ ${#open} -ne ${#close} ] || [ ${#sum} -gt 80 ] ||
		grep -qiE ' (a|an|the|of|to|and|or|with|for|in|at|by|from|if|when|its|as)$' <<<"$sum"; then
		fail "NAME of $(basename "$p") cut or too long (80 at most): \"$line\""
	fi ;;
	esac
	grep -q '(undocumented)' "$p" && fail "$(basename "$p"): a field or value without a comment in pmwal.h"
	# Every page named in SEE ALSO exists (section 3 here, section 1 from man1.sh).
	for r in $(sed -n '/^\.SH SEE ALSO/,/^\.SH/s/^\.BR \([a-z0-9_-]*\) (\([13]\)).*/\1.\2/p' "$p"); do
		[ -f "$build/man/man${r##*.}/$r" ] || fail "$(basename "$p") refers to $r, which has no page"
	done
done
# The installed header stands alone: no source files, no docs folder.
if grep -nE '(wal|pmr|cli|bench|tests|docs)/[A-Za-z0-9_.-]+|\b[a-z_]+\.(c|md)\b' "$hdr"; then
	fail "pmwal.h names files that are not installed (name man pages: pmwal_open(3))"
fi
for c in create append dump tail verify recover info release crashtest probe bench report; do
	[ -f "$build/man/man1/pmwal-$c.1" ] || fail "no page for pmwal $c"
done
echo "man_check: $pages pages, $fails failed"
[ "$fails" -eq 0 ]
