#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# kv_clients.py - socket clients of examples/kvstore for tests/kvstore_example.sh:
#   churn SOCK CLIENTS SECONDS  clients put and delete keys of their own (a job
#                               queue): the store must answer every one of them
#   half SOCK                   a client that dies in the middle of a line, and
#                               one in the middle of a line at SIGTERM: prints
#                               what it sent whole
#   stall SOCK                  a client that sends requests and never reads the
#                               answers (the store's shutdown must not wait on it)
#   idle SOCK N                 N connections that send nothing; meanwhile a new
#                               client's put and get are answered within 10 s
#   timeout SOCK SECONDS        a client silent past the store's --idle-timeout
#                               is told so and closed
import socket
import sys
import threading
import time


def conn(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    return s


def ask(s, f, line):
    s.sendall(line)
    return f.readline()


def churn(path, clients, seconds):
    done, bad = [0] * clients, []

    def run(i):
        s = conn(path)
        f = s.makefile("rb")
        end, j = time.time() + seconds, 0
        while time.time() < end:
            for req in (b"put job-%d-%d x\n" % (i, j), b"del job-%d-%d\n" % (i, j)):
                if not ask(s, f, req).startswith(b"ok "):
                    bad.append(req)
                    return
            j += 1
            done[i] += 2
        s.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(seconds + 30)
    hung = sum(t.is_alive() for t in threads)
    print("churn: %d clients, %d writes answered, %d hung, %d refused" %
          (clients, sum(done), hung, len(bad)))
    return 1 if hung or bad else 0


def half(path):
    s = conn(path)
    f = s.makefile("rb")
    assert ask(s, f, b"put balance 100\n").startswith(b"ok ")
    s.sendall(b"put balance 1")  # meant 1000000: dies while sending
    s.close()
    s = conn(path)
    f = s.makefile("rb")
    assert ask(s, f, b"put other 5\n").startswith(b"ok ")
    return 0


def stall(path):
    s = conn(path)
    s.sendall(b"put big " + b"x" * (1 << 20) + b"\n" + b"get big\n" * 64)
    time.sleep(60)  # killed by the test
    return 0


def idle(path, n):
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, n + 256)), hard))
    held = []
    for _ in range(n):
        held.append(conn(path))
    time.sleep(0.5)  # the store accepts them all, or closes some
    t0 = time.time()
    s = conn(path)
    s.settimeout(10)
    f = s.makefile("rb")
    put = ask(s, f, b"put fresh client\n")
    get = ask(s, f, b"get fresh\n")
    print("idle: %d idle connections; a new client's put: %r, get: %r, in %.2f s" %
          (n, put, get, time.time() - t0))
    for h in held:
        h.close()
    return 0 if put.startswith(b"ok ") and get == b"value client\n" else 1


def timeout(path, seconds):
    s = conn(path)
    s.settimeout(seconds + 10)
    f = s.makefile("rb")
    assert ask(s, f, b"put t 1\n").startswith(b"ok ")
    t0 = time.time()
    r = f.readline()
    took = time.time() - t0
    print("timeout: after %.1f s silent: %r" % (took, r))
    return 0 if r.startswith(b"error: idle for") and f.readline() == b"" else 1


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "churn":
        sys.exit(churn(sys.argv[2], int(sys.argv[3]), float(sys.argv[4])))
    if cmd == "idle":
        sys.exit(idle(sys.argv[2], int(sys.argv[3])))
    if cmd == "timeout":
        sys.exit(timeout(sys.argv[2], float(sys.argv[3])))
    sys.exit({"half": half, "stall": stall}[cmd](sys.argv[2]))
