# must: no network: connecting to a server listening on the host's 127.0.0.1 fails; only a loopback interface exists
# expect: {"limits": {"wall_s": 20}, "exit": "zero", "stdout_contains": "connect:BLOCKED", "stdout_not_contains": ["CONNECTED"]}
import socket
names = [n for _, n in socket.if_nameindex()]
print("interfaces:", names)
for host in ("127.0.0.1", "localhost"):
    try:
        s = socket.create_connection((host, __PORT__), timeout=3)
        s.sendall(b"escaped")
        print("CONNECTED", host)
    except OSError as exc:
        print("connect:BLOCKED", host, type(exc).__name__)
try:
    socket.getaddrinfo("pypi.org", 443)
    print("CONNECTED dns")
except OSError as exc:
    print("dns:BLOCKED", type(exc).__name__)
