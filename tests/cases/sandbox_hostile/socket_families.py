# must: only AF_UNIX, AF_INET, AF_INET6 and NETLINK_ROUTE sockets can be made (raw packet, kernel crypto, bluetooth,
# must: CAN, TIPC, RDS, XDP, KCM, Qualcomm IPC, ..., and other netlink protocols are refused); the allowed ones work
# expect: {"limits": {"wall_s": 20}, "exit": "zero", "stdout_contains": ["refused:all", "allowed:ok"]}
import socket
families = {"PACKET": 17, "ALG": 38, "BLUETOOTH": 31, "CAN": 29, "TIPC": 30, "RDS": 21, "XDP": 44, "KCM": 41,
            "QIPCRTR": 42, "APPLETALK": 5, "X25": 9, "AX25": 3, "IPX": 4, "KEY": 15, "LLC": 26, "MPLS": 28,
            "PHONET": 35, "IEEE802154": 36, "CAIF": 37, "NFC": 39, "SMC": 43, "MCTP": 45, "VSOCK": 40}
made = []
for name, family in families.items():
    for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM, socket.SOCK_RAW, socket.SOCK_SEQPACKET):
        try:
            socket.socket(family, kind).close()
            made.append(f"{name}/{kind}")
        except OSError:
            pass
for proto in (4, 9, 12, 15, 16):  # SOCK_DIAG, AUDIT, NETFILTER, KOBJECT_UEVENT, GENERIC
    try:
        socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, proto).close()
        made.append(f"NETLINK/{proto}")
    except OSError:
        pass
try:
    socket.socketpair(socket.AF_INET, socket.SOCK_STREAM)
    made.append("socketpair-inet")
except OSError:
    pass
print("refused:all" if not made else f"MADE {made}")
ok = []
a, b = socket.socketpair()
a.sendall(b"u")
ok.append(b.recv(1) == b"u")
for fam, addr in ((socket.AF_INET, ("127.0.0.1", 0)), (socket.AF_INET6, ("::1", 0))):
    try:
        s = socket.socket(fam, socket.SOCK_STREAM)
        s.bind(addr)
        ok.append(True)
    except OSError:
        ok.append(fam == socket.AF_INET6)  # a kernel without IPv6 loopback is fine
ok.append(len(socket.if_nameindex()) >= 1)
print("allowed:ok" if all(ok) else f"allowed:BROKEN {ok}")
