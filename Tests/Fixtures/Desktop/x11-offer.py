#!/usr/bin/python3
"""Owns the X11 CLIPBOARD with several targets at once, as a password manager
does (xclip offers one). Needs python3-xlib.

usage: x11-offer.py [--primary] [--die-on-send] TYPE=TEXT...
Prints "ready" once it owns the selection; serves it until another client takes
it, for at most 60 s. --die-on-send exits at the first request for content
without answering it: an owner that disappears mid-read.
"""
import os, sys, time
from Xlib import X, Xatom, display
from Xlib.protocol import event

args = sys.argv[1:]
die_on_send = "--die-on-send" in args
offers = dict(a.split("=", 1) for a in args if not a.startswith("--"))

d = display.Display()
window = d.screen().root.create_window(0, 0, 1, 1, 0, X.CopyFromParent)
selection = Xatom.PRIMARY if "--primary" in args else d.intern_atom("CLIPBOARD")
targets = d.intern_atom("TARGETS")
atoms = {d.intern_atom(name): name for name in offers}
window.set_selection_owner(selection, X.CurrentTime)
d.flush()
if d.get_selection_owner(selection) != window:
    sys.exit("could not own the selection")
print("ready", flush=True)
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    if not d.pending_events():
        time.sleep(0.01)
        continue
    e = d.next_event()
    if e.type == X.SelectionClear:
        sys.exit(0)
    if e.type != X.SelectionRequest:
        continue
    prop = e.property or e.target
    if e.target == targets:
        e.requestor.change_property(prop, Xatom.ATOM, 32, [targets] + list(atoms))
    elif e.target in atoms:
        if die_on_send:
            os._exit(0)
        e.requestor.change_property(prop, e.target, 8, offers[atoms[e.target]].encode())
    else:
        prop = X.NONE
    reply = event.SelectionNotify(
        time=e.time, requestor=e.requestor, selection=e.selection, target=e.target, property=prop)
    e.requestor.send_event(reply)
    d.flush()
