#!/usr/bin/python3
"""An X server that speaks just enough of the protocol for clip watch's client,
or answers it wrongly on purpose. Listens on the abstract socket of a free
display number, prints that number, and serves one connection for at most 60 s.

usage: x11-fake-server.py MODE [ARG]
  short-setup BYTES  answers the setup with success and a body of BYTES bytes
  huge-reply WORDS   answers the first request with a reply announcing WORDS
                     more 4-byte words, then sends nothing
  drip               answers the first request one byte a second
  serve              answers the setup, InternAtom, QueryExtension (XFIXES) and
                     XFixes QueryVersion, then keeps the connection open
"""
import random, socket, struct, sys, time

mode = sys.argv[1]
arg = int(sys.argv[2], 0) if len(sys.argv) > 2 else 0
deadline = time.monotonic() + 60

listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
for _ in range(100):
    number = random.randint(20000, 59000)  # clip watch takes displays below 59535 (port 6000 + N)
    try:
        listener.bind("\0/tmp/.X11-unix/X%d" % number)
        break
    except OSError:
        continue
listener.listen(1)
print(number, flush=True)
listener.settimeout(60)
client, _ = listener.accept()
client.settimeout(max(1, deadline - time.monotonic()))


def read(count):
    data = b""
    while len(data) < count:
        piece = client.recv(count - len(data))
        if not piece:
            sys.exit(0)
        data += piece
    return data


def pad(n):
    return (n + 3) & ~3


def request():
    header = read(4)
    opcode, minor, length = struct.unpack("<BBH", header)
    read(length * 4 - 4)
    return opcode, minor


def reply(body=b"", more=None):
    """A reply: 32 bytes, then `body`; `more` overrides the announced length."""
    words = len(body) // 4 if more is None else more
    return struct.pack("<BBHI", 1, 0, 1, words) + b"\0" * 24 + body


# The setup request: byte order, protocol version, then the authorization's name and data.
header = read(12)
name_length, data_length = struct.unpack("<HH", header[6:10])
read(pad(name_length) + pad(data_length))

if mode == "short-setup":
    client.sendall(struct.pack("<BBHHH", 1, 0, 11, 0, arg // 4) + b"\0" * arg)
else:
    vendor = b"fake"
    fixed = struct.pack("<IIIIHHBBBBBBBB", 1, 0x200000, 0x1FFFFF, 0, len(vendor), 65535, 1, 0, 0, 0, 32, 32, 8, 255) + b"\0" * 4
    screen = struct.pack("<IIIII", 0x100, 0x20, 0xFFFFFF, 0, 0) + b"\0" * 20
    body = fixed + vendor + screen
    client.sendall(struct.pack("<BBHHH", 1, 0, 11, 0, len(body) // 4) + body)
    if mode == "huge-reply":
        request()
        client.sendall(reply(more=arg))
    elif mode == "drip":
        request()
        for byte in reply(struct.pack("<I", 1) + b"\0" * 4):
            client.sendall(bytes([byte]))
            time.sleep(1)
    elif mode == "serve":
        for _ in range(3):
            opcode, minor = request()
            if opcode == 16:  # InternAtom: the atom
                client.sendall(struct.pack("<BBHII", 1, 0, 1, 0, 1) + b"\0" * 20)
            elif opcode == 98:  # QueryExtension: present, major opcode 140
                client.sendall(struct.pack("<BBHIBBBB", 1, 0, 2, 0, 1, 140, 0, 0) + b"\0" * 20)
            else:  # XFixes QueryVersion
                client.sendall(struct.pack("<BBHIII", 1, 0, 3, 0, 5, 0) + b"\0" * 16)
# Holds the connection until the client closes it.
while time.monotonic() < deadline:
    try:
        if not client.recv(4096):
            break
    except socket.timeout:
        break
