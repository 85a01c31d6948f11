#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# raftkv_bench.py - the 3-node replicated store (examples/raftkv) with its
# log on pmwal against the same cluster with raft_uv's own storage, side by
# side in one run (issue 17): N clients, each with its connection to the
# leader, put VALUE-byte values for SECONDS; committed puts/s and p50/p99 of
# put-to-commit latency as the client sees it. The storages alternate,
# raft_uv first on even rounds. Everything on 127.0.0.1 and in DIR.
#
# Where the time goes: two more rows bound it. "pmem" is the same pmwal
# storage on emulated persistent memory (a file in /dev/shm, so a durable
# append costs a few microseconds): what the cluster does when storage is
# nearly free. "ceiling" is the same clients sending gets, which the
# leader's loop answers without raft or storage: what the clients, the
# sockets and the loop can carry at all.
#
#   raftkv_bench.py RAFTKV [--dir DIR] [--clients N,N] [--seconds S]
#                   [--value-bytes B] [--rounds R] [--storages uv,pmwal,pmem,ceiling]
#                   [--snapshot-threshold N]   (entries between snapshots; default 2048)
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
ap.add_argument("--storages", default="uv,pmwal")
ap.add_argument("--snapshot-threshold", type=int, default=2048)
a = ap.parse_args()
storages = a.storages.split(",")
for st in storages:
    if st not in ("uv", "pmwal", "pmem", "ceiling"):
        raise SystemExit("raftkv_bench: --storages: %s is not uv, pmwal, pmem or ceiling" % st)
if "uv" not in storages or "pmwal" not in storages:
    raise SystemExit("raftkv_bench: --storages must name uv and pmwal (the ratio is theirs)")
port0 = 21000 + (os.getpid() * 11) % 9000


def cluster(storage, work):
    peers = ",".join("127.0.0.1:%d" % (port0 + i) for i in range(3))
    procs = []
    for i in range(3):
        d = os.path.join(work, "%s%d" % (storage, i + 1))
        os.makedirs(d)
        argv = [a.raftkv, "--id", str(i + 1), "--peers", peers, "--dir", d,
                "--snapshot-threshold", str(a.snapshot_threshold)]
        if storage == "pmem":
            argv += ["--target", "pmem:/dev/shm/pmwal-raftbench-%d-%d" % (os.getpid(), i + 1)]
        else:
            argv += ["--storage", "pmwal" if storage == "ceiling" else storage]
        procs.append(subprocess.Popen(argv, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL))
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


def cpu_seconds(pids):
    """User + system CPU seconds the processes have used."""
    tick, t = os.sysconf("SC_CLK_TCK"), 0.0
    for pid in pids:
        try:
            with open("/proc/%d/stat" % pid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            t += (int(fields[11]) + int(fields[12])) / tick
        except (OSError, IndexError, ValueError):
            pass
    return t


def run(storage, clients):
    work = tempfile.mkdtemp(prefix="pmwal-raftbench-", dir=a.dir)
    os.environ["PMWAL_STATUS_DIR"] = work
    procs = cluster(storage, work)
    try:
        port = leader_port()
        value = "x" * a.value_bytes
        if storage == "ceiling":  # one put, then gets of it
            ask(port, "put c0-0 %s" % value)
        lat, errors = [[] for _ in range(clients)], [0]
        end = time.time() + a.seconds

        def client(c):
            s = socket.create_connection(("127.0.0.1", port), timeout=10)
            f = s.makefile("rw")
            j = 0
            while time.time() < end:
                t0 = time.perf_counter()
                if storage == "ceiling":
                    f.write("get c0-0\n")
                else:
                    f.write("put c%d-%d %s\n" % (c, j, value))
                f.flush()
                r = f.readline()
                if not (r.startswith("value ") if storage == "ceiling" else r.startswith("ok ")):
                    errors[0] += 1
                    return
                lat[c].append(time.perf_counter() - t0)
                j += 1
            s.close()

        t0 = time.time()
        cpu0, me0 = cpu_seconds([p.pid for p in procs]), sum(os.times()[:2])
        ts = [threading.Thread(target=client, args=(c,)) for c in range(clients)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        took = time.time() - t0
        nodes_cpu = (cpu_seconds([p.pid for p in procs]) - cpu0) / took * 100
        client_cpu = (sum(os.times()[:2]) - me0) / took * 100
        all_lat = sorted(x for l in lat for x in l)
        n = len(all_lat)
        pct = lambda p: all_lat[min(n - 1, int(n * p / 100))] * 1e6 if n else 0
        return n / took, pct(50), pct(99), errors[0], nodes_cpu, client_cpu
    finally:
        for p in procs:
            p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(work, ignore_errors=True)
        for i in range(3):
            try:
                os.unlink("/dev/shm/pmwal-raftbench-%d-%d" % (os.getpid(), i + 1))
            except OSError:
                pass


def main():
    counts = [int(c) for c in a.clients.split(",")]
    print("raftkv_bench: 3 nodes on 127.0.0.1, %d-byte values, %.0f s per run, %d rounds, in %s"
          % (a.value_bytes, a.seconds, a.rounds, a.dir))
    print("%8s  %-26s %12s %10s %10s %10s %10s" % ("clients", "storage", "commits/s", "p50 us",
                                                  "p99 us", "nodes cpu", "client cpu"))
    for c in counts:
        sums = {st: [0, 0, 0, 0, 0] for st in storages}
        for r in range(a.rounds):
            order = storages if r % 2 == 0 else storages[::-1]
            for st in order:
                ops, p50, p99, err, ncpu, ccpu = run(st, c)
                if err:
                    print("raftkv_bench: %s: %d puts refused" % (st, err))
                s = sums[st]
                s[0] += ops / a.rounds
                s[1] = max(s[1], p50)
                s[2] = max(s[2], p99)
                s[3] += ncpu / a.rounds
                s[4] += ccpu / a.rounds
        m, u = sums["pmwal"], sums["uv"]
        row = "%8d  %-26s %12.0f %10.0f %10.0f %9.0f%% %9.0f%%"
        print(row % (c, "pmwal (libpmwal-raft)", *m))
        print(row % (c, "raft_uv's own storage", *u))
        print("%8d  %-26s %11.2fx %9.2fx %9.2fx" % (c, "ratio (pmwal / raft_uv)",
                                                   m[0] / u[0] if u[0] else 0,
                                                   m[1] / u[1] if u[1] else 0,
                                                   m[2] / u[2] if u[2] else 0))
        if "pmem" in sums:
            print(row % (c, "pmwal on emulated pmem", *sums["pmem"]))
        if "ceiling" in sums:
            print(row % (c, "ceiling: gets, no raft", *sums["ceiling"]))
    print("commits/s, cpu: the mean of the rounds; p50, p99: the worst round's. cpu: of one")
    print("core, the 3 nodes together and the client; this machine has %d cores." %
          os.cpu_count())


main()
