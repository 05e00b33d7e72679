"""A small, strict parser of the Prometheus text exposition format 0.0.4,
written for samsa's tests (standard library only).

parse(text) -> {family_name: Family}; raises PromError naming the line for
anything the format does not allow or that a scraper would reject:
  - metric and label names outside [a-zA-Z_:][a-zA-Z0-9_:]* / [a-zA-Z_][a-zA-Z0-9_]*
  - label values with escapes other than \\\\, \\" and \\n, unterminated
    quotes, duplicate label names in one sample
  - values that are not Go floats (NaN, +Inf, -Inf allowed); timestamps
    that are not integers
  - HELP or TYPE given twice for a family, TYPE after the family's first
    sample, unknown types, a family's samples not contiguous
  - samples whose name does not fit their family's type (a histogram has
    only name_bucket, name_sum, name_count)
  - duplicate series (same name and label set)
  - histograms: every label set needs buckets with an `le` label, le
    values ascending and ending in +Inf, cumulative counts non-decreasing,
    _count equal to the +Inf bucket, and a _sum
  - counters below zero, a missing final newline
"""

import math
import re

NAME_RE = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
LABEL_RE = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
TYPES = ("counter", "gauge", "histogram", "summary", "untyped")
FLOAT_RE = re.compile(r"[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)")


class PromError(ValueError):
    pass


class Family:
    def __init__(self, name):
        self.name = name
        self.type = None
        self.help = None
        self.samples = []       # (name, {labels}, value)

    def value(self, sample=None, **labels):
        """The value of the sample with exactly these labels (sample: the
        sample's name, by default the family's)."""
        name = sample or self.name
        for n, ls, v in self.samples:
            if n == name and ls == labels:
                return v
        raise KeyError("%s%s" % (name, labels))

    def find(self, sample=None, **labels):
        """Samples whose labels include these."""
        name = sample or self.name
        return [(ls, v) for n, ls, v in self.samples
                if n == name and all(ls.get(k) == v2 for k, v2 in labels.items())]


def parse_float(s, where):
    if s in ("NaN", "+Inf", "Inf", "-Inf"):
        return {"NaN": math.nan, "-Inf": -math.inf}.get(s, math.inf)
    if not FLOAT_RE.fullmatch(s):
        raise PromError("%s: bad value %r" % (where, s))
    return float(s)


def parse_labels(s, i, where):
    """Parses {a="b",...} starting at s[i] == '{'; returns (labels, index
    after '}')."""
    labels = {}
    i += 1
    while True:
        if i < len(s) and s[i] == "}":
            return labels, i + 1
        m = LABEL_RE.match(s, i)
        if not m:
            raise PromError("%s: bad label name at %r" % (where, s[i:]))
        name = m.group(0)
        i = m.end()
        if s[i:i + 2] != '="':
            raise PromError("%s: expected =\" after label %s" % (where, name))
        i += 2
        val = []
        while True:
            if i >= len(s):
                raise PromError("%s: unterminated label value" % where)
            c = s[i]
            if c == "\\":
                nxt = s[i + 1:i + 2]
                if nxt not in ("\\", '"', "n"):
                    raise PromError("%s: bad escape \\%s" % (where, nxt))
                val.append("\n" if nxt == "n" else nxt)
                i += 2
            elif c == '"':
                i += 1
                break
            elif c == "\n":
                raise PromError("%s: newline in label value" % where)
            else:
                val.append(c)
                i += 1
        if name in labels:
            raise PromError("%s: label %s twice" % (where, name))
        labels[name] = "".join(val)
        if i < len(s) and s[i] == ",":
            i += 1
            continue
        if i < len(s) and s[i] == "}":
            return labels, i + 1
        raise PromError("%s: expected , or } after label %s" % (where, name))


def parse_sample(line, where):
    m = NAME_RE.match(line)
    if not m:
        raise PromError("%s: bad metric name in %r" % (where, line))
    name = m.group(0)
    i = m.end()
    labels = {}
    if i < len(line) and line[i] == "{":
        labels, i = parse_labels(line, i, where)
    rest = line[i:]
    if not rest.startswith(" "):
        raise PromError("%s: expected a space before the value" % where)
    parts = rest.strip(" ").split(" ")
    if len(parts) not in (1, 2) or "" in parts:
        raise PromError("%s: expected value [timestamp], got %r" % (where, rest))
    value = parse_float(parts[0], where)
    if len(parts) == 2 and not re.fullmatch(r"-?\d+", parts[1]):
        raise PromError("%s: bad timestamp %r" % (where, parts[1]))
    return name, labels, value


def family_of(name, families, current):
    """The family a sample belongs to: its own name, or for histogram and
    summary families the name less _bucket/_sum/_count."""
    if current is not None:
        if name == current.name and current.type not in ("histogram",):
            return current
        for suf in ("_bucket", "_sum", "_count"):
            if name == current.name + suf and current.type in ("histogram", "summary"):
                if suf == "_bucket" and current.type == "summary":
                    continue
                return current
    return None


def parse(text):
    if text and not text.endswith("\n"):
        raise PromError("the exposition must end with a newline")
    families = {}
    current = None
    seen_series = set()
    closed = set()              # families whose samples are over
    for n, line in enumerate(text.split("\n")[:-1], 1):
        where = "line %d" % n
        if line.strip() == "":
            continue
        if line.startswith("#"):
            parts = line.split(" ", 3)
            if len(parts) >= 3 and parts[1] in ("HELP", "TYPE"):
                name = parts[2]
                if not NAME_RE.fullmatch(name):
                    raise PromError("%s: bad metric name %r" % (where, name))
                if name in closed:
                    raise PromError("%s: %s of %s after its samples ended"
                                    % (where, parts[1], name))
                fam = families.get(name)
                if fam is None:
                    fam = families[name] = Family(name)
                if current is not None and current is not fam:
                    closed.add(current.name)
                current = fam
                if parts[1] == "TYPE":
                    if len(parts) != 4 or parts[3] not in TYPES:
                        raise PromError("%s: bad TYPE line %r" % (where, line))
                    if fam.type is not None:
                        raise PromError("%s: TYPE of %s twice" % (where, name))
                    if fam.samples:
                        raise PromError("%s: TYPE of %s after its samples"
                                        % (where, name))
                    fam.type = parts[3]
                else:
                    if fam.help is not None:
                        raise PromError("%s: HELP of %s twice" % (where, name))
                    fam.help = parts[3] if len(parts) == 4 else ""
            continue            # other comments are allowed
        name, labels, value = parse_sample(line, where)
        fam = family_of(name, families, current)
        if fam is None:
            if name in families or name in closed:
                raise PromError("%s: samples of %s are not contiguous" % (where, name))
            if current is not None:
                closed.add(current.name)
            fam = families[name] = Family(name)
            fam.type = "untyped"
            current = fam
        key = (name, tuple(sorted(labels.items())))
        if key in seen_series:
            raise PromError("%s: duplicate series %s%s" % (where, name, labels))
        seen_series.add(key)
        if fam.type == "counter" and not value >= 0:
            raise PromError("%s: counter %s is %r" % (where, name, value))
        fam.samples.append((name, labels, value))
    for fam in families.values():
        if fam.type == "histogram":
            check_histogram(fam)
    return families


def check_histogram(fam):
    groups = {}
    for name, labels, value in fam.samples:
        rest = dict(labels)
        le = rest.pop("le", None)
        key = tuple(sorted(rest.items()))
        g = groups.setdefault(key, {"buckets": [], "sum": None, "count": None})
        if name == fam.name + "_bucket":
            if le is None:
                raise PromError("%s: bucket without le %s" % (fam.name, labels))
            g["buckets"].append((parse_float(le, fam.name + " le"), value))
        elif "le" in labels:
            raise PromError("%s: le on %s" % (fam.name, name))
        elif name == fam.name + "_sum":
            g["sum"] = value
        else:
            g["count"] = value
    for key, g in groups.items():
        where = "%s%s" % (fam.name, dict(key))
        b = g["buckets"]
        if not b or b[-1][0] != math.inf:
            raise PromError("%s: no +Inf bucket" % where)
        for (le1, c1), (le2, c2) in zip(b, b[1:]):
            if not le2 > le1:
                raise PromError("%s: le not ascending (%r, %r)" % (where, le1, le2))
            if c2 < c1:
                raise PromError("%s: bucket counts fall (%r -> %r)" % (where, c1, c2))
        if g["count"] is None or g["sum"] is None:
            raise PromError("%s: _sum or _count missing" % where)
        if g["count"] != b[-1][1]:
            raise PromError("%s: _count %r != +Inf bucket %r" % (where, g["count"], b[-1][1]))
