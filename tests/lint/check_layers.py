#!/usr/bin/env python3
"""Checks the #include lines of src/ against DESIGN.md's layer arrows:
util <- proto <- net <- {log, meta} <- broker <- server, and
util <- proto <- net <- client <- cli; meta may use log (the metadata log
is stored with the log code), log may not use meta, and nothing in log/
knows about sockets (no net/).  Prints each violation; exit 1 if any."""
import os
import re
import sys

ALLOWED = {
    "util":   {"util"},
    "proto":  {"util", "proto"},
    "net":    {"util", "proto", "net"},
    "log":    {"util", "proto", "log"},
    "meta":   {"util", "proto", "net", "log", "meta"},
    "broker": {"util", "proto", "net", "log", "meta", "broker"},
    "server": {"util", "proto", "net", "log", "meta", "broker", "server"},
    "client": {"util", "proto", "net", "client"},
    "cli":    {"util", "proto", "net", "client", "cli"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/')


def main(root):
    bad = []
    src = os.path.join(root, "src")
    for layer in sorted(os.listdir(src)):
        ldir = os.path.join(src, layer)
        if not os.path.isdir(ldir):
            continue
        if layer not in ALLOWED:
            bad.append("src/%s: a directory no layer rule covers" % layer)
            continue
        for dirpath, _, files in os.walk(ldir):
            for name in sorted(files):
                if not name.endswith((".c", ".h")):
                    continue
                path = os.path.join(dirpath, name)
                with open(path, encoding="utf-8") as f:
                    for lineno, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if m and m.group(1) not in ALLOWED[layer]:
                            bad.append("%s:%d: %s/ may not include %s/"
                                       % (os.path.relpath(path, root), lineno,
                                          layer, m.group(1)))
    for b in bad:
        print(b)
    print("layers: %d violation(s)" % len(bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
