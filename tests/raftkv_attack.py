#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# raftkv_attack.py - the replicated example store against a hostile client
# and bad input (issue 17's attack): values longer than any fixed buffer come
# back whole, idle connections past the cap make room for new clients (the
# one idle longest is closed) and a client silent for --idle-timeout is
# closed, a node with clients connected stops on SIGTERM, a client that
# never reads its answers is closed before the node's
# memory grows without bound, bad options are refused, and a full log says
# so by name and, on a follower, makes the node exit instead of hanging on.
# A put whose leader lost leadership is answered "unknown", not "error"; a
# follower does not answer reads as if current; a follower that cannot store
# the leader's snapshot (its directory a full filesystem) exits saying why;
# links another user plants in a node's directory are never written through.
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
    for extra, why in ((["--max-clients", "0"], "--max-clients 0"),
                       (["--max-clients", "70000"], "--max-clients 70000"),
                       (["--max-clients-per-peer", "0"], "--max-clients-per-peer 0"),
                       (["--max-clients", "10", "--max-clients-per-peer", "11"],
                        "a per-peer cap above --max-clients"),
                       (["--idle-timeout", "-1"], "--idle-timeout -1"),
                       (["--idle-timeout", "5s"], "--idle-timeout with a unit"),
                       (["--max-clients", "100"], "--max-clients above the descriptor limit")):
        r = subprocess.run([raftkv, "--id", "1", "--peers", "127.0.0.1:5", "--dir", base] + extra,
                           capture_output=True, text=True, timeout=10, preexec_fn=few_fds)
        check("bad option " + why, r.returncode == 2 and "raftkv: --" in r.stderr,
              "exit %d: %s" % (r.returncode, r.stderr.strip()))
    r = subprocess.run([raftkv, "--help"], capture_output=True, text=True, timeout=10)
    check("--help names the client options", r.returncode == 0 and "--idle-timeout" in r.stdout
          and "--max-clients-per-peer" in r.stdout, r.stdout + r.stderr)


def few_fds():
    """96 descriptors: room for 32 clients beside the node's own 64."""
    resource.setrlimit(resource.RLIMIT_NOFILE, (96, 96))


def closed_socks(socks):
    """The sockets the node has closed (EOF, or a last line then EOF), and
    the first line any of them was told."""
    closed, said = 0, ""
    for s in socks:
        s.setblocking(False)
        try:
            x = s.recv(4096)
            closed += not x or x.endswith(b"\n")
            said = said or x.decode(errors="replace").strip()
        except OSError:
            pass
    return closed, said


def idle_clients():
    """Idle connections past the cap never lock a new client out; a silent
    client is closed after --idle-timeout; SIGTERM stops a node that has
    clients connected."""
    d = os.path.join(base, "idle")
    os.makedirs(d)
    port = port0
    globals()["port0"] += 3
    errpath = os.path.join(d, "err")
    with open(errpath, "wb") as err:
        p = subprocess.Popen([raftkv, "--id", "1", "--peers", "127.0.0.1:%d" % port, "--dir", d,
                              "--idle-timeout", "2"], stdout=err, stderr=err,
                             preexec_fn=few_fds)
    addr = ("127.0.0.1", port + 1000)

    def ask(line):
        s = socket.create_connection(addr, timeout=5)
        try:
            s.sendall(line.encode() + b"\n")
            return s.makefile("rb").readline().decode(errors="replace").strip()
        finally:
            s.close()
    held = []
    try:
        end, r = time.time() + 15, ""
        while time.time() < end and not r.startswith("state leader"):
            try:
                r = ask("status")
            except OSError:
                time.sleep(0.1)
        check("a one-node cluster elects itself", r.startswith("state leader"), r)
        if not r.startswith("state leader"):
            return
        with open(errpath, errors="replace") as f:
            said = f.read()
        check("the client limits fit the descriptor limit", "at most 32, 16 per address" in said,
              said.strip())
        # 60 silent connections from this host (16 its share): each new
        # one takes the place of the one idle longest, and so does a client
        # that comes after them.
        for _ in range(60):
            held.append(socket.create_connection(addr, timeout=5))
        r1, r2 = ask("put idle-k v"), ask("get idle-k")
        check("a put after 60 idle connections", r1.startswith("ok "), r1)
        check("a get after 60 idle connections", r2 == "value v", r2)
        time.sleep(0.2)
        closed, said = closed_socks(held)
        check("the connections idle longest made room", closed >= 44 and
              said.startswith("error closed for a new client"), "%d closed: %s" % (closed, said))
        for s in held:
            s.close()
        held = []
        # A client that sends nothing for 2 s is told so and closed.
        s = socket.create_connection(addr, timeout=8)
        held.append(s)
        f = s.makefile("rb")
        s.sendall(b"status\n")
        f.readline()
        t0 = time.time()
        try:
            r, eof = f.readline().decode(errors="replace").strip(), f.readline()
        except OSError as e:
            r, eof = "no answer: %s" % e, None
        check("a silent client is closed after --idle-timeout",
              r == "error idle for 2 s: closing" and eof == b"" and time.time() - t0 > 1,
              "%r after %.1f s" % (r, time.time() - t0))
        # SIGTERM stops the node although a client is connected.
        s = socket.create_connection(addr, timeout=5)
        held.append(s)
        s.sendall(b"status\n")
        s.makefile("rb").readline()
        p.send_signal(signal.SIGTERM)
        try:
            rc = p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            rc = "still running 10 s after SIGTERM"
        check("SIGTERM stops a node with a client connected", rc == 0, str(rc))
    finally:
        for s in held:
            s.close()
        if p.poll() is None:
            p.kill()
            p.wait()


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
        # Idle connections past one address's share (512 by default): the
        # ones idle longest make room; the node keeps answering.
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
        held = []
        for _ in range(560):
            s = socket.create_connection(("127.0.0.1", c.base + l - 1 + 1000), timeout=5)
            held.append(s)
        r = c.ask(l, "put after-many ok")
        check("a put with 560 idle connections open", r.startswith("ok "), r)
        time.sleep(0.2)
        closed, said = closed_socks(held[:100])
        check("connections past the share make room", closed >= 40 and
              said.startswith("error closed for a new client"), "%d closed: %s" % (closed, said))
        for s in held:
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


def unknown_outcome():
    # The followers stopped: the leader cannot commit, steps down, and the
    # put it took is answered "unknown" (a new leader may still commit it).
    c = Cluster("unknown")
    for i in (1, 2, 3):
        c.start(i)
    try:
        l = c.leader()
        check("a leader", l is not None)
        if l is None:
            return
        check("a put", c.ask(l, "put a 1").startswith("ok "))
        f = [i for i in (1, 2, 3) if i != l]
        r = c.ask(f[0], "get a")
        check("a follower's get is redirected, not answered as current",
              r.startswith("redirect %d " % l) or r == "error no leader", r)
        for i in f:
            c.p[i].send_signal(signal.SIGSTOP)
        try:
            r = c.ask(l, "put b 2", 20)
        except OSError as e:
            r = "EXC %s" % e
        check("a put whose leader lost leadership: outcome unknown",
              r.startswith("unknown: leadership lost") and "may or may not" in r, r)
        for i in f:
            c.p[i].send_signal(signal.SIGCONT)
    finally:
        for p in c.p.values():
            if p.poll() is None:
                p.send_signal(signal.SIGCONT)
        c.stop()


def mounted_tmpfs(path, size):
    os.makedirs(path, mode=0o700, exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%s,mode=0700" % size, "tmpfs",
                        path], capture_output=True, text=True)
    if r.returncode:
        print("raftkv_attack: SKIP: a follower on a full filesystem (mount refused: %s)" %
              r.stderr.strip())
    return r.returncode == 0


def fill(path, spare):
    # Full but for @spare bytes: room for a node's start, not a snapshot.
    with open(os.path.join(path, "spare"), "wb") as f:
        f.write(b"\0" * spare)
    try:
        with open(os.path.join(path, "fill"), "wb") as f:
            while True:
                f.write(b"\0" * 4096)
                f.flush()
    except OSError:
        pass
    os.unlink(os.path.join(path, "spare"))


def follower_cannot_store_snapshot():
    c = Cluster("nospace")
    os.makedirs(c.root, exist_ok=True)
    for i in (1, 2, 3):
        log = os.path.join(c.root, "%d.log" % i)
        subprocess.run([pmwal, "create", log, "--size", "8M"], check=True, capture_output=True)
        c.extra[i] = ["--target", log, "--snapshot-threshold", "32", "--snapshot-trailing", "8"]
    d3 = os.path.join(c.root, "3")
    if not mounted_tmpfs(d3, "512k"):
        return
    try:
        c.start(1)
        c.start(2)
        l = c.leader()
        check("a leader of nodes 1 and 2", l in (1, 2), str(l))
        if l not in (1, 2):
            return
        c.start(3)
        check("a put with node 3 up", c.ask(l, "put first 1").startswith("ok "))
        time.sleep(0.5)
        c.p[3].send_signal(signal.SIGKILL)
        c.p[3].wait()
        for k in range(100):  # the leader's log moves past node 3's
            c.ask(l, "put k%d %s" % (k, "z" * 1000))
        fill(d3, 64 << 10)
        c.start(3)
        answers = []
        for _ in range(100):
            if c.p[3].poll() is not None:
                break
            try:
                answers.append(c.ask(3, "get k99", 1))
            except OSError:
                pass
            time.sleep(0.1)
        e3 = c.err(3)
        check("a follower that cannot store the snapshot exits saying why",
              c.p[3].poll() == 1 and "snapshot" in e3 and "No space left on device" in e3,
              "exit %s: %s" % (c.p[3].poll(), e3[-300:]))
        check("its reads were not answered as current",
              not any(a.startswith("value ") or a == "missing" for a in answers),
              str(answers[:3]))
    finally:
        c.stop()
        subprocess.run(["umount", d3])


def remove(path):
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def planted_links():
    # Another user plants links named meta.tmp and snapshot.tmp in a sticky
    # directory it may write; root's node refuses them, and the file they
    # point at is untouched.
    user = "pmwal-t-servers-%d" % os.getpid()
    if subprocess.run(["useradd", "-M", "-r", "-s", "/usr/sbin/nologin", user],
                      capture_output=True).returncode:
        print("raftkv_attack: SKIP: links planted by another user (useradd refused)")
        return
    try:
        os.chmod(base, 0o711)
        precious = os.path.join(base, "precious")
        with open(precious, "w") as f:
            f.write("root's file\n")
        d = os.path.join(base, "sticky")
        os.mkdir(d)
        os.chmod(d, 0o1777)

        def plant(name):
            subprocess.run(["setpriv", "--reuid=" + user, "--regid=" + user, "--clear-groups",
                            "ln", "-s", precious, os.path.join(d, name)], check=True)

        def node(extra, puts):
            port = port0 + 2
            globals()["port0"] += 1
            err = open(os.path.join(base, "planted.err"), "w+")
            p = subprocess.Popen([raftkv, "--id", "1", "--peers", "127.0.0.1:%d" % port,
                                  "--dir", d] + extra, stdout=err, stderr=err)
            for k in range(puts):
                for _ in range(50):
                    try:
                        s = socket.create_connection(("127.0.0.1", port + 1000), timeout=2)
                        s.sendall(b"put k%d v\n" % k)
                        s.recv(100)
                        s.close()
                        break
                    except OSError:
                        if p.poll() is not None:
                            break
                        time.sleep(0.1)
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
            err.seek(0)
            return p.returncode, err.read()

        plant("meta.tmp")
        rc, e = node([], 0)
        check("a planted meta.tmp link is refused", rc == 1 and
              "meta.tmp: exists and is a symbolic link" in e, "exit %d: %s" % (rc, e[-300:]))
        remove(os.path.join(d, "meta.tmp"))
        plant("snapshot.tmp")
        rc, e = node(["--snapshot-threshold", "4", "--snapshot-trailing", "2"], 12)
        check("a planted snapshot.tmp link stops the node, named",
              rc == 1 and "snapshot.tmp: exists and is a symbolic link" in e,
              "exit %d: %s" % (rc, e[-300:]))
        with open(precious) as f:
            check("the file the links point at is untouched", f.read() == "root's file\n")
        os.chmod(d, 0o777)
        remove(os.path.join(d, "snapshot.tmp"))
        rc, e = node([], 0)
        check("a directory others may write (not sticky) is refused",
              rc == 1 and "writable by other users" in e, "exit %d: %s" % (rc, e[-300:]))
    finally:
        subprocess.run(["userdel", user], capture_output=True)


def main():
    bad_options()
    idle_clients()
    hostile_clients()
    full_log()
    unknown_outcome()
    follower_cannot_store_snapshot()
    planted_links()
    print("raftkv_attack: %d checks, %d failed" % (checks, len(failures)))
    if failures:
        print("raftkv_attack: kept %s" % base)
        return 1
    shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
