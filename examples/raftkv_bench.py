#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# raftkv_bench.py - the 3-node replicated store (examples/raftkv) with its
# log on pmwal against the same cluster with raft_uv's own storage, side by
# side in one run (issue 17): N clients, each with its connection to the
# leader, put VALUE-byte values for SECONDS; committed puts/s and p50/p99 of
# put-to-commit latency as the client sees it. The two storages alternate,
# raft_uv first on even rounds. Everything on 127.0.0.1 and in DIR.
#
#   raftkv_bench.py RAFTKV [--dir DIR] [--clients N,N] [--seconds S]
#                   [--value-bytes B] [--rounds R]
import argparse
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time

ap = argparse.ArgumentParser()
ap.add_argument("raftkv")
ap.add_argument("--dir", default="/var/tmp")
ap.add_argument("--clients", default="1,32")
ap.add_argument("--seconds", type=float, default=5)
ap.add_argument("--value-bytes", type=int, default=4096)
ap.add_argument("--rounds", type=int, default=2)
a = ap.parse_args()
port0 = 21000 + (os.getpid() * 11) % 9000


def cluster(storage, work):
    peers = ",".join("127.0.0.1:%d" % (port0 + i) for i in range(3))
    procs = []
    for i in range(3):
        d = os.path.join(work, "%s%d" % (storage, i + 1))
        os.makedirs(d)
        procs.append(subprocess.Popen(
            [a.raftkv, "--id", str(i + 1), "--peers", peers, "--dir", d, "--storage", storage],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    return procs


def ask(port, line):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    f = s.makefile("rw")
    f.write(line + "\n")
    f.flush()
    r = f.readline().strip()
    s.close()
    return r


def leader_port():
    for _ in range(200):
        for i in range(3):
            try:
                if ask(port0 + 1000 + i, "status").startswith("state leader"):
                    return port0 + 1000 + i
            except OSError:
                pass
        time.sleep(0.05)
    raise SystemExit("raftkv_bench: no leader")


def run(storage, clients):
    work = tempfile.mkdtemp(prefix="pmwal-raftbench-", dir=a.dir)
    os.environ["PMWAL_STATUS_DIR"] = work
    procs = cluster(storage, work)
    try:
        port = leader_port()
        value = "x" * a.value_bytes
        lat, errors = [[] for _ in range(clients)], [0]
        end = time.time() + a.seconds

        def client(c):
            s = socket.create_connection(("127.0.0.1", port), timeout=10)
            f = s.makefile("rw")
            j = 0
            while time.time() < end:
                t0 = time.perf_counter()
                f.write("put c%d-%d %s\n" % (c, j, value))
                f.flush()
                r = f.readline()
                if not r.startswith("ok "):
                    errors[0] += 1
                    return
                lat[c].append(time.perf_counter() - t0)
                j += 1
            s.close()

        t0 = time.time()
        ts = [threading.Thread(target=client, args=(c,)) for c in range(clients)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        took = time.time() - t0
        all_lat = sorted(x for l in lat for x in l)
        n = len(all_lat)
        pct = lambda p: all_lat[min(n - 1, int(n * p / 100))] * 1e6 if n else 0
        return n / took, pct(50), pct(99), errors[0]
    finally:
        for p in procs:
            p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(work, ignore_errors=True)


def main():
    counts = [int(c) for c in a.clients.split(",")]
    print("raftkv_bench: 3 nodes on 127.0.0.1, %d-byte values, %.0f s per run, %d rounds, in %s"
          % (a.value_bytes, a.seconds, a.rounds, a.dir))
    print("%8s  %-26s %12s %10s %10s" % ("clients", "storage", "commits/s", "p50 us", "p99 us"))
    for c in counts:
        sums = {"pmwal": [0, 0, 0], "uv": [0, 0, 0]}
        for r in range(a.rounds):
            order = ["uv", "pmwal"] if r % 2 == 0 else ["pmwal", "uv"]
            for st in order:
                ops, p50, p99, err = run(st, c)
                if err:
                    print("raftkv_bench: %s: %d puts refused" % (st, err))
                s = sums[st]
                s[0] += ops / a.rounds
                s[1] = max(s[1], p50)
                s[2] = max(s[2], p99)
        m, u = sums["pmwal"], sums["uv"]
        print("%8d  %-26s %12.0f %10.0f %10.0f" % (c, "pmwal (libpmwal-raft)", *m))
        print("%8d  %-26s %12.0f %10.0f %10.0f" % (c, "raft_uv's own storage", *u))
        print("%8d  %-26s %11.2fx %9.2fx %9.2fx" % (c, "ratio (pmwal / raft_uv)",
                                                   m[0] / u[0] if u[0] else 0,
                                                   m[1] / u[1] if u[1] else 0,
                                                   m[2] / u[2] if u[2] else 0))
    print("commits/s: the mean of the rounds; p50, p99: the worst round's.")


main()
