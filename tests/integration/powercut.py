"""A simulated power cut for a directory, with powercut_shim.c.

The shim (libsamsa_powercut.so, preloaded into the process under test)
copies into a shadow directory what each fsync/fdatasync under the watched
directory made durable; see powercut_shim.c for the format and for what is
and is not modelled. Here:

- baseline(root, shadow): everything now under root counts as durable (the
  state a test starts a process on), the shadow starts from that;
- env(root, shadow, binary): the environment that preloads the shim into
  binary (after the ASan/TSan runtime when binary links one dynamically);
- rollback(root, shadow): after the process was SIGKILLed, rebuild root
  from the shadow alone: each directory holds the entries of its last
  fsync (or of the baseline), each file its content at its last
  fsync/fdatasync (empty if it was never synced since it was created).
"""

import os
import shutil
import subprocess

SHIM = "libsamsa_powercut.so"


def shim_path(binary):
    """The shim, in the build directory (SAMSA_BUILD_DIR, else binary's)."""
    build = os.environ.get("SAMSA_BUILD_DIR") or os.path.dirname(os.path.abspath(binary))
    path = os.path.join(build, SHIM)
    if not os.path.exists(path):
        raise FileNotFoundError("%s not built (cmake target samsa_powercut)" % path)
    return path


def sanitizer_runtimes(binary):
    """The ASan/TSan runtime binary loads as a shared library (gcc's
    -fsanitize links it dynamically; clang's links it in): it must come
    first in LD_PRELOAD, before the shim (ASan checks that it is first)."""
    out = subprocess.run(["ldd", binary], capture_output=True, text=True).stdout
    libs = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] == "=>" and \
                parts[0].startswith(("libasan.", "libtsan.")):
            libs.append(parts[2])
    return libs


def env(root, shadow, binary):
    preload = sanitizer_runtimes(binary) + [shim_path(binary)]
    return {"LD_PRELOAD": ":".join(preload),
            "SAMSA_POWERCUT_DIR": os.path.realpath(root),
            "SAMSA_POWERCUT_SHADOW": os.path.realpath(shadow)}


def _write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def baseline(root, shadow):
    """The shadow := everything under root, as if all of it were synced."""
    shutil.rmtree(shadow, ignore_errors=True)
    os.makedirs(shadow)
    _write(os.path.join(shadow, "root"), b"%d" % os.stat(root).st_ino)
    for dirpath, dirnames, filenames in os.walk(root):
        lines = []
        for name in sorted(dirnames + filenames):
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            if os.path.isdir(path):
                lines.append("d %d %s\n" % (st.st_ino, name))
            elif os.path.isfile(path):
                lines.append("f %d %s\n" % (st.st_ino, name))
                shutil.copyfile(path, os.path.join(shadow, "f%d" % st.st_ino))
        _write(os.path.join(shadow, "d%d" % os.stat(dirpath).st_ino),
               "".join(lines).encode())


def _listing(shadow, ino):
    try:
        with open(os.path.join(shadow, "d%s" % ino), "rb") as f:
            text = f.read().decode()
    except FileNotFoundError:
        return []                       # created, never fsynced: empty
    out = []
    for line in text.splitlines():
        kind, num, name = line.split(" ", 2)
        out.append((kind, num, name))
    return out


def _build(shadow, ino, path, seen):
    assert ino not in seen, "directory loop in the shadow at %s" % path
    seen.add(ino)
    for kind, num, name in _listing(shadow, ino):
        sub = os.path.join(path, name)
        if kind == "d":
            os.mkdir(sub)
            _build(shadow, num, sub, seen)
        else:
            src = os.path.join(shadow, "f%s" % num)
            if os.path.exists(src):
                shutil.copyfile(src, sub)
            else:
                _write(sub, b"")        # never synced: no data
    seen.discard(ino)


def rollback(root, shadow):
    """Replaces root by what the shadow says is on the disk; returns the
    (path, size) of every file, for a test's log."""
    with open(os.path.join(shadow, "root")) as f:
        ino = f.read().strip()
    new = root + ".powercut"
    shutil.rmtree(new, ignore_errors=True)
    os.mkdir(new)
    _build(shadow, ino, new, set())
    shutil.rmtree(root)
    os.rename(new, root)
    files = []
    for dirpath, _, filenames in os.walk(root):
        for name in filenames:
            p = os.path.join(dirpath, name)
            files.append((os.path.relpath(p, root), os.path.getsize(p)))
    return sorted(files)
