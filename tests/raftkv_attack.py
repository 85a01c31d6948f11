#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# raftkv_attack.py - the replicated example store against a hostile client
# and bad input (issue 17's attack): values longer than any fixed buffer come
# back whole, connections past the cap are told so while the node keeps
# working, a client that never reads its answers is closed before the node's
# memory grows without bound, bad options are refused, and a full log says
# so by name and, on a follower, makes the node exit instead of hanging on.
#
#   raftkv_attack.py RAFTKV PMWAL
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

raftkv, pmwal = sys.argv[1], sys.argv[2]
base = tempfile.mkdtemp(prefix="pmwal-raftkv-attack-", dir="/var/tmp")
os.environ["PMWAL_STATUS_DIR"] = base
port0 = 23000 + (os.getpid() * 13) % 6000
failures = []
checks = 0


def check(name, cond, detail=""):
    global checks
    checks += 1
    if not cond:
        failures.append("%s %s" % (name, detail))
        print("raftkv_attack: FAIL %s %s" % (name, detail))


class Cluster:
    def __init__(self, name, extra=None):
        self.root = os.path.join(base, name)
        self.extra = extra or {}
        self.p = {}
        self.base = port0
        globals()["port0"] += 3

    def peers(self):
        return ",".join("127.0.0.1:%d" % (self.base + i) for i in range(3))

    def start(self, i):
        d = os.path.join(self.root, str(i))
        os.makedirs(d, exist_ok=True)
        err = open(os.path.join(self.root, "%d.err" % i), "ab")
        self.p[i] = subprocess.Popen([raftkv, "--id", str(i), "--peers", self.peers(), "--dir",
                                      d] + self.extra.get(i, []), stdout=err, stderr=err)

    def err(self, i):
        with open(os.path.join(self.root, "%d.err" % i), errors="replace") as f:
            return f.read()

    def ask(self, i, line, timeout=5.0):
        s = socket.create_connection(("127.0.0.1", self.base + i - 1 + 1000), timeout=timeout)
        try:
            s.sendall(line.encode() + b"\n")
            buf = b""
            while not buf.endswith(b"\n"):
                x = s.recv(1 << 20)
                if not x:
                    break
                buf += x
            return buf.decode(errors="replace").rstrip("\n")
        finally:
            s.close()

    def leader(self, wait=15):
        end = time.time() + wait
        while time.time() < end:
            for i in self.p:
                try:
                    if self.p[i].poll() is None and \
                            self.ask(i, "status", 1).startswith("state leader"):
                        return i
                except OSError:
                    pass
            time.sleep(0.1)
        return None

    def stop(self):
        for p in self.p.values():
            if p.poll() is None:
                p.send_signal(signal.SIGKILL)
                p.wait()


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def bad_options():
    for argv, why in ((["--id", "1x"], "--id 1x"), (["--id", "0"], "--id 0"),
                      (["--id", "4"], "--id beyond the peers"),
                      (["--id", "1", "--install-snapshot-timeout", "0"], "a snapshot timeout of 0"),
                      (["--id", "1", "--install-snapshot-timeout", "999"],
                       "a snapshot timeout below the election timeout"),
                      (["--id", "1", "--install-snapshot-timeout", "5s"],
                       "a snapshot timeout with a unit")):
        r = subprocess.run([raftkv] + argv + ["--peers", "127.0.0.1:1,127.0.0.1:2,127.0.0.1:3",
                                              "--dir", base], capture_output=True, text=True,
                           timeout=10)
        check("bad option " + why, r.returncode == 2 and r.stderr, "exit %d" % r.returncode)
    r = subprocess.run([raftkv, "--id", "1", "--peers", "127.0.0.1:5,127.0.0.1:5", "--dir", base],
                       capture_output=True, text=True, timeout=10)
    check("duplicate peers", r.returncode == 2 and "twice" in r.stderr, r.stderr.strip())


def hostile_clients():
    c = Cluster("clients")
    for i in (1, 2, 3):
        c.start(i)
    try:
        l = c.leader()
        check("a leader", l is not None)
        if l is None:
            return
        big = "v" * 100000
        r = c.ask(l, "put big " + big[:60000])
        check("a 60 000-byte put", r.startswith("ok "), r[:80])
        r = c.ask(l, "get big")
        check("a 60 000-byte value comes back whole", r == "value " + big[:60000],
              "%d bytes" % len(r))
        # Connections past the cap: told so; the node keeps answering.
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
        held, told = [], 0
        for _ in range(560):
            s = socket.create_connection(("127.0.0.1", c.base + l - 1 + 1000), timeout=5)
            held.append(s)
        time.sleep(0.5)
        for s in held[500:]:
            s.setblocking(False)
            try:
                told += s.recv(100).startswith(b"error too many clients")
            except OSError:
                pass
        check("connections past the cap are told so", told >= 40, "%d told" % told)
        for s in held[500:]:
            s.close()
        time.sleep(0.3)
        r = c.ask(l, "put after-many ok")
        check("a put with 500 idle connections open", r.startswith("ok "), r)
        for s in held[:500]:
            s.close()
        # A client that sends dumps and never reads: closed, memory bounded.
        for k in range(20):
            c.ask(l, "put fill%d %s" % (k, "f" * 4000))
        before = rss_kib(c.p[l].pid)
        s = socket.create_connection(("127.0.0.1", c.base + l - 1 + 1000), timeout=5)
        s.setblocking(False)
        sent = 0
        try:
            for _ in range(20000):
                sent += s.send(b"dump\n" * 100)
        except OSError:
            pass
        time.sleep(1)
        grew = rss_kib(c.p[l].pid) - before
        s.close()
        check("a client that never reads is closed before memory grows", grew < 64 * 1024,
              "grew %d KiB after %d bytes of dumps asked" % (grew, sent))
        r = c.ask(l, "status")
        check("the node answers after it", r.startswith("state leader"), r)
    finally:
        c.stop()


def full_log():
    # Nodes 1 and 2 on 4 MiB logs elect a leader; node 3, on 1 MiB, joins
    # as a follower and fills first.
    c = Cluster("full")
    os.makedirs(c.root, exist_ok=True)
    for i in (1, 2, 3):
        log = os.path.join(c.root, "%d.log" % i)
        subprocess.run([pmwal, "create", log, "--size", "1M" if i == 3 else "4M"], check=True,
                       capture_output=True)
        c.extra[i] = ["--target", log, "--snapshot-threshold", "100000"]
    c.start(1)
    c.start(2)
    try:
        l = c.leader()
        check("a leader on 4 MiB logs", l in (1, 2), str(l))
        if l not in (1, 2):
            return
        c.start(3)
        answers = []
        for k in range(100):
            try:
                answers.append(c.ask(l, "put k%d %s" % (k, "y" * 60000), 5))
            except OSError as e:
                answers.append("EXC %s" % e)
            if not answers[-1].startswith("ok "):
                break
        # The follower whose log filled exits with the reason, not hangs on.
        try:
            c.p[3].wait(10)
        except subprocess.TimeoutExpired:
            pass
        e3 = c.err(3)
        check("a follower with a full log exits saying why",
              c.p[3].poll() == 1 and "unavailable" in e3 and "full" in e3, e3[-300:])
        last = answers[-1]
        check("the leader's full log says so", "log is full" in last and
              "unknown error" not in last, last[:200])
        check("puts were acknowledged before it", len(answers) > 20, "%d" % len(answers))
    finally:
        c.stop()


def main():
    bad_options()
    hostile_clients()
    full_log()
    print("raftkv_attack: %d checks, %d failed" % (checks, len(failures)))
    if failures:
        print("raftkv_attack: kept %s" % base)
        return 1
    shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
