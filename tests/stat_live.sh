#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# stat_live.sh PMWAL - `pmwal stat` beside a live writer (a `pmwal append`
# fed through a FIFO): the counters it prints once, as JSON, as a line of
# rates per interval, and as OpenMetrics text that Prometheus's own parser
# (Debian's python3-prometheus-client) accepts; then with the writer gone;
# and its usage errors. Every wait is bounded.
set -uo pipefail
pmwal=${1:?usage: stat_live.sh PMWAL}
py=/usr/bin/python3
for need in jq "$py"; do
	command -v "$need" >/dev/null || { echo "SKIP: $need missing (scripts/deps.sh test)"; exit 77; }
done
"$py" -c 'import prometheus_client.openmetrics.parser' 2>/dev/null ||
	{ echo "SKIP: python3-prometheus-client missing (scripts/deps.sh test)"; exit 77; }
d=$(mktemp -d /dev/shm/pmwal-stat.XXXXXX) || exit 1
wpid=
cleanup() {
	exec 3>&- 2>/dev/null
	[ -n "$wpid" ] && kill "$wpid" 2>/dev/null
	rm -rf "$d"
}
trap cleanup EXIT
export PMWAL_STATUS_DIR=$d/status
mkdir "$d/status"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
t=pmem:$d/log

"$pmwal" create "$t" --size 16m >/dev/null || { echo "FAIL: create"; exit 1; }
mkfifo "$d/in"
"$pmwal" append "$t" <"$d/in" >"$d/append.out" 2>&1 &
wpid=$!
exec 3>"$d/in"
bytes=0
for i in $(seq 1 300); do
	line="record $i"
	bytes=$((bytes + ${#line}))
	echo "$line" >&3
done

# Until all 300 are durable (the writer appends as lines arrive).
n=0
for _ in $(seq 1 400); do
	n=$("$pmwal" stat "$t" --json 2>/dev/null | jq -r .durable_lsn)
	[ "$n" = 300 ] && break
	sleep 0.05
done
[ "$n" = 300 ] || fail "durable_lsn never reached 300 (last: $n)"

"$pmwal" stat "$t" --json >"$d/s.json" || fail "stat --json exit $?"
jq -se --argjson pid "$wpid" --argjson bytes "$bytes" 'length == 1 and (.[0] |
	.writer_pid == $pid and .appends == 300 and .append_bytes == $bytes and
	.group_records == 300 and .groups >= 1 and .groups <= 300 and .errors == 0 and
	.head_lsn == 1 and .durable_lsn == 300 and .used_blocks >= 1 and
	(.latency_log2_ns | length) == 32 and
	([.latency_log2_ns[]] | add) == .latency_samples and .latency_samples >= 1)' \
	"$d/s.json" >/dev/null || fail "stat --json: $(cat "$d/s.json")"

"$pmwal" stat "$t" >"$d/s.txt" || fail "stat exit $?"
grep -q "writer         pid $wpid, epoch" "$d/s.txt" || fail "text names no writer: $(cat "$d/s.txt")"
grep -q "appends        300 records, $bytes bytes" "$d/s.txt" || fail "text counts: $(cat "$d/s.txt")"

# A line of rates per interval, three of them, while records keep coming.
(for i in $(seq 301 400); do echo "record $i"; sleep 0.005; done) >&3 &
feeder=$!
timeout 20 "$pmwal" stat "$t" --follow 0.2 --count 3 >"$d/f.txt" || fail "stat --follow exit $?"
wait "$feeder"
[ "$(wc -l <"$d/f.txt")" = 4 ] || fail "--follow --count 3: not a header and 3 lines: $(cat "$d/f.txt")"
head -1 "$d/f.txt" | grep -q "appends/s" || fail "--follow header: $(head -1 "$d/f.txt")"
timeout 20 "$pmwal" stat "$t" --follow 0.1 --count 2 --json >"$d/f.json" || fail "--follow --json exit $?"
[ "$(jq -s 'length' "$d/f.json")" = 2 ] || fail "--follow --json: not 2 objects"
jq -se 'all(.[]; has("appends_per_s") and has("durable_lsn"))' "$d/f.json" >/dev/null ||
	fail "--follow --json objects: $(cat "$d/f.json")"

# Its reader gone while SIGPIPE is ignored (as systemd runs services):
# --follow stops with exit 1 instead of printing into a closed pipe forever.
bash -c "trap '' PIPE; timeout 10 '$pmwal' stat '$t' --follow 0.05 | head -1 >/dev/null
	exit \${PIPESTATUS[0]}" 2>"$d/pipe.err"
rc=$?
[ $rc = 1 ] || fail "--follow into a closed pipe, SIGPIPE ignored: exit $rc, not 1"
grep -q "Broken pipe" "$d/pipe.err" || fail "--follow into a closed pipe: $(cat "$d/pipe.err")"

# OpenMetrics, as a scraper reads it.
"$pmwal" stat "$t" --openmetrics >"$d/om.txt" || fail "--openmetrics exit $?"
"$py" - "$d/om.txt" "$wpid" <<'PY' || fail "OpenMetrics: $(head -5 "$d/om.txt")"
import sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families
fams = {f.name: f for f in text_string_to_metric_families(open(sys.argv[1]).read())}
def val(name, suffix=""):
    return [s.value for s in fams[name].samples if s.name == name + suffix][0]
assert fams["pmwal_appends"].type == "counter", fams["pmwal_appends"].type
assert val("pmwal_appends", "_total") >= 300, val("pmwal_appends", "_total")
assert val("pmwal_writer_open") == 1
assert fams["pmwal_append_bytes"].unit == "bytes"
h = fams["pmwal_group_write_seconds"]
assert h.type == "histogram"
inf = [s.value for s in h.samples if s.labels.get("le") == "+Inf"][0]
count = [s.value for s in h.samples if s.name.endswith("_count")][0]
assert inf == count >= 1, (inf, count)
assert all(s.labels["log"].startswith("pmem:") for f in fams.values() for s in f.samples)
PY

# A page its writer's user garbled (histogram buckets that overflow when
# added up): still OpenMetrics a parser takes, buckets never falling and the
# count their +Inf bucket. The writer publishes no more groups from here.
page=$(ls "$d"/status/pmwal-*.status)
"$py" - "$page" <<'PY' || fail "garbling $page"
import struct, sys
with open(sys.argv[1], "r+b") as f:
    f.seek(256 + 8 * 8)  # struct wal_stats's latency_ns[], after 8 counters
    f.write(struct.pack("<3Q", 2**63, 2**63, 5))
PY
"$pmwal" stat "$t" --openmetrics >"$d/g.txt" || fail "--openmetrics, a garbled page: exit $?"
"$py" - "$d/g.txt" <<'PY' || fail "OpenMetrics, a garbled page: $(grep _bucket "$d/g.txt" | head -4)"
import sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families
fams = {f.name: f for f in text_string_to_metric_families(open(sys.argv[1]).read())}
h = fams["pmwal_group_write_seconds"]
inf = [s.value for s in h.samples if s.labels.get("le") == "+Inf"][0]
count = [s.value for s in h.samples if s.name.endswith("_count")][0]
assert inf == count >= 2**63, (inf, count)
PY

# A reader whose status directory is another: the writer is named as
# holding the log, not "none".
mkdir "$d/other"
PMWAL_STATUS_DIR=$d/other "$pmwal" stat "$t" >/dev/null 2>"$d/other.err" || fail "stat, other dir: exit $?"
grep -q "a writer (pid $wpid) holds the log, but its status page is not" "$d/other.err" ||
	fail "stat with another PMWAL_STATUS_DIR: $(cat "$d/other.err")"

# The writer closed: nobody named, no counters, the log's end.
exec 3>&-
wait "$wpid" || fail "append exit $?: $(cat "$d/append.out")"
wpid=
"$pmwal" stat "$t" --json >"$d/s2.json" || fail "stat after close exit $?"
jq -se 'length == 1 and (.[0] | .writer_pid == 0 and .appends == 0 and .durable_lsn == 400)' "$d/s2.json" >/dev/null ||
	fail "after close: $(cat "$d/s2.json")"
"$pmwal" stat "$t" >"$d/s2.txt"
grep -q "writer         none: no counters" "$d/s2.txt" || fail "text after close: $(cat "$d/s2.txt")"
grep -q "appends" "$d/s2.txt" && fail "text after close shows counters: $(cat "$d/s2.txt")"

# Usage errors name what is wrong (exit 2).
expect_usage() { # what, args...
	local what=$1 rc
	shift
	"$pmwal" stat "$@" >"$d/u.out" 2>"$d/u.err"
	rc=$?
	[ $rc = 2 ] || fail "$what: exit $rc, not 2"
	grep -q -- "$what" "$d/u.err" || fail "$what: not named: $(cat "$d/u.err")"
}
expect_usage "--follow" "$t" --follow 0
expect_usage "--follow" "$t" --follow abc
expect_usage "--count" "$t" --follow 1 --count 0
expect_usage "needs --follow" "$t" --count 3
expect_usage "--openmetrics" "$t" --openmetrics --json
expect_usage "missing TARGET"
# A name that is not UTF-8 (a file name of another encoding): JSON and
# OpenMetrics, which are UTF-8, carry it with U+FFFD for each byte they
# cannot, never as nothing at all; a --json error is still an object.
bad=$d/$'log\xff'
"$pmwal" create "$bad" --size 1m >/dev/null || fail "create $bad"
"$pmwal" stat "$bad" --json >"$d/b.json" || fail "stat --json, a name not UTF-8: exit $?"
jq -se 'length == 1 and (.[0].target | endswith("/log\ufffd"))' "$d/b.json" >/dev/null ||
	fail "stat --json, a name not UTF-8: $(cat "$d/b.json")"
timeout 20 "$pmwal" stat "$bad" --json --follow 0.05 --count 1 >"$d/bf.json" ||
	fail "stat --json --follow, a name not UTF-8: exit $?"
jq -se 'length == 1 and (.[0].target | endswith("/log\ufffd"))' "$d/bf.json" >/dev/null ||
	fail "stat --json --follow, a name not UTF-8: $(cat "$d/bf.json")"
"$pmwal" stat "$bad" --openmetrics >"$d/b.om" || fail "--openmetrics, a name not UTF-8: exit $?"
"$py" - "$d/b.om" <<'PY' || fail "OpenMetrics, a name not UTF-8: $(head -3 "$d/b.om")"
import sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families
text = open(sys.argv[1], "rb").read().decode("utf-8")
fams = list(text_string_to_metric_families(text))
assert all(s.labels["log"].endswith("/log\ufffd") for f in fams for s in f.samples)
PY
"$pmwal" stat "${bad}x" --json >"$d/be.json" 2>/dev/null
[ $? = 2 ] || fail "stat --json of a missing name not UTF-8: not exit 2"
jq -se 'length == 1 and .[0].exit == 2 and (.[0].target | endswith("/log\ufffdx")) and
	(.[0].error | test("no such file"))' \
	"$d/be.json" >/dev/null || fail "--json error, a name not UTF-8: $(cat "$d/be.json")"
[ $fails = 0 ] && echo "stat_live: all passed" || echo "stat_live: $fails failed"
[ $fails = 0 ]
