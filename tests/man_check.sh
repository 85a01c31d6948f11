#!/usr/bin/env bash
# The installed manual: every page of man/ (built into BUILD/man) parses for
# the whatis database (lexgrog), renders without a warning (groff -ww), and
# every public function, struct and enum of pmwal.h and every subcommand has
# its page.
set -uo pipefail
build=$1 src=$2
command -v lexgrog >/dev/null && command -v groff >/dev/null || {
	echo "man_check: lexgrog or groff missing (man-db, groff-base): skipped"; exit 77; }
fails=0 pages=0
for p in "$build"/man/man1/*.1 "$build"/man/man3/*.3; do
	pages=$((pages + 1))
	lexgrog "$p" >/dev/null 2>&1 || { echo "FAIL lexgrog: $p"; lexgrog "$p"; fails=$((fails + 1)); }
	w=$(groff -man -ww -z "$p" 2>&1)
	[ -z "$w" ] || { echo "FAIL groff warnings: $p"; echo "$w"; fails=$((fails + 1)); }
done
for f in $(grep -oE '\bpmwal_[a-z0-9_]+\(' "$src/wal/pmwal.h" | tr -d '(' | sort -u); do
	grep -qE "^[a-z].*[ *]$f\(|\(\*$f\)" "$src/wal/pmwal.h" || continue # only declarations
	[ -f "$build/man/man3/$f.3" ] || { echo "FAIL no page for $f"; fails=$((fails + 1)); }
done
for t in $(grep -oE '^(struct|enum) pmwal_[a-z0-9_]+ \{' "$src/wal/pmwal.h" | awk '{print $2}'); do
	[ -f "$build/man/man3/$t.3" ] || { echo "FAIL no page for $t"; fails=$((fails + 1)); }
done
for c in create append dump tail verify recover info release crashtest probe bench report; do
	[ -f "$build/man/man1/pmwal-$c.1" ] || { echo "FAIL no page for pmwal $c"; fails=$((fails + 1)); }
done
echo "man_check: $pages pages, $fails failed"
[ "$fails" -eq 0 ]
