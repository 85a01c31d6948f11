# SPDX-License-Identifier: MIT
"""What the multi-user and start-twice lanes (tests/multiuser_lane.sh,
tests/start_twice.sh) do that bash cannot: hold locks, hold many idle
connections, bind ports, talk one line to a server. Every action ends by
itself (a bound in seconds); each prints one line once it is in place, so
that the caller can wait for that line.

  lock PATH NBYTES SECONDS     shared (read) lock on bytes 0..NBYTES-1
  flood tcp:HOST:PORT|unix:PATH N SECONDS   N idle connections
  bind HOST:PORT SECONDS       listen on a port
  ask tcp:HOST:PORT|unix:PATH TIMEOUT LINE...   send lines, print answers
  fill DIR                     write DIR/fill until the filesystem is full
  puts ADDR PREFIX N           put PREFIXi vi, i = 1..N; print "acked KEY VALUE"
                               for each "ok" (follows raftkv's redirects)
  dump ADDR TIMEOUT            print a store's dump (lines up to "end")
"""
import fcntl
import os
import socket
import sys
import time


def connect(addr, timeout):
    kind, _, rest = addr.partition(":")
    if kind == "unix":
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(timeout)
        s.connect(rest)
    else:
        host, _, port = rest.rpartition(":")
        s = socket.create_connection((host, int(port)), timeout=timeout)
    return s


def connect_retry(addr, deadline):
    """Connects, retrying while the server is not there yet."""
    while True:
        try:
            return connect(addr, max(0.1, deadline - time.time()))
        except OSError as e:
            if time.time() > deadline:
                print("no connection: %s" % e, flush=True)
                return None
            time.sleep(0.1)


def main(argv):
    cmd = argv[1]
    if cmd == "lock":
        f = open(argv[2], "rb")
        fcntl.lockf(f, fcntl.LOCK_SH | fcntl.LOCK_NB, int(argv[3]), 0)
        print("locked", flush=True)
        time.sleep(float(argv[4]))
    elif cmd == "flood":
        socks, deadline = [], time.time() + float(argv[4])
        give_up = time.time() + 10
        while len(socks) < int(argv[3]):
            try:
                socks.append(connect(argv[2], 2))
            except OSError as e:
                # a full backlog (EAGAIN): the server accepts slower than
                # we connect; a refusal or a timeout ends the flood
                if e.errno == 11 and time.time() < give_up:
                    time.sleep(0.01)
                    continue
                print("connect failed after %d: %s" % (len(socks), e), flush=True)
                break
        print("flooding %d" % len(socks), flush=True)
        time.sleep(max(0, deadline - time.time()))
    elif cmd == "bind":
        host, _, port = argv[2].rpartition(":")
        s = socket.socket()
        s.bind((host, int(port)))
        s.listen(8)
        print("bound", flush=True)
        time.sleep(float(argv[3]))
    elif cmd == "ask":
        deadline = time.time() + float(argv[3])
        s = connect_retry(argv[2], deadline)
        if s is None:
            return 1
        s.settimeout(max(0.1, deadline - time.time()))
        f = s.makefile("rb")
        for line in argv[4:]:
            try:
                s.sendall((line + "\n").encode())
            except OSError:
                pass  # closed on us: what it said before is read below
            try:
                ans = f.readline().decode(errors="replace").rstrip("\n")
                print(ans or "(closed)", flush=True)
            except OSError as e:
                print("no answer: %s" % e, flush=True)
                return 1
    elif cmd == "puts":
        s = connect_retry(argv[2], time.time() + 10)
        if s is None:
            return 1
        s.settimeout(10)
        f = s.makefile("rb")
        for i in range(1, int(argv[4]) + 1):
            k, v = "%s%d" % (argv[3], i), "v%d" % i
            try:
                s.sendall(("put %s %s\n" % (k, v)).encode())
                ans = f.readline().decode(errors="replace").strip()
            except OSError as e:
                print("ended: %s" % e, flush=True)
                return 0
            if not ans:
                print("ended: closed", flush=True)
                return 0
            if ans.startswith("ok"):
                print("acked %s %s" % (k, v), flush=True)
            else:
                print("answer %s: %s" % (k, ans), flush=True)
    elif cmd == "dump":
        deadline = time.time() + float(argv[3])
        s = connect_retry(argv[2], deadline)
        if s is None:
            return 1
        s.settimeout(max(0.1, deadline - time.time()))
        s.sendall(b"dump\n")
        f = s.makefile("rb")
        for line in f:
            line = line.decode(errors="replace").rstrip("\n")
            print(line, flush=True)
            if line == "end":
                break
    elif cmd == "fill":
        with open(os.path.join(argv[2], "fill"), "wb") as f:
            try:
                while True:
                    f.write(b"x" * 4096)
                    f.flush()
            except OSError:
                pass
        print("filled", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
