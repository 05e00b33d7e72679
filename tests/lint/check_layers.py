#!/usr/bin/env python3
"""Checks the #include lines of src/ against DESIGN.md's layer arrows, room
by room (a room is a folder under src/; a file belongs to the deepest room
that holds it).  Each room lists the rooms it may include; an include of
any other room is an arrow that runs up (or sideways where the house says
no), printed with its file and line.  Exit 1 if there is any.

    util <- config <- proto <- net <- net/server
    util <- proto <- log;  meta <- meta/controller (meta may use log: the
    metadata log is stored with the log code; log knows no meta, no net)
    broker (services: purgatory, quota, pidmgr, coordtopic; the wiring)
    <- broker/group, broker/txn <- broker/handlers <- server
    util <- config (its parsers), proto <- net <- client <- client/producer,
    client/consumer, client/admin <- cli

broker/group and broker/txn sit above broker's services but below its
wiring: of broker/ they may include only the headers in BROKER_SERVICES.
The three client rooms are siblings: none includes another."""
import os
import re
import sys

BASE = {"util"}
ALLOWED = {
    "util":             set(),
    "config":           {"util"},
    "proto":            {"util"},
    "net":              {"util", "proto"},
    "net/server":       {"util", "config", "proto", "net"},
    "log":              {"util", "proto"},
    "meta":             {"util", "config", "proto", "net", "log"},
    "meta/controller":  {"util", "config", "proto", "net", "log", "meta"},
    "broker":           {"util", "config", "proto", "net", "net/server", "log",
                         "meta", "meta/controller", "broker/group",
                         "broker/txn"},
    "broker/group":     {"util", "config", "proto", "net", "log", "meta",
                         "meta/controller", "broker"},
    "broker/txn":       {"util", "config", "proto", "net", "log", "meta",
                         "meta/controller", "broker", "broker/group"},
    "broker/handlers":  {"util", "config", "proto", "net", "net/server", "log",
                         "meta", "meta/controller", "broker", "broker/group",
                         "broker/txn"},
    "server":           {"util", "config", "proto", "net", "net/server", "log",
                         "meta", "meta/controller", "broker", "broker/group",
                         "broker/txn", "broker/handlers"},
    "client":           {"util", "config", "proto", "net"},
    "client/producer":  {"util", "config", "proto", "net", "client"},
    "client/consumer":  {"util", "config", "proto", "net", "client"},
    "client/admin":     {"util", "config", "proto", "net", "client"},
    "cli":              {"util", "proto", "net", "client", "client/producer",
                         "client/consumer", "client/admin"},
}
# what broker/group and broker/txn may include of broker/ itself
BROKER_SERVICES = {"broker/purgatory.h", "broker/quota.h", "broker/pidmgr.h",
                   "broker/coordtopic.h", "broker/coordload.h",
                   "broker/coordthread.h"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"((?:[a-z_]+/)+)([a-z_0-9]+\.h)"')


def room_of(path_in_src):
    """The deepest room holding a path relative to src/ (a folder path)."""
    parts = path_in_src.split("/")
    for n in range(len(parts), 0, -1):
        cand = "/".join(parts[:n])
        if cand in ALLOWED:
            return cand
    return None


def check_include(room, inc_dir, inc_file):
    target = room_of(inc_dir.rstrip("/"))
    if target is None:
        return None                     # generated (proto/gen/) counts as
    if target == room:                  # proto: room_of("proto/gen") = proto
        return None
    if target not in ALLOWED[room] and target not in BASE:
        return "%s/ may not include %s/" % (room, target)
    if room in ("broker/group", "broker/txn") and target == "broker" \
            and inc_dir + inc_file not in BROKER_SERVICES:
        return "%s/ may include only broker's services (%s), not %s" % (
            room, ", ".join(sorted(BROKER_SERVICES)), inc_dir + inc_file)
    return None


def main(root):
    bad = []
    src = os.path.join(root, "src")
    for dirpath, _, files in os.walk(src):
        rel = os.path.relpath(dirpath, src)
        if rel == ".":
            continue
        room = room_of(rel)
        if room is None:
            bad.append("src/%s: a directory no layer rule covers" % rel)
            continue
        for name in sorted(files):
            if not name.endswith((".c", ".h")):
                continue
            path = os.path.join(dirpath, name)
            with open(path, encoding="utf-8") as f:
                for lineno, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    why = check_include(room, m.group(1), m.group(2))
                    if why:
                        bad.append("%s:%d: %s" % (os.path.relpath(path, root),
                                                  lineno, why))
    for b in bad:
        print(b)
    print("layers: %d violation(s)" % len(bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
