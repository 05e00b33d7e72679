"""Every Kafka request and response, encoded and decoded from Kafka's own
message definitions: the common/message/*.json files inside the
kafka-clients jar of the Apache Kafka the differential tests run against
(kafka_broker.kafka_lib()), so the cases here speak exactly that
release's protocol, every API and every version, without a hand-written
codec per API.

    enc = kmsg.encode("EndTxnRequest", 3, {"transactional_id": "t", ...})
    resp = kmsg.call(conn, "EndTxn", 3, {...})     # -> dict

Field names are the JSON names in snake_case (ProducerEpoch ->
producer_epoch), as kwire's hand-written decoders name them, so
diffkit.MASK_KEYS applies.  A field left out of a request dict gets its
default ("default" in the JSON, else 0 / "" / [] / false; null where the
version allows null and the default is "null").  Decoding returns every
field the version has; tagged fields absent on the wire get their default.
"""

import glob
import json
import os
import re
import struct
import uuid
import zipfile

import kwire

_SPECS = None       # name -> spec dict
_BY_KEY = {}        # (api_key, "request"|"response") -> name


def _strip_comments(text):
    """The JSON files carry // comments (outside strings)."""
    out, i, n, in_str = [], 0, len(text), False
    while i < n:
        c = text[i]
        if in_str:
            out.append(c)
            if c == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 1
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
            out.append(c)
        elif c == "/" and i + 1 < n and text[i + 1] == "/":
            while i < n and text[i] != "\n":
                i += 1
            continue
        else:
            out.append(c)
        i += 1
    return "".join(out)


def _jar():
    import kafka_broker
    jars = glob.glob(os.path.join(kafka_broker.kafka_lib(), "kafka-clients-*.jar"))
    if not jars:
        raise RuntimeError("no kafka-clients jar in %s (scripts/deps.sh fetches it)"
                           % kafka_broker.kafka_lib())
    return sorted(jars)[-1]


def specs():
    global _SPECS
    if _SPECS is None:
        _SPECS = {}
        with zipfile.ZipFile(_jar()) as z:
            for name in z.namelist():
                if not re.match(r"common/message/\w+\.json$", name):
                    continue
                spec = json.loads(_strip_comments(z.read(name).decode()))
                _SPECS[spec["name"]] = spec
                if spec.get("type") in ("request", "response"):
                    _BY_KEY[(spec["apiKey"], spec["type"])] = spec["name"]
                    if spec["type"] == "request":
                        first = _first(spec.get("flexibleVersions", "none"))
                        if first is not None and spec["apiKey"] != 18:
                            kwire.FLEXIBLE_FROM.setdefault(spec["apiKey"], first)
    return _SPECS


def _first(vs):
    if vs in (None, "none"):
        return None
    return int(vs.split("-")[0].rstrip("+"))


def in_versions(vs, v):
    """Kafka's version-range syntax: "0+", "3-5", "2", "none"."""
    if vs is None or vs == "none":
        return False
    if vs.endswith("+"):
        return v >= int(vs[:-1])
    if "-" in vs:
        lo, hi = vs.split("-")
        return int(lo) <= v <= int(hi)
    return v == int(vs)


def snake(name):
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", s)
    return s.lower()


def api_key(api):
    """"EndTxn" or 26 -> 26."""
    if isinstance(api, int):
        return api
    return specs()[api + "Request"]["apiKey"]


def _spec(api, kind):
    specs()
    if isinstance(api, int):
        return _SPECS[_BY_KEY[(api, kind)]]
    return _SPECS[api + ("Request" if kind == "request" else "Response")]


def valid_versions(api, kind="request"):
    vs = _spec(api, kind)["validVersions"]
    if vs == "none":
        return range(0)
    lo, hi = vs.split("-") if "-" in vs else (vs, vs)
    return range(int(lo), int(hi) + 1)


class _Ctx:
    """The struct types a message can name (its own and commonStructs)."""
    def __init__(self, spec):
        self.structs = {}
        for cs in spec.get("commonStructs", []):
            self.structs[cs["name"]] = cs["fields"]
        self._collect(spec["fields"])

    def _collect(self, fields):
        for f in fields:
            if "fields" in f:
                t = f["type"][2:] if f["type"].startswith("[]") else f["type"]
                self.structs[t] = f["fields"]
                self._collect(f["fields"])

    def fields_of(self, f):
        if "fields" in f:
            return f["fields"]
        t = f["type"][2:] if f["type"].startswith("[]") else f["type"]
        return self.structs[t]


PRIMS = {"bool", "int8", "int16", "uint16", "int32", "uint32", "int64",
         "float64", "string", "bytes", "records", "uuid"}


def _default(f, v):
    t = f["type"]
    d = f.get("default")
    nullable = in_versions(f.get("nullableVersions"), v)
    if d == "null" and nullable:
        return None
    if t.startswith("[]"):
        return []
    if t in ("string",):
        return d if d is not None else ""
    if t in ("bytes", "records"):
        return b""
    if t == "bool":
        return d in (True, "true")
    if t == "uuid":
        return "AAAAAAAAAAAAAAAAAAAAAA"
    if t == "float64":
        return float(d) if d is not None else 0.0
    if t in PRIMS:
        if d is None or d == "":
            return 0
        return int(d, 0) if isinstance(d, str) else int(d)
    return None if nullable else {}     # a struct


def _uuid_bytes(u):
    if isinstance(u, bytes):
        return u
    import base64
    return base64.urlsafe_b64decode(u + "=" * (-len(u) % 4))


def _uuid_text(b):
    import base64
    return base64.urlsafe_b64encode(b).decode().rstrip("=")


# -- encoding ------------------------------------------------------------------

def _write_value(w, ctx, f, t, val, v, flex):
    nullable = in_versions(f.get("nullableVersions"), v)
    if t.startswith("[]"):
        inner = t[2:]
        if val is None:
            if not nullable:
                raise ValueError("%s is not nullable in v%d" % (f["name"], v))
            if flex:
                w.uvarint(0)
            else:
                w.i32(-1)
            return
        if flex:
            w.uvarint(len(val) + 1)
        else:
            w.i32(len(val))
        for item in val:
            if inner in PRIMS:
                _write_value(w, ctx, {"name": f["name"]}, inner, item, v, flex)
            else:
                _write_struct(w, ctx, ctx.fields_of(f), item, v, flex)
        return
    if t == "bool":
        w.i8(1 if val else 0)
    elif t == "int8":
        w.i8(val)
    elif t == "int16":
        w.i16(val)
    elif t == "uint16":
        w.raw(struct.pack(">H", val))
    elif t == "int32":
        w.i32(val)
    elif t == "uint32":
        w.raw(struct.pack(">I", val))
    elif t == "int64":
        w.i64(val)
    elif t == "float64":
        w.raw(struct.pack(">d", val))
    elif t == "uuid":
        w.raw(_uuid_bytes(val))
    elif t == "string":
        if val is None:
            if flex:
                w.uvarint(0)
            else:
                w.i16(-1)
        else:
            b = val.encode() if isinstance(val, str) else val
            if flex:
                w.uvarint(len(b) + 1)
            else:
                w.i16(len(b))
            w.raw(b)
    elif t in ("bytes", "records"):
        if val is None:
            if flex:
                w.uvarint(0)
            else:
                w.i32(-1)
        else:
            if flex:
                w.uvarint(len(val) + 1)
            else:
                w.i32(len(val))
            w.raw(val)
    else:                                   # a struct field
        if val is None:
            w.i8(-1)
        else:
            if nullable:
                w.i8(1)
            _write_struct(w, ctx, ctx.fields_of(f), val, v, flex)


def _write_struct(w, ctx, fields, d, v, flex):
    d = d or {}
    tagged = []
    for f in fields:
        if not in_versions(f["versions"], v):
            continue
        key = snake(f["name"])
        val = d.get(key, _default(f, v)) if key in d else _default(f, v)
        if flex and in_versions(f.get("taggedVersions"), v):
            if key in d and val != _default(f, v):
                tagged.append((f["tag"], f, val))
            continue
        _write_value(w, ctx, f, f["type"], val, v, flex)
    if flex:
        w.uvarint(len(tagged))
        for tag, f, val in sorted(tagged, key=lambda x: x[0]):
            sub = kwire.Writer()
            _write_value(sub, ctx, f, f["type"], val, v, True)
            b = sub.bytes()
            w.uvarint(tag)
            w.uvarint(len(b))
            w.raw(b)


def encode(name, v, d):
    """The body (no header) of message `name` ("EndTxnRequest") at v."""
    spec = specs()[name]
    flex = in_versions(spec.get("flexibleVersions"), v)
    w = kwire.Writer()
    _write_struct(w, _Ctx(spec), spec["fields"], d, v, flex)
    return w.bytes()


# -- decoding ------------------------------------------------------------------

def _read_value(r, ctx, f, t, v, flex):
    nullable = in_versions(f.get("nullableVersions"), v)
    if t.startswith("[]"):
        inner = t[2:]
        if flex:
            n = r.uvarint() - 1
        else:
            n = r.i32()
        if n < 0:
            return None
        out = []
        for _ in range(n):
            if inner in PRIMS:
                out.append(_read_value(r, ctx, {"name": f["name"]}, inner, v, flex))
            else:
                out.append(_read_struct(r, ctx, ctx.fields_of(f), v, flex))
        return out
    if t == "bool":
        return r.i8() != 0
    if t == "int8":
        return r.i8()
    if t == "int16":
        return r.i16()
    if t == "uint16":
        return struct.unpack(">H", r._take(2))[0]
    if t == "int32":
        return r.i32()
    if t == "uint32":
        return struct.unpack(">I", r._take(4))[0]
    if t == "int64":
        return r.i64()
    if t == "float64":
        return struct.unpack(">d", r._take(8))[0]
    if t == "uuid":
        return _uuid_text(r._take(16))
    if t == "string":
        n = r.uvarint() - 1 if flex else r.i16()
        return None if n < 0 else r._take(n).decode("utf-8", "replace")
    if t in ("bytes", "records"):
        n = r.uvarint() - 1 if flex else r.i32()
        return None if n < 0 else bytes(r._take(n))
    if nullable and r.i8() < 0:             # a nullable struct
        return None
    return _read_struct(r, ctx, ctx.fields_of(f), v, flex)


def _read_struct(r, ctx, fields, v, flex):
    out = {}
    by_tag = {}
    for f in fields:
        if not in_versions(f["versions"], v):
            continue
        if flex and in_versions(f.get("taggedVersions"), v):
            by_tag[f["tag"]] = f
            out[snake(f["name"])] = _default(f, v)
            continue
        out[snake(f["name"])] = _read_value(r, ctx, f, f["type"], v, flex)
    if flex:
        for _ in range(r.uvarint()):
            tag, size = r.uvarint(), r.uvarint()
            data = r._take(size)
            if tag in by_tag:
                f = by_tag[tag]
                out[snake(f["name"])] = _read_value(kwire.Reader(bytes(data)), ctx, f,
                                                    f["type"], v, True)
    return out


def decode(name, v, r):
    """Decode message `name` at v from kwire.Reader r (which must be used up)."""
    spec = specs()[name]
    flex = in_versions(spec.get("flexibleVersions"), v)
    out = _read_struct(r, _Ctx(spec), spec["fields"], v, flex)
    r.done(name)
    return out


def call(conn, api, v, body=None, timeout=10.0):
    """Send api's request at version v (body: a dict) on a kwire.Conn and
    decode its response."""
    specs()
    key = api_key(api)
    req = _SPECS[_BY_KEY[(key, "request")]]["name"]
    resp = _SPECS[_BY_KEY[(key, "response")]]["name"]
    r = conn.request_raw(key, v, encode(req, v, body or {}), timeout=timeout)
    return decode(resp, v, r)
