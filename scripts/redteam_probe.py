# SPDX-License-Identifier: Apache-2.0
# The raw-traffic probes of scripts/redteam.sh (python3 standard library only): malformed
# framed-TCP envelopes, mutated fuzz corpus frames, slowloris, idle connection floods, raw
# HTTP requests, a minimal WebSocket client, HS256 token minting (good and tricked), a TLS
# close check and the /healthz reserve under idle connections. Each subcommand prints one line of findings; exit 0 when what it saw matches
# what the caller expects (docs/REDTEAM.md explains each attack).
import base64
import hashlib
import hmac
import json
import os
import random
import resource
import socket
import ssl
import struct
import sys
import time

HOST = "127.0.0.1"


def connect(port, timeout=5.0):
    s = socket.create_connection((HOST, port), timeout=timeout)
    s.settimeout(timeout)
    return s


def closed_by_server(s, timeout=10.0):
    """Reads until the server ends the connection; True when it did within `timeout`."""
    s.settimeout(timeout)
    try:
        while True:
            if not s.recv(65536):
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False
    except OSError:
        return True


def http_raw(port, data, timeout=5.0):
    """Sends raw request bytes; the status code (0: no answer) and the seconds it took."""
    start = time.monotonic()
    try:
        s = connect(port, timeout)
        s.sendall(data)
        reply = b""
        while b"\r\n" not in reply:
            chunk = s.recv(4096)
            if not chunk:
                break
            reply += chunk
        s.close()
        code = int(reply.split(b" ")[1]) if reply.startswith(b"HTTP/") else 0
    except (OSError, ValueError, IndexError):
        code = 0
    return code, time.monotonic() - start


def healthz(port, timeout=5.0):
    return http_raw(port, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", timeout)


def frame(body):
    """A framed-TCP frame: u32 LE body length, then the body (docs/PROTOCOL.md section 2)."""
    return struct.pack("<I", len(body)) + body


def malformed_cases():
    rng = random.Random(14)
    cases = [
        ("size 0", struct.pack("<I", 0)),
        ("size 1", frame(b"\x00")),
        ("size 4", frame(b"SCRD")),
        ("size above the limit", struct.pack("<I", (1 << 20) + 5) + b"x" * 64),
        ("size 0xffffffff", struct.pack("<I", 0xFFFFFFFF)),
        ("HTTP on the TCP port", b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"),
        ("identifier only", frame(b"\x08\x00\x00\x00SCRD")),
        ("zero table offset", frame(b"\x00\x00\x00\x00SCRD" + b"\x00" * 16)),
        ("offset past the end", frame(b"\xff\xff\x00\x00SCRD" + b"\x00" * 16)),
    ]
    for i in range(30):
        n = rng.choice([1, 3, 7, 12, 33, 100, 1000, 5000])
        body = bytes(rng.getrandbits(8) for _ in range(n))
        if i % 2 == 0 and n >= 8:
            body = body[:4] + b"SCRD" + body[8:]  # past the identifier check
        cases.append(("random body %d bytes%s" % (n, " +SCRD" if i % 2 == 0 else ""), frame(body)))
    return cases


def cmd_malformed(tcp_port, http_port):
    cases = malformed_cases()
    closed = 0
    for _, data in cases:
        s = connect(tcp_port)
        try:
            s.sendall(data)
        except OSError:
            pass
        closed += closed_by_server(s)
        s.close()
    code, _ = healthz(http_port)
    print("%d/%d cases: connection closed by the server; /healthz %d" % (closed, len(cases), code))
    return closed == len(cases) and code == 200


def mutate(seed_bytes, rng):
    b = bytearray(seed_bytes or b"\x00")
    for _ in range(rng.randint(1, 8)):
        if not b:
            b.append(rng.getrandbits(8))
        op = rng.randint(0, 3)
        i = rng.randrange(len(b))
        if op == 0:
            b[i] ^= 1 << rng.randint(0, 7)
        elif op == 1:
            b[i] = rng.getrandbits(8)
        elif op == 2 and len(b) > 1:
            del b[i:i + rng.randint(1, 16)]
        else:
            b[i:i] = bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 16)))
    return bytes(b)


def ws_connect(port, path, rcvbuf=0, extra=""):
    """A WebSocket upgrade; (socket, status). `rcvbuf`: SO_RCVBUF before connecting."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.settimeout(5)
    s.connect((HOST, port))
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall(("GET %s HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n%s\r\n"
               % (path, HOST, port, key, extra)).encode())
    reply = b""
    while b"\r\n\r\n" not in reply:
        chunk = s.recv(1)
        if not chunk:
            break
        reply += chunk
    status = int(reply.split(b" ")[1]) if reply.startswith(b"HTTP/") else 0
    return s, status


def ws_binary(payload):
    mask = os.urandom(4)
    n = len(payload)
    head = b"\x82"
    if n < 126:
        head += bytes([0x80 | n])
    elif n < 65536:
        head += bytes([0x80 | 126]) + struct.pack(">H", n)
    else:
        head += bytes([0x80 | 127]) + struct.pack(">Q", n)
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def cmd_fuzzframes(tcp_port, http_port, corpus_dir, count):
    rng = random.Random(900)
    seeds = {}
    for target in ("fuzz_envelope", "fuzz_crdt_decoder", "fuzz_admission", "fuzz_web_request"):
        d = os.path.join(corpus_dir, target)
        seeds[target] = [open(os.path.join(d, f), "rb").read() for f in sorted(os.listdir(d))]
    sent = 0
    per = count // 3
    for _ in range(per):  # envelope frames on framed TCP, one connection each
        s = connect(tcp_port)
        try:
            s.sendall(frame(mutate(rng.choice(seeds["fuzz_envelope"]), rng)))
            closed_by_server(s, 0.3)
        except OSError:
            pass
        s.close()
        sent += 1
    ws = None
    for _ in range(per):  # DCL chunks on /dcl/fuzz, a new session after each close
        if ws is None:
            ws, status = ws_connect(http_port, "/dcl/fuzz")
            if status != 101:
                ws.close()
                ws = None
                continue
        try:
            ws.sendall(ws_binary(mutate(rng.choice(seeds["fuzz_crdt_decoder"] +
                                                   seeds["fuzz_admission"]), rng)))
            sent += 1
        except OSError:
            ws.close()
            ws = None
    if ws:
        ws.close()
    for _ in range(count - 2 * per):  # HTTP requests
        data = mutate(rng.choice(seeds["fuzz_web_request"]), rng)
        http_raw(http_port, b"GET /" + data.replace(b"\r", b"").replace(b"\n", b"") +
                 b" HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", 2.0)
        sent += 1
    code, _ = healthz(http_port)
    print("%d mutated frames sent (envelope, DCL, HTTP); server up, /healthz %d" % (sent, code))
    return code == 200


def raise_nofile(n):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(max(soft, n), hard), hard))


def cmd_slowloris(http_port, n, seconds):
    raise_nofile(n + 64)
    socks = []
    for _ in range(n):
        try:
            s = connect(http_port)
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            socks.append(s)
        except OSError:
            break
    worst = 0.0
    codes = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for s in socks:
            try:
                s.send(b"X-a: b\r\n")
            except OSError:
                pass
        code, took = healthz(http_port, 5.0)
        codes.append(code)
        worst = max(worst, took)
        time.sleep(0.5)
    ok = all(c == 200 for c in codes)
    print("%d slow connections held %ds; /healthz %d/%d answered 200, slowest %.3f s"
          % (len(socks), seconds, codes.count(200), len(codes), worst))
    return ok and worst < 2.0


def cmd_hold(tcp_port, n, seconds, ready_file):
    """Opens n idle connections, writes ready_file, holds them `seconds`."""
    raise_nofile(n + 64)
    socks = []
    for _ in range(n):
        try:
            socks.append(connect(tcp_port))
        except OSError:
            break
    open(ready_file, "w").write(str(len(socks)))
    time.sleep(seconds)
    return True


def cmd_slowreader(http_port, path, seconds, ready_file):
    """Joins over WebSocket with a tiny receive buffer and never reads."""
    s, status = ws_connect(http_port, path, rcvbuf=2048)
    open(ready_file, "w").write(str(status))
    time.sleep(seconds)
    s.close()
    return status == 101


def cmd_upgrades(http_port, path_format, n):
    """n WebSocket upgrades to path_format % i; prints the statuses seen."""
    statuses = {}
    for i in range(n):
        s, status = ws_connect(http_port, path_format % i)
        s.close()
        statuses[status] = statuses.get(status, 0) + 1
    print(" ".join("%d x%d" % kv for kv in sorted(statuses.items())))
    return True


def cmd_wssend(http_port, path, dcl_file):
    """Upgrades to `path`, sends the file as one binary message, then closes."""
    s, status = ws_connect(http_port, path)
    if status == 101:
        s.sendall(ws_binary(open(dcl_file, "rb").read()))
        closed_by_server(s, 1.0)
    s.close()
    print(status)
    return status == 101


def cmd_deflatejoin(http_port, path, n, seconds):
    """n WebSocket joiners at once, each offering permessage-deflate as browsers do; reads every
    one's first message (the snapshot) concurrently while a thread polls /healthz. Prints the
    joiners served, how many snapshots came deflated (RSV1 set), those cut before theirs, and
    /healthz's worst latency (issue 23 item 5). Exit 0: all served, none deflated."""
    import selectors
    import threading
    worst = [0.0]
    stop = threading.Event()

    def poll():
        while not stop.is_set():
            worst[0] = max(worst[0], healthz(http_port, 10.0)[1])
            time.sleep(0.1)

    poller = threading.Thread(target=poll)
    poller.start()
    sel = selectors.DefaultSelector()
    state = {}
    for _ in range(n):
        s, status = ws_connect(http_port, path, extra="Sec-WebSocket-Extensions: "
                               "permessage-deflate; client_max_window_bits\r\n")
        if status == 101:
            s.setblocking(False)
            state[s] = {"buf": b"", "need": None, "rsv1": False, "done": False}
            sel.register(s, selectors.EVENT_READ)
    deadline = time.monotonic() + seconds
    served = deflated = cut = 0
    while sel.get_map() and time.monotonic() < deadline:
        for key, _ in sel.select(0.5):
            s, st = key.fileobj, state[key.fileobj]
            try:
                chunk = s.recv(1 << 20)
            except BlockingIOError:
                continue
            except OSError:
                chunk = b""
            if not chunk:
                cut += 1
                sel.unregister(s)
                continue
            st["buf"] += chunk
            b = st["buf"]
            if st["need"] is None and len(b) >= 10:
                st["rsv1"] = bool(b[0] & 0x40)
                ln = b[1] & 0x7f
                head = 2
                if ln == 126:
                    ln, head = struct.unpack(">H", b[2:4])[0], 4
                elif ln == 127:
                    ln, head = struct.unpack(">Q", b[2:10])[0], 10
                st["need"] = head + ln
            if st["need"] is not None and len(b) >= st["need"]:
                served += 1
                deflated += 1 if st["rsv1"] else 0
                sel.unregister(s)
    stop.set()
    poller.join()
    print("served %d/%d, deflated snapshots %d, cut %d, /healthz worst %.2f s"
          % (served, n, deflated, cut, worst[0]))
    return served == n and deflated == 0


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def cmd_token(secret_file, trick, scene, role):
    secret = open(secret_file, "rb").read().strip()
    now = int(time.time())
    header = {"alg": "HS256", "typ": "JWT"}
    claims = {"sub": "redteam", "scenes": [scene], "role": role, "exp": now + 300}
    if trick == "expired":
        claims["exp"] = now - 3600
    elif trick == "not_yet_valid":
        claims["nbf"] = now + 3600
    elif trick == "wrong_scene":
        claims["scenes"] = ["elsewhere"]
    elif trick == "wrong_key":
        secret = b"not-the-server-secret-but-long-enough-for-hs256!"
    signing = b64(json.dumps(header).encode()) + "." + b64(json.dumps(claims).encode())
    sig = b64(hmac.new(secret, signing.encode(), hashlib.sha256).digest())
    token = signing + "." + sig
    if trick == "alg_none":
        token = b64(json.dumps({"alg": "none", "typ": "JWT"}).encode()) + "." + \
            b64(json.dumps(claims).encode()) + "."
    elif trick == "tampered":
        forged = dict(claims, scenes=["*"], role="write")
        token = b64(json.dumps(header).encode()) + "." + b64(json.dumps(forged).encode()) + "." + sig
    elif trick == "garbage":
        token = "x" * 300
    elif trick == "log_forge":
        claims["sub"] = 'alice" role=write scene=admin'
        signing = b64(json.dumps(header).encode()) + "." + b64(json.dumps(claims).encode())
        token = signing + "." + b64(hmac.new(secret, signing.encode(), hashlib.sha256).digest())
    print(token)
    return True


def cmd_tlsclose(tcp_port, ca):
    """Sends an empty frame over TLS; prints how the server ended the connection."""
    ctx = ssl.create_default_context(cafile=ca)
    raw = socket.create_connection((HOST, tcp_port), timeout=10)
    s = ctx.wrap_socket(raw, server_hostname="127.0.0.1", suppress_ragged_eofs=False)
    s.sendall(struct.pack("<I", 0))
    got = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                print("close_notify received after %d bytes (SSL_ERROR_ZERO_RETURN)" % len(got))
                return True
            got += chunk
    except ssl.SSLEOFError:
        print("truncated: TCP closed without close_notify after %d bytes" % len(got))
    except OSError as e:
        print("error: %s" % e)
    return False


def cmd_rawhttp(http_port, kind):
    if kind == "headers":
        data = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * 9000 + b"\r\n\r\n"
    elif kind == "path":
        data = b"GET /" + b"p" * (1 << 20) + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    else:
        data = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n\r\nhello"
    code, _ = http_raw(http_port, data, 10.0)
    print(code)
    return True


def cmd_reserve(http_port, idle, probes, ca):
    """Opens `idle` connections that never finish (slow headers; with `ca`, TLS handshakes
    never started), then sends `probes` /healthz requests one after the other (over TLS with
    `ca`); prints how many were answered 200."""
    raise_nofile(idle + probes + 64)
    held = []
    for _ in range(idle):
        try:
            s = connect(http_port)
            if ca == "-":
                s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            held.append(s)
        except OSError:
            break
    ctx = ssl.create_default_context(cafile=ca) if ca != "-" else None
    answered = 0
    for _ in range(probes):
        try:
            s = socket.create_connection((HOST, http_port), timeout=5)
            if ctx:
                s = ctx.wrap_socket(s, server_hostname="127.0.0.1")
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            reply = b""
            while b"\r\n" not in reply:
                chunk = s.recv(4096)
                if not chunk:
                    break
                reply += chunk
            s.close()
            answered += reply.startswith(b"HTTP/1.1 200")
        except OSError:
            pass
    print("%d idle held; /healthz %d/%d answered 200" % (len(held), answered, probes))
    return answered == probes


def main(argv):
    cmd, args = argv[1], argv[2:]
    if cmd == "malformed":
        ok = cmd_malformed(int(args[0]), int(args[1]))
    elif cmd == "fuzzframes":
        ok = cmd_fuzzframes(int(args[0]), int(args[1]), args[2], int(args[3]))
    elif cmd == "slowloris":
        ok = cmd_slowloris(int(args[0]), int(args[1]), int(args[2]))
    elif cmd == "hold":
        ok = cmd_hold(int(args[0]), int(args[1]), int(args[2]), args[3])
    elif cmd == "slowreader":
        ok = cmd_slowreader(int(args[0]), args[1], int(args[2]), args[3])
    elif cmd == "upgrades":
        ok = cmd_upgrades(int(args[0]), args[1], int(args[2]))
    elif cmd == "wssend":
        ok = cmd_wssend(int(args[0]), args[1], args[2])
    elif cmd == "deflatejoin":
        ok = cmd_deflatejoin(int(args[0]), args[1], int(args[2]), int(args[3]))
    elif cmd == "token":
        ok = cmd_token(args[0], args[1], args[2], args[3])
    elif cmd == "tlsclose":
        ok = cmd_tlsclose(int(args[0]), args[1])
    elif cmd == "rawhttp":
        ok = cmd_rawhttp(int(args[0]), args[1])
    elif cmd == "reserve":
        ok = cmd_reserve(int(args[0]), int(args[1]), int(args[2]), args[3])
    elif cmd == "healthz":
        code, took = healthz(int(args[0]))
        print("%d %.3f" % (code, took))
        ok = code == 200
    else:
        print("unknown probe %s" % cmd)
        ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
