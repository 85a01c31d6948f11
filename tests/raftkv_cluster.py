#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# raftkv_cluster.py - the replicated example store under SIGKILL (issue 17):
# three raftkv nodes in three processes on 127.0.0.1, their logs on pmwal; a
# client puts a new key at a time to the leader and records which puts were
# acknowledged (committed and applied); meanwhile nodes, leader or not, are
# SIGKILLed at random and restarted. At the end every node must hold every
# acknowledged put at the same index with the same value, the nodes must
# agree on everything they hold, and no put may have been applied twice.
# Snapshots are taken every 64 entries and keep 16 behind them, so a node
# down for a fraction of a second comes back behind the leader's log and is
# sent a snapshot; at the end a follower is also killed while 200 puts go
# by, so at least one install happens however slow the machine is. The test
# counts installs and wants at least one.
#
#   raftkv_cluster.py RAFTKV [SECONDS] [SEED]
#   (RAFTKV_ARGS in the environment: more options for every node)
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

raftkv = sys.argv[1]
seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 20
rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
base = tempfile.mkdtemp(prefix="pmwal-raftkv-", dir="/var/tmp")
os.environ["PMWAL_STATUS_DIR"] = base
# Below the kernel's ephemeral range (32768..): a raft connection's own end
# can never be sitting on a port a restarted node wants to listen on.
port0 = 20000 + (os.getpid() * 7) % 10000
peers = ",".join("127.0.0.1:%d" % (port0 + i) for i in range(3))
procs = [None, None, None]
lock = threading.Lock()
kills = 0


def start(i):
    d = os.path.join(base, str(i + 1))
    os.makedirs(d, exist_ok=True)
    err = open(os.path.join(base, "%d.err" % (i + 1)), "a")
    procs[i] = subprocess.Popen([raftkv, "--id", str(i + 1), "--peers", peers, "--dir", d,
                                 "--snapshot-threshold", "64", "--snapshot-trailing", "16"]
                                + os.environ.get("RAFTKV_ARGS", "").split(),
                                stdout=subprocess.DEVNULL, stderr=err)


def installs():
    """Snapshots the nodes were sent, and the sanitizer reports they printed."""
    n, reports = 0, []
    for i in range(3):
        with open(os.path.join(base, "%d.err" % (i + 1))) as f:
            for line in f:
                n += "installed a snapshot from the leader" in line
                if "Sanitizer" in line or "runtime error" in line:
                    reports.append("node %d: %s" % (i + 1, line.rstrip()))
    return n, reports


def ask(i, line, timeout=2.0):
    s = socket.create_connection(("127.0.0.1", port0 + i + 1000), timeout=timeout)
    try:
        f = s.makefile("rw")
        f.write(line + "\n")
        f.flush()
        if line == "dump":
            rows = []
            while True:
                r = f.readline()
                if not r.endswith("\n"):
                    raise OSError("cut")
                if r == "end\n":
                    return rows
                rows.append(r.rstrip("\n"))
        r = f.readline()
        if not r.endswith("\n"):
            raise OSError("no answer")
        return r.rstrip("\n")
    finally:
        s.close()


def chaos(stop):
    global kills
    while not stop.is_set():
        time.sleep(rng.uniform(0.8, 2.0))
        with lock:
            i = rng.randrange(3)
            procs[i].send_signal(signal.SIGKILL)
            procs[i].wait()
            kills += 1
        time.sleep(rng.uniform(0.2, 1.0))
        with lock:
            start(i)


def main():
    global kills
    for i in range(3):
        start(i)
    acked = {}  # key -> (index, value)
    sent = unanswered = 0
    leader = 0
    stop = threading.Event()
    t = threading.Thread(target=chaos, args=(stop,))
    end = time.time() + seconds
    time.sleep(1.0)
    t.start()
    seq = 0
    while time.time() < end:
        key, value = "k%d" % seq, "v%d.%d" % (seq, rng.randrange(1000))
        seq += 1
        try:
            sent += 1
            r = ask(leader, "put %s %s" % (key, value))
        except OSError:
            unanswered += 1
            leader = (leader + 1) % 3
            time.sleep(0.05)
            continue
        if r.startswith("ok "):
            acked[key] = (int(r.split()[1]), value)
        elif r.startswith("redirect "):
            leader = int(r.split()[1]) - 1
        else:  # no leader yet, or leadership lost: the put may or may not apply
            unanswered += 1
            time.sleep(0.05)
    stop.set()
    t.join()

    def put_acked(key, value):
        # A put left unanswered may still apply: a retry is a new key, so
        # no key is ever put twice (applied twice stays a real failure).
        nonlocal leader, sent
        for attempt in range(600):
            k = "%s.%d" % (key, attempt)
            try:
                sent += 1
                r = ask(leader, "put %s %s" % (k, value))
            except OSError:
                r = ""
            if r.startswith("ok "):
                acked[k] = (int(r.split()[1]), value)
                return True
            leader = int(r.split()[1]) - 1 if r.startswith("redirect ") else (leader + 1) % 3
            time.sleep(0.05)
        return False

    # A follower down while 200 puts go by comes back behind the snapshot.
    with lock:
        for i in range(3):
            if procs[i].poll() is not None:
                start(i)
    put_acked("settle", "1")
    follower = None
    for i in range(3):
        try:
            if ask(i, "status").startswith("state follower"):
                follower = i
                break
        except OSError:
            pass
    if follower is not None:
        procs[follower].send_signal(signal.SIGKILL)
        procs[follower].wait()
        kills += 1
        for k in range(200):
            put_acked("behind%d" % k, "b%d" % k)
        start(follower)
    # Every node up; wait until they agree on what they applied.
    with lock:
        for i in range(3):
            if procs[i].poll() is not None:
                start(i)
    # A last put, acknowledged: a leader elected after a restart applies the
    # entries of earlier terms only once an entry of its own term commits.
    put_acked("sentinel", "done")
    want = max([ix for ix, _ in acked.values()] or [0])
    # Within 60 s: a leader whose snapshot to a follower was lost (the
    # follower killed with it on the way) waits raftkv's install-snapshot
    # timeout, 5 s, before it sends another.
    dumps = [None] * 3
    t_end = time.time()
    while time.time() - t_end < 60:
        try:
            st = [ask(i, "status") for i in range(3)]
            applied = [int(s.split()[-1]) for s in st]
            if min(applied) >= want and len(set(applied)) == 1:
                dumps = [ask(i, "dump", 10) for i in range(3)]
                break
        except (OSError, ValueError):
            pass
        time.sleep(0.1)
    agreed_after = time.time() - t_end
    lost = dup = differ = 0
    if dumps[0] is None:
        try:
            st = [ask(i, "status") for i in range(3)]
        except OSError as e:
            st = str(e)
        st = "%s; exit codes %s" % (st, [p.poll() for p in procs])
        print("raftkv_cluster: the nodes never agreed on their applied index (want %d): %s" %
              (want, st))
        lost = len(acked)
    else:
        held = []
        for d in dumps:
            h = {}
            for row in d:
                k, ix, cnt, v = row.split(" ", 3)
                h[k] = (int(ix), v)
                if int(cnt) != 1:
                    dup += 1
            held.append(h)
        for k, (ix, v) in acked.items():
            for h in held:
                if h.get(k) != (ix, v):
                    lost += 1
                    print("raftkv_cluster: %s acknowledged at %d as %s, a node holds %s" %
                          (k, ix, v, h.get(k)))
        differ = sum(held[0] != h for h in held[1:])
    present = sum(all(h.get(k) == iv for h in held) for k, iv in acked.items()) if dumps[0] else 0
    for p in procs:
        p.send_signal(signal.SIGTERM)
    for p in procs:
        try:
            p.wait(20)
        except subprocess.TimeoutExpired:
            p.kill()
            print("raftkv_cluster: a node did not stop on SIGTERM")
            lost += 1
    sent_snapshots, reports = installs()
    for r in reports:
        print("raftkv_cluster: %s" % r)
    print("raftkv_cluster: %.0f s, %d kills, %d puts sent, %d acknowledged, %d unanswered, "
          "%d snapshots installed, %d present on all 3 nodes at the same index; lost %d, "
          "applied twice %d, nodes differing %d; agreed %.1f s after the last put" %
          (seconds, kills, sent, len(acked), unanswered, sent_snapshots, present, lost, dup,
           differ, agreed_after))
    if sent_snapshots == 0:
        print("raftkv_cluster: no node was ever sent a snapshot; the test did not test that")
    ok = (lost == 0 and dup == 0 and differ == 0 and len(acked) > 0 and sent_snapshots > 0 and
          not reports)
    if ok:
        shutil.rmtree(base)
    else:
        print("raftkv_cluster: kept %s" % base)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
