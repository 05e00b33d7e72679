#!/usr/bin/env python3
"""Self-test of check_layers.py: the tree as it is passes; a copy of src/
with one planted upward (or sideways) include fails, naming the file, the
line and the rule.  Each plant is a real arrow the house forbids."""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CHECK = os.path.join(HERE, "check_layers.py")

# (file under src/, include to plant, what the message must say)
PLANTS = [
    ("util/alloc.c", "broker/broker.h", "util/ may not include broker/"),
    ("net/conn.h", "net/server/proc.h", "net/ may not include net/server/"),
    ("log/plog.c", "meta/image.h", "log/ may not include meta/"),
    ("client/mdcache.c", "client/admin/admin_int.h",
     "client/ may not include client/admin/"),
    ("client/producer/sender.c", "client/consumer/cfetch.h",
     "client/producer/ may not include client/consumer/"),
    ("broker/group/grp.c", "broker/broker.h",
     "broker/group/ may include only broker's services"),
    ("broker/txn/txn.c", "broker/handlers/tpresp.h",
     "broker/txn/ may not include broker/handlers/"),
    ("cli/cmd_topic.c", "broker/broker.h", "cli/ may not include broker/"),
]


def run(root):
    p = subprocess.run([sys.executable, CHECK, root], capture_output=True,
                       text=True, timeout=120)
    return p.returncode, p.stdout


def main():
    rc, out = run(ROOT)
    if rc != 0:
        print("the tree itself fails:\n" + out)
        return 1
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(os.path.join(ROOT, "src"), os.path.join(tmp, "src"))
        for rel, inc, want in PLANTS:
            path = os.path.join(tmp, "src", rel)
            if not os.path.exists(path):
                print("plant target %s is gone: update PLANTS" % rel)
                failures += 1
                continue
            with open(path, encoding="utf-8") as f:
                text = f.read()
            lines = text.count("\n")
            with open(path, "a", encoding="utf-8") as f:
                f.write('#include "%s"\n' % inc)
            rc, out = run(tmp)
            where = "src/%s:%d:" % (rel, lines + 1)
            if rc != 1 or where not in out or want not in out:
                print("planting %s in %s: exit %d, expected 1 with '%s %s':\n%s"
                      % (inc, rel, rc, where, want, out))
                failures += 1
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
    print("layers self-test: %d plant(s), %d failure(s)" % (len(PLANTS), failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
