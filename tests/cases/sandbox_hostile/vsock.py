# must: AF_VSOCK (virtio sockets reach the hypervisor host and are not namespaced) cannot be created or bound
# expect: {"limits": {"wall_s": 20}, "exit": "zero", "stdout_contains": "vsock:denied", "stdout_not_contains": ["BOUND", "CONNECTED"]}
import socket
AF_VSOCK, VMADDR_CID_ANY, VMADDR_CID_HOST = 40, 0xFFFFFFFF, 2
try:
    s = socket.socket(AF_VSOCK, socket.SOCK_STREAM)
except OSError as exc:
    print("vsock:denied", exc.errno)
else:
    try:
        s.bind((VMADDR_CID_ANY, 5000))
        print("BOUND")
    except OSError:
        print("vsock:created")
    try:
        s.connect((VMADDR_CID_HOST, 22))
        print("CONNECTED")
    except OSError:
        pass
