#!/usr/bin/env python3
"""Owns the Wayland clipboard with several types at once, as a password manager
does (wl-copy offers one). Speaks the wire protocol itself (wlr data control),
so it needs nothing but python3.

usage: wayland-offer.py [--primary] [--die-on-send] TYPE=TEXT...
Prints "ready" once the selection is set; serves it until another client takes
it, for at most 60 s. --die-on-send writes half the content to the first reader that
takes it and exits: an owner that disappears mid-read.
"""
import os, socket, struct, sys, time

args = sys.argv[1:]
primary = "--primary" in args
die_on_send = "--die-on-send" in args
offers = dict(a.split("=", 1) for a in args if not a.startswith("--"))

path = os.environ["WAYLAND_DISPLAY"]
if not path.startswith("/"):
    path = os.path.join(os.environ["XDG_RUNTIME_DIR"], path)
sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
sock.connect(path)

def string(text):
    data = text.encode() + b"\0"
    return struct.pack("<I", len(data)) + data + b"\0" * (-len(data) % 4)

def send(obj, opcode, payload=b"", fds=()):
    header = struct.pack("<II", obj, (8 + len(payload)) << 16 | opcode)
    ancillary = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack("%di" % len(fds), *fds))] if fds else []
    sock.sendmsg([header + payload], ancillary)

buffer, received_fds = b"", []
def events():
    """Yields (object, opcode, payload) for every event, reading as needed."""
    global buffer
    while True:
        while len(buffer) >= 8:
            obj, word = struct.unpack("<II", buffer[:8])
            size = word >> 16
            if len(buffer) < size:
                break
            payload, buffer = buffer[8:size], buffer[size:]
            yield obj, word & 0xFFFF, payload
        data, ancillary, _, _ = sock.recvmsg(65536, socket.CMSG_SPACE(16 * 4))
        if not data:
            sys.exit(0)
        for level, kind, raw in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                received_fds.extend(struct.unpack("%di" % (len(raw) // 4), raw[: len(raw) // 4 * 4]))
        buffer += data

def read_string(payload, offset=0):
    (length,) = struct.unpack_from("<I", payload, offset)
    return payload[offset + 4 : offset + 4 + length - 1].decode(), offset + 4 + length + (-length % 4)

REGISTRY, SYNC, SEAT, MANAGER, SOURCE, DEVICE, SET = 2, 3, 4, 5, 6, 7, 8
send(1, 1, struct.pack("<I", REGISTRY))  # wl_display.get_registry
send(1, 0, struct.pack("<I", SYNC))  # wl_display.sync
globals_ = {}
for obj, opcode, payload in events():
    if obj == REGISTRY and opcode == 0:
        (name,) = struct.unpack_from("<I", payload)
        interface, offset = read_string(payload, 4)
        (version,) = struct.unpack_from("<I", payload, offset)
        globals_[interface] = (name, version)
    elif obj == SYNC:
        break
if "zwlr_data_control_manager_v1" not in globals_:
    sys.exit("the compositor has no wlr data control")
for interface, new_id, version in [("wl_seat", SEAT, 1), ("zwlr_data_control_manager_v1", MANAGER, 2)]:
    name, offered = globals_[interface]
    send(REGISTRY, 0, struct.pack("<I", name) + string(interface) + struct.pack("<II", min(version, offered), new_id))
send(MANAGER, 0, struct.pack("<I", SOURCE))  # create_data_source
for mime in offers:
    send(SOURCE, 0, string(mime))  # offer
send(MANAGER, 1, struct.pack("<II", DEVICE, SEAT))  # get_data_device
send(DEVICE, 2 if primary else 0, struct.pack("<I", SOURCE))  # set_primary_selection / set_selection
send(1, 0, struct.pack("<I", SET))
deadline = time.monotonic() + 60
sock.settimeout(60)
announced = False
for obj, opcode, payload in events():
    if obj == SET and not announced:
        print("ready", flush=True)
        announced = True
    elif obj == 1 and opcode == 0:
        sys.exit("protocol error: %r" % payload)
    elif obj == SOURCE and opcode == 0:  # send(mime, fd)
        # A reader can come before the sync's answer: the selection is set by then.
        if not announced:
            print("ready", flush=True)
            announced = True
        mime, _ = read_string(payload)
        fd = received_fds.pop(0)
        content = offers.get(mime, "").encode()
        try:
            os.write(fd, content[: len(content) // 2] if die_on_send else content)
            if die_on_send:
                os._exit(0)
        except OSError:
            pass  # A reader that left without reading (wl-paste --watch's command).
        os.close(fd)
    elif obj == SOURCE and opcode == 1:  # cancelled: another client owns it now
        sys.exit(0)
    if time.monotonic() > deadline:
        sys.exit(0)
