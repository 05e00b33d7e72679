#!/usr/bin/env python3
"""
src/proto/gen.py - Samsa's protocol code generator (Python 3 stdlib only).

Reads our schema files (src/proto/schema/<Api>.schema, format below) and
writes, for each API, proto/gen/<Api>.{h,c}: a C struct per message and
nested struct, plus init/decode/encode functions; and, unless --no-table,
proto/gen/apis.{h,c}: the API table (key, names, versions, first flexible
version; each request's size, init and decoder and each response's size,
init, encoder, ThrottleTimeMs place, decoder and ErrorCode rewriter) with
samsa_proto_api_find().  Run
by CMake at build time (src/proto/proto.cmake); the output is never edited
or committed.

Schema format (one file per API; '#' starts a comment, blank lines ignored):

    api <Name> key=<n> enum=<KAFKA_ENUM_NAME> versions=<a-b> flexible=<f+|none>

    request                             # the <Name>Request message
        <Field> <type> <versions> [attributes] [# about]
            <Child> ...                 # a struct field's own fields, indented
    response                            # the <Name>Response message
        ...
    struct <Name>                       # a struct shared by several fields
        ...

  type        int8 int16 int32 int64 uint16 uint32 float64 bool string bytes
              records uuid, a struct name (fields indented below it, or those
              of a `struct` section), or []<type> for an array of either.
  versions    a+ (a and later), a-b, a, or none: the versions that have the
              field.  Every range is also clipped to the API's versions.
  attributes  null=<versions>     versions in which the value may be null
                                  (string, bytes, records, arrays)
              tag=<n>             a tagged field (KIP-482) with tag n ...
              tagged=<versions>   ... in these versions (default: all of the
                                  field's versions; must be flexible ones and
                                  a suffix of them; before it the field is a
                                  regular one)
              default=<value>     the value init() sets, and the value a
                                  tagged field is omitted at: a number,
                                  true/false, null, or "text"
              ignorable           Kafka's flag (may be dropped when encoding
                                  an older version); recorded for readers
  about       text after '#' becomes the C member's comment.

Record files (non-API messages, e.g. Kafka's KRaft metadata records): a
schema file whose first line is a `record` line holds a group of records,
named after the file (src/proto/schema/MetadataRecords.schema -> group
MetadataRecords, proto/gen/MetadataRecords.{h,c}):

    record <Name> type=<n> versions=<a-b> flexible=<f+|none>
        <Field> <type> <versions> [attributes] [# about]
    struct <Name>                       # belongs to the record above it
        ...
    record <Name> ...

  Each record is one message (no request/response) with the same types and
  attributes as an API message; type is Kafka's record type ("apiKey" in
  its JSON), unique within the file.  No API table entry; instead the group
  gets its own table and a decoder for any of its records:
    samsa_<Group>_info_t samsa_<Group>_infos[] (type, name, versions, first
        flexible version), samsa_<Group>_find(type);
    samsa_<Group>_any_t {type, version, union u}, samsa_<Group>_decode(rd,
        type, version, arena, any) / _encode(wr, any): the body only;
    samsa_<Group>_decode_framed / _encode_framed: Kafka's metadata log
        framing (AbstractApiMessageSerde): unsigned varints frame version
        (1), type and version, then the body.

Adding an API: write src/proto/schema/<Name>.schema (the file name must be
the api name) from Kafka's <Name>Request.json/<Name>Response.json (the
build picks it up: CONFIGURE_DEPENDS glob), add tests/unit/proto/test_<Name>.c
(round trip per version, golden bytes) plus tests/fuzz/fuzz_<Name>Request.c.
Struct names are global C names: rename one (any name; it is not on the
wire) if two APIs define the same.  A nullable struct field X (null=...)
gets a `bool X_null` member beside it (true: null; set by init() when
default=null); on the wire Kafka writes an int8 before it, -1 for null and
1 for a struct.  A tagged struct field X (tag= in all of its versions, not
nullable) gets a `bool X_set` member: the encoder writes the tag only when
it is true, the decoder sets it when the tag is there.

Generated C (for message M and each nested struct S, named as in the schema):
    typedef struct samsa_M { ... } samsa_M_t;    arrays are `T *X; int32_t
        X_cnt;` with X_cnt == -1 for null; strings/bytes/records are
        samsa_slice_t (ptr NULL = null); uuid is samsa_uuid_t.
    void samsa_M_init(samsa_M_t *m);  void samsa_S_init(samsa_S_t *m);
    SAMSA_MUST_CHECK samsa_err_t samsa_M_decode(samsa_rd_t *rd,
        int16_t version, samsa_arena_t *arena, samsa_M_t *m);
    void samsa_M_encode(samsa_wr_t *wr, int16_t version, const samsa_M_t *m);
    samsa_M_encode_any / samsa_M_decode_any, samsa_S_init_any: the same
        taking void *m (static inline), for code handed a codec.
    int32_t samsa_<Api>Response_error_replace(samsa_<Api>Response_t *m,
        int16_t from, int16_t to): sets each of its int16 fields named
        ...ErrorCode (in it and every struct it holds) that is from to to,
        returns how many were (a forwarding broker asks whether an answer
        says NOT_CONTROLLER anywhere, and answers REQUEST_TIMED_OUT
        instead once it gives up).
"""

import argparse
import os
import re
import sys

# ---------------------------------------------------------------------------
# Model


class SchemaError(Exception):
    pass


class Versions:
    """An inclusive version range; hi None = open-ended; lo None = empty."""

    def __init__(self, lo, hi):
        self.lo, self.hi = lo, hi

    @staticmethod
    def parse(text, where):
        m = re.fullmatch(r'(\d+)(?:(\+)|-(\d+))?|none', text)
        if not m:
            raise SchemaError('%s: bad version range %r' % (where, text))
        if text == 'none':
            return Versions(None, None)
        lo = int(m.group(1))
        if m.group(2):
            return Versions(lo, None)
        hi = int(m.group(3)) if m.group(3) else lo
        if hi < lo:
            raise SchemaError('%s: empty version range %r' % (where, text))
        return Versions(lo, hi)

    def empty(self):
        return self.lo is None

    def has(self, v):
        return (not self.empty() and v >= self.lo
                and (self.hi is None or v <= self.hi))

    def intersect(self, o):
        if self.empty() or o.empty():
            return Versions(None, None)
        lo = max(self.lo, o.lo)
        his = [h for h in (self.hi, o.hi) if h is not None]
        hi = min(his) if his else None
        if hi is not None and hi < lo:
            return Versions(None, None)
        return Versions(lo, hi)

    def covers(self, o):
        """True if every version of o is in self."""
        if o.empty():
            return True
        return self.intersect(o).eq(o)

    def eq(self, o):
        return self.lo == o.lo and self.hi == o.hi

    def __str__(self):
        if self.empty():
            return 'none'
        if self.hi is None:
            return '%d+' % self.lo
        if self.hi == self.lo:
            return '%d' % self.lo
        return '%d-%d' % (self.lo, self.hi)


NONE = Versions(None, None)

# name: (C type, rd/wr suffix, fixed wire size or None)
PRIMS = {
    'int8':    ('int8_t', 'i8', 1),
    'int16':   ('int16_t', 'i16', 2),
    'int32':   ('int32_t', 'i32', 4),
    'int64':   ('int64_t', 'i64', 8),
    'uint16':  ('uint16_t', 'u16', 2),
    'uint32':  ('uint32_t', 'u32', 4),
    'float64': ('double', 'f64', 8),
    'bool':    ('bool', 'bool', 1),
    'uuid':    ('samsa_uuid_t', 'uuid', 16),
    'string':  ('samsa_slice_t', 'str', None),
    'bytes':   ('samsa_slice_t', 'bytes', None),
    'records': ('samsa_records_t', 'records', None),
}
INT_RANGES = {
    'int8': (-2**7, 2**7 - 1), 'int16': (-2**15, 2**15 - 1),
    'int32': (-2**31, 2**31 - 1), 'int64': (-2**63, 2**63 - 1),
    'uint16': (0, 2**16 - 1), 'uint32': (0, 2**32 - 1),
}
BLOBS = ('string', 'bytes', 'records')


class Type:
    """prim (name), struct (Struct) or array (elem Type)."""

    def __init__(self, kind, name=None, struct=None, elem=None):
        self.kind, self.name, self.struct, self.elem = kind, name, struct, elem

    def is_prim(self, *names):
        return self.kind == 'prim' and (not names or self.name in names)

    def nullable_ok(self):
        return self.kind in ('array', 'struct') or self.is_prim(*BLOBS)

    def ctype(self):
        if self.kind == 'prim':
            return PRIMS[self.name][0]
        if self.kind == 'struct':
            return 'samsa_%s_t' % self.struct.name
        return self.elem.ctype()


class Field:
    def __init__(self, name, type_, versions, where):
        self.name, self.type, self.versions, self.where = \
            name, type_, versions, where
        self.nullable = NONE
        self.tag = None
        self.tagged = NONE
        self.default = None             # raw text from the schema
        self.ignorable = False
        self.about = ''

    def regular(self):
        """Versions in which the field is in the regular (untagged) part."""
        if self.tagged.empty():
            return self.versions
        if self.tagged.lo == self.versions.lo:
            return NONE
        return self.versions.intersect(Versions(0, self.tagged.lo - 1))


class Struct:
    def __init__(self, name, where, is_message=False):
        self.name, self.where, self.is_message = name, where, is_message
        self.fields = []
        self.ctx = None                 # versions the struct is used in
        self.in_array = False           # needs a min_wire table
        self.defined = False            # has its own field list


class Api:
    """An API (request + response) or, kind 'record', one record (a single
    message; key is its record type, enum None)."""

    def __init__(self, name, key, enum, versions, flexible, path,
                 kind='api'):
        self.name, self.key, self.enum = name, key, enum
        self.versions, self.flexible, self.path = versions, flexible, path
        self.kind = kind
        self.messages = []              # request, response (api); the
                                        # record's message (record)
        self.structs = {}               # name -> Struct (non-message)
        self.order = []                 # structs in emission order

    def flex_min(self):
        return -1 if self.flexible.empty() else self.flexible.lo


class Group:
    """The records of one record file, named after the file."""

    def __init__(self, name, path):
        self.name, self.path = name, path
        self.records = []               # Api objects of kind 'record'


# ---------------------------------------------------------------------------
# Parser

TOKEN = re.compile(r'[^\s=]+="[^"]*"|\S+')


def split_line(raw):
    """(indent, tokens, about) of one line, or None for blank/comment."""
    code, about = raw, ''
    in_q = False
    for i, c in enumerate(raw):
        if c == '"':
            in_q = not in_q
        elif c == '#' and not in_q:
            code, about = raw[:i], raw[i + 1:].strip()
            break
    if not code.strip():
        return None
    code = code.rstrip()
    indent = len(code) - len(code.lstrip(' '))
    if '\t' in code[:indent + 1]:
        raise SchemaError('tabs are not allowed for indentation')
    return indent, TOKEN.findall(code), about


def parse_attrs(tokens, where):
    attrs = {}
    for t in tokens:
        k, eq, v = t.partition('=')
        if k in attrs:
            raise SchemaError('%s: %s given twice' % (where, k))
        attrs[k] = v if eq else True
    return attrs


class Parser:
    def __init__(self, path):
        self.path = path
        self.lines = []
        with open(path, encoding='utf-8') as f:
            for n, raw in enumerate(f, 1):
                where = '%s:%d' % (path, n)
                try:
                    sl = split_line(raw.rstrip('\n'))
                except SchemaError as e:
                    raise SchemaError('%s: %s' % (where, e))
                if sl:
                    self.lines.append((where,) + sl)
        self.i = 0
        self.api = None

    def parse(self):
        """The Api of an API file, or the Group of a record file."""
        first = self.lines[0][2][0] if self.lines else None
        if first == 'record':
            return self.parse_records()
        if first != 'api':
            raise SchemaError('%s: must start with an api or a record line'
                              % self.path)
        self.api = self.parse_api(*self.lines[0])
        self.i = 1
        while self.i < len(self.lines):
            where, indent, toks, _ = self.lines[self.i]
            self.i += 1
            if indent != 0:
                raise SchemaError('%s: expected a section' % where)
            self.parse_section(where, toks)
        return self.api

    def head_attrs(self, where, toks, what, keys):
        """The attributes of an api or record line, which must be exactly
        keys, and its versions and flexible versions."""
        a = parse_attrs(toks[2:], where)
        for k in keys:
            if k not in a:
                raise SchemaError('%s: %s line lacks %s=' % (where, what, k))
        unknown = set(a) - set(keys)
        if unknown:
            raise SchemaError('%s: unknown %s' % (where, sorted(unknown)))
        vers = Versions.parse(a['versions'], where)
        flex = Versions.parse(a['flexible'], where)
        if vers.empty() or vers.hi is None:
            raise SchemaError('%s: versions must be a-b' % where)
        if not flex.empty() and flex.hi is not None:
            raise SchemaError('%s: flexible must be f+ or none' % where)
        return a, vers, flex

    def parse_api(self, where, indent, toks, about):
        if len(toks) < 2:
            raise SchemaError('%s: api <Name> key=...' % where)
        a, vers, flex = self.head_attrs(where, toks, 'api',
                                        ('key', 'enum', 'versions',
                                         'flexible'))
        return Api(toks[1], int(a['key']), a['enum'], vers, flex, self.path)

    def parse_records(self):
        base = os.path.splitext(os.path.basename(self.path))[0]
        if not re.fullmatch(r'[A-Z][A-Za-z0-9]*', base):
            raise SchemaError('%s: a record file is named <Group>.schema'
                              % self.path)
        group = Group(base, self.path)
        self.i = 0
        while self.i < len(self.lines):
            where, indent, toks, _ = self.lines[self.i]
            self.i += 1
            if indent != 0:
                raise SchemaError('%s: expected a section' % where)
            if toks[0] == 'record':
                self.api = self.parse_record(where, toks)
                group.records.append(self.api)
                st = Struct(self.api.name, where, is_message=True)
                self.api.messages.append(st)
            elif toks[0] == 'struct' and len(toks) == 2 and self.api:
                st = self.struct_section(where, toks[1])
            else:
                raise SchemaError('%s: expected record or struct' % where)
            st.defined = True
            self.parse_fields(st, 0)
            if not st.fields and not st.is_message:
                raise SchemaError('%s: struct %s has no fields'
                                  % (where, st.name))
        return group

    def parse_record(self, where, toks):
        if len(toks) < 2 or not re.fullmatch(r'[A-Z][A-Za-z0-9]*', toks[1]):
            raise SchemaError('%s: record <Name> type=...' % where)
        a, vers, flex = self.head_attrs(where, toks, 'record',
                                        ('type', 'versions', 'flexible'))
        if not re.fullmatch(r'\d+', a['type']) or int(a['type']) > 32767:
            raise SchemaError('%s: bad type %r' % (where, a['type']))
        return Api(toks[1], int(a['type']), None, vers, flex, self.path,
                   kind='record')

    def struct_section(self, where, name):
        st = self.struct_named(name, where)
        if st.defined:
            raise SchemaError('%s: struct %s defined twice' % (where, name))
        return st

    def parse_section(self, where, toks):
        api = self.api
        if toks[0] in ('request', 'response') and len(toks) == 1:
            name = api.name + toks[0].capitalize()
            if any(m.name == name for m in api.messages):
                raise SchemaError('%s: second %s' % (where, toks[0]))
            st = Struct(name, where, is_message=True)
            api.messages.append(st)
        elif toks[0] == 'struct' and len(toks) == 2:
            st = self.struct_section(where, toks[1])
        else:
            raise SchemaError('%s: expected request, response or struct'
                              % where)
        st.defined = True
        self.parse_fields(st, 0)
        if not st.fields and not st.is_message:
            raise SchemaError('%s: struct %s has no fields' % (where, st.name))

    def struct_named(self, name, where):
        st = self.api.structs.get(name)
        if st is None:
            st = Struct(name, where)
            self.api.structs[name] = st
        return st

    def parse_fields(self, st, parent_indent):
        """Fields of st: the following lines indented deeper than parent."""
        indent = None
        while self.i < len(self.lines):
            where, ind, toks, about = self.lines[self.i]
            if ind <= parent_indent:
                return
            if indent is None:
                indent = ind
            elif ind != indent:
                raise SchemaError('%s: inconsistent indentation' % where)
            self.i += 1
            f = self.parse_field(where, toks, about)
            if any(o.name == f.name for o in st.fields):
                raise SchemaError('%s: duplicate field %s' % (where, f.name))
            st.fields.append(f)
            sub = f.type.elem if f.type.kind == 'array' else f.type
            if self.i < len(self.lines) and self.lines[self.i][1] > ind:
                if sub.kind != 'struct':
                    raise SchemaError('%s: only struct fields have fields'
                                      % where)
                if sub.struct.defined:
                    raise SchemaError('%s: struct %s defined twice'
                                      % (where, sub.struct.name))
                sub.struct.defined = True
                self.parse_fields(sub.struct, ind)

    def parse_type(self, text, where):
        if text.startswith('[]'):
            elem = self.parse_type(text[2:], where)
            if elem.kind == 'array':
                raise SchemaError('%s: arrays of arrays' % where)
            return Type('array', elem=elem)
        if text in PRIMS:
            return Type('prim', name=text)
        if not re.fullmatch(r'[A-Z][A-Za-z0-9]*', text):
            raise SchemaError('%s: unknown type %r' % (where, text))
        return Type('struct', struct=self.struct_named(text, where))

    def parse_field(self, where, toks, about):
        if len(toks) < 3:
            raise SchemaError('%s: <Name> <type> <versions> ...' % where)
        name = toks[0]
        if not re.fullmatch(r'[A-Z][A-Za-z0-9]*', name):
            raise SchemaError('%s: bad field name %r' % (where, name))
        f = Field(name, self.parse_type(toks[1], where),
                  Versions.parse(toks[2], where), where)
        a = parse_attrs(toks[3:], where)
        unknown = set(a) - {'null', 'tag', 'tagged', 'default', 'ignorable'}
        if unknown:
            raise SchemaError('%s: unknown %s' % (where, sorted(unknown)))
        if 'null' in a:
            f.nullable = Versions.parse(a['null'], where)
        if 'tag' in a:
            f.tag = int(a['tag'])
            f.tagged = f.versions
            if 'tagged' in a:
                f.tagged = Versions.parse(a['tagged'], where)
        elif 'tagged' in a:
            raise SchemaError('%s: tagged= without tag=' % where)
        f.default = a.get('default')
        f.ignorable = a.get('ignorable') is True
        f.about = about
        return f


# ---------------------------------------------------------------------------
# Checks and derived facts


def check_api(api):
    for st in api.structs.values():
        if not st.defined:
            raise SchemaError('%s: struct %s has no definition'
                              % (st.where, st.name))
    if api.kind == 'api' and len(api.messages) != 2:
        raise SchemaError('%s: needs a request and a response' % api.path)
    refs = {}
    for st in list(api.structs.values()) + api.messages:
        for f in st.fields:
            sub = f.type.elem if f.type.kind == 'array' else f.type
            if sub.kind == 'struct':
                refs[sub.struct.name] = refs.get(sub.struct.name, 0) + 1
    api.order = []
    for m in api.messages:
        walk_struct(api, m, api.versions, refs, [])


def walk_struct(api, st, ctx, refs, stack):
    """Clip versions, check fields, order structs children-first.  A struct
    used by one field knows that field's versions (ctx); a shared one only
    the API's."""
    if st.name in stack:
        raise SchemaError('%s: struct %s contains itself' % (st.where,
                                                             st.name))
    if st.ctx is not None:
        return
    st.ctx = ctx if refs.get(st.name, 0) <= 1 else api.versions
    tags = set()
    for f in st.fields:
        f.versions = f.versions.intersect(api.versions)
        f.nullable = f.nullable.intersect(f.versions)
        f.tagged = f.tagged.intersect(f.versions)
        check_field(api, f, tags)
        sub = f.type.elem if f.type.kind == 'array' else f.type
        if sub.kind == 'struct':
            sub.struct.in_array |= f.type.kind == 'array'
            walk_struct(api, sub.struct, f.versions.intersect(st.ctx), refs,
                        stack + [st.name])
    if not st.is_message:
        api.order.append(st)


def check_field(api, f, tags):
    w = f.where
    if not f.nullable.empty() and not f.type.nullable_ok():
        raise SchemaError('%s: %s cannot be nullable' % (w, f.name))
    if f.tag is not None:
        if f.tag in tags:
            raise SchemaError('%s: tag %d used twice' % (w, f.tag))
        tags.add(f.tag)
        if not api.flexible.covers(f.tagged):
            raise SchemaError('%s: tagged versions must be flexible' % w)
        if f.tagged.hi != f.versions.hi:
            raise SchemaError('%s: tagged versions must end with the '
                              'field\'s versions' % w)
        if f.type.kind == 'struct' and not f.nullable.empty():
            raise SchemaError('%s: a tagged struct field cannot be '
                              'nullable' % w)
        if f.type.kind == 'struct' and f.tagged.lo != f.versions.lo:
            raise SchemaError('%s: a tagged struct field is tagged in all '
                              'of its versions' % w)
    if f.default == 'null' and not f.nullable.covers(f.versions):
        raise SchemaError('%s: default=null needs null= in all of the '
                          'field\'s versions' % w)
    default_value(f)                    # validates


def default_value(f):
    """The C expression of f's default, or None for zero/empty/NULL."""
    d, t, w = f.default, f.type, f.where
    if t.kind == 'array' or t.is_prim('uuid') or t.kind == 'struct':
        if d is None:
            return None
        if d == 'null' and t.kind == 'array':
            return -1
        if d == 'null' and t.kind == 'struct':
            return 'true'               # the X_null member
        raise SchemaError('%s: bad default for %s' % (w, f.name))
    if t.is_prim('records'):
        if d in (None, 'null'):
            return 'SAMSA_RECORDS_NULL'
        raise SchemaError('%s: bad default %r' % (w, d))
    if t.is_prim(*BLOBS):
        if d == 'null':
            return 'SAMSA_SLICE_NULL'
        if d is None:
            return '(samsa_slice_t) { "", 0 }'
        if t.is_prim('string') and re.fullmatch(r'"[^"\\]*"', d):
            return '(samsa_slice_t) { %s, %d }' % (d, len(d) - 2)
        raise SchemaError('%s: bad default %r' % (w, d))
    if t.is_prim('bool'):
        if d in (None, 'false'):
            return None
        if d == 'true':
            return 'true'
        raise SchemaError('%s: bad bool default %r' % (w, d))
    if t.is_prim('float64'):
        try:
            v = float(d or '0')
        except ValueError:
            raise SchemaError('%s: bad float default %r' % (w, d))
        return None if v == 0 else repr(v)
    return int_literal(f, d)


def int_literal(f, d):
    if d is None:
        return None
    try:
        v = int(d, 0)
    except ValueError:
        raise SchemaError('%s: bad integer default %r' % (f.where, d))
    lo, hi = INT_RANGES[f.type.name]
    if not lo <= v <= hi:
        raise SchemaError('%s: default %d out of range' % (f.where, v))
    if v == 0:
        return None
    if f.type.name in ('int32', 'int64') and v == lo:
        return 'INT%s_MIN' % f.type.name[3:]
    if f.type.name == 'int64':
        return '%dLL' % v
    if f.type.name == 'uint32':
        return '%du' % v
    return '%d' % v


def min_wire(api, st, v):
    """Fewest bytes st can take on the wire in version v."""
    flex = api.flexible.has(v)
    n = 1 if flex else 0                # empty tagged-field section
    for f in st.fields:
        if not f.regular().has(v):
            continue
        t = f.type
        if t.kind == 'array':
            n += 1 if flex else 4
        elif t.kind == 'struct' and f.nullable.has(v):
            n += 1                      # the null marker alone
        elif t.kind == 'struct':
            n += min_wire(api, t.struct, v)
        elif PRIMS[t.name][2] is not None:
            n += PRIMS[t.name][2]
        elif t.is_prim('string'):
            n += 1 if flex else 2
        else:
            n += 1 if flex else 4
    return n


# ---------------------------------------------------------------------------
# C emission helpers


def cond(vers, ctx):
    """C condition for 'version in vers' where ctx is known to hold."""
    v = vers.intersect(ctx)
    if v.empty():
        return 'false'
    if v.covers(ctx):
        return 'true'
    parts = []
    if v.lo > ctx.lo:
        parts.append('version >= %d' % v.lo)
    if v.hi is not None and (ctx.hi is None or v.hi < ctx.hi):
        parts.append('version <= %d' % v.hi)
    return ' && '.join(parts)


def guard(c, body, ind):
    """body (lines at ind+1) under 'if (c)', or as is when c is true."""
    if c == 'true':
        return [(ind, line) for line in body]
    if c == 'false':
        return []
    return ([(ind, 'if (%s) {' % c)] + [(ind + 1, line) for line in body]
            + [(ind, '}')])


def guards(blocks, ind):
    """guard() over (cond, body) blocks, merging neighbours that share a
    condition into one if."""
    merged = []
    for c, body in blocks:
        if merged and merged[-1][0] == c:
            merged[-1][1].extend(body)
        else:
            merged.append((c, list(body)))
    out = []
    for c, body in merged:
        out += guard(c, body, ind)
    return out


def render(lines):
    """(level, text) or nested (level, text) pairs -> indented C text."""
    out = []
    for ind, text in lines:
        out.append(('    ' * ind + text) if text else '')
    return out


def nest(lines, ind):
    """Re-indent a list of (level, text) pairs by ind levels."""
    return [(i + ind, t) for i, t in lines]


class Emitter:
    """Decode/encode statements for one struct's fields."""

    def __init__(self, api, st):
        self.api, self.st = api, st

    def flex(self, ctx):
        return cond(self.api.flexible, ctx)

    # -- decode --

    def dec_scalar(self, t, rd, ctx, nullable):
        if t.is_prim('string'):
            return 'samsa_rd_str_any(%s, %s, %s)' % (
                rd, self.flex(ctx), cond(nullable, ctx))
        if t.is_prim('bytes'):
            return 'samsa_rd_bytes_any(%s, %s, %s)' % (
                rd, self.flex(ctx), cond(nullable, ctx))
        if t.is_prim('records'):
            return 'samsa_rd_records_any(%s, %s, %s)' % (
                rd, self.flex(ctx), cond(nullable, ctx))
        return 'samsa_rd_%s(%s)' % (PRIMS[t.name][1], rd)

    def dec_value(self, f, rd, ctx, lhs):
        """Statements (level, text) decoding f (present) into lhs."""
        t = f.type
        if t.kind == 'struct' and not f.nullable.intersect(ctx).empty():
            return [
                (0, '%s_null = %ssamsa_rd_i8(%s) < 0;'
                 % (lhs, '' if cond(f.nullable, ctx) == 'true' else
                    '(%s) && ' % cond(f.nullable, ctx), rd)),
                (0, 'if (!%s_null) {' % lhs),
                (1, '%s_decode(%s, version, arena, &%s);'
                 % (t.struct.name, rd, lhs)),
                (0, '}'),
            ]
        if t.kind == 'struct':
            return [(0, '%s_decode(%s, version, arena, &%s);'
                     % (t.struct.name, rd, lhs))]
        if t.kind == 'prim':
            return [(0, '%s = %s;' % (lhs, self.dec_scalar(t, rd, ctx,
                                                           f.nullable)))]
        e = t.elem
        if e.kind == 'struct':
            emin = '%s_min_wire(version)' % e.struct.name
            item = '%s_decode(%s, version, arena, &%s[i]);' % (
                e.struct.name, rd, lhs)
        else:
            emin = str(PRIMS[e.name][2] or 1)
            item = '%s[i] = %s;' % (lhs, self.dec_scalar(e, rd, ctx, NONE))
        return [
            (0, '%s_cnt = samsa_rd_array_cnt(%s, %s, %s, %s);'
             % (lhs, rd, self.flex(ctx), cond(f.nullable, ctx), emin)),
            (0, 'if (%s_cnt > 0) {' % lhs),
            (1, '%s = samsa_arena_calloc(arena, (size_t) %s_cnt, '
                'sizeof(*%s));' % (lhs, lhs, lhs)),
            (0, '}'),
            (0, 'for (i = 0; i < %s_cnt && %s->err == SAMSA_ERR_NONE; i++) {'
             % (lhs, rd)),
            (1, item),
            (0, '}'),
        ]

    # -- encode --

    def enc_scalar(self, t, ctx, nullable, val):
        if t.is_prim('string'):
            return 'samsa_wr_str_any(wr, %s, %s, %s);' % (
                self.flex(ctx), cond(nullable, ctx), val)
        if t.is_prim('bytes'):
            return 'samsa_wr_bytes_any(wr, %s, %s, %s);' % (
                self.flex(ctx), cond(nullable, ctx), val)
        if t.is_prim('records'):
            return 'samsa_wr_records_any(wr, %s, %s, %s);' % (
                self.flex(ctx), cond(nullable, ctx), val)
        return 'samsa_wr_%s(wr, %s);' % (PRIMS[t.name][1], val)

    def enc_value(self, f, ctx, val):
        t = f.type
        if t.kind == 'struct' and not f.nullable.intersect(ctx).empty():
            c = cond(f.nullable, ctx)
            guard_ = '%s_null' % val if c == 'true' else \
                '(%s) && %s_null' % (c, val)
            mark = [(0, 'samsa_wr_i8(wr, %s_null ? -1 : 1);' % val)]
            return (guard(c, [t_ for _, t_ in mark], 0) + [
                (0, 'if (!(%s)) {' % guard_),
                (1, '%s_encode(wr, version, &%s);' % (t.struct.name, val)),
                (0, '}'),
            ])
        if t.kind == 'struct':
            return [(0, '%s_encode(wr, version, &%s);' % (t.struct.name, val))]
        if t.kind == 'prim' and t.is_prim('int16') and f.name == 'ErrorCode':
            # tallied for the broker's per-error-code metrics (proto/wr.h)
            return [(0, 'samsa_wr_errcode(wr, %s);' % val)]
        if t.kind == 'prim':
            return [(0, self.enc_scalar(t, ctx, f.nullable, val))]
        e = t.elem
        if e.kind == 'struct':
            item = '%s_encode(wr, version, &%s[i]);' % (e.struct.name, val)
        else:
            item = self.enc_scalar(e, ctx, NONE, '%s[i]' % val)
        return [
            (0, 'samsa_wr_array_cnt(wr, %s, %s, %s_cnt);'
             % (self.flex(ctx), cond(f.nullable, ctx), val)),
            (0, 'for (i = 0; i < %s_cnt; i++) {' % val),
            (1, item),
            (0, '}'),
        ]

    def not_default(self, f, val):
        """C condition: f's value val differs from its default."""
        t, d = f.type, default_value(f)
        if t.kind == 'array':
            return '%s_cnt != %d' % (val, d if d is not None else 0)
        if t.is_prim('uuid'):
            return '!samsa_uuid_is_zero(%s)' % val
        if t.is_prim('bool'):
            return ('!%s' % val) if d == 'true' else val
        if t.is_prim(*BLOBS):
            if d == 'SAMSA_SLICE_NULL':
                return '%s.ptr != NULL' % val
            if d == '(samsa_slice_t) { "", 0 }' and f.nullable.empty():
                return '%s.len != 0' % val
            return '!samsa_slice_eq(%s, %s)' % (val, d)
        return '%s != %s' % (val, d if d is not None else '0')


# ---------------------------------------------------------------------------
# Per-struct code


def c_fields(st):
    """Member declarations (type, name, comment) of st's C struct."""
    rows = []
    for f in st.fields:
        note = 'v%s' % f.versions
        if not f.nullable.empty():
            note += ', null v%s' % f.nullable
        if f.tag is not None:
            note += ', tag %d v%s' % (f.tag, f.tagged)
        if f.default is not None:
            note += ', default %s' % f.default
        if f.ignorable:
            note += ', ignorable'
        about = ('%s: %s' % (note, f.about)) if f.about else note
        if f.type.kind == 'array':
            rows.append((f.type.ctype() + ' *', f.name, about))
            rows.append(('int32_t', f.name + '_cnt',
                         '-1: null' if not f.nullable.empty() else ''))
        else:
            rows.append((f.type.ctype(), f.name, about))
            if f.type.kind == 'struct' and not f.nullable.empty():
                rows.append(('bool', f.name + '_null', 'true: null'))
            if f.type.kind == 'struct' and f.tag is not None:
                rows.append(('bool', f.name + '_set',
                             'true: encoded (decoded: was present)'))
    if not rows:
        rows.append(('char', 'unused_', 'no fields in any version'))
    return rows


def emit_typedef(st):
    rows = c_fields(st)
    w = max(len(r[0].rstrip(' *')) for r in rows)
    names = max(len(r[1]) for r in rows)
    lines = ['typedef struct samsa_%s {' % st.name]
    for ctype, name, about in rows:
        star = '*' if ctype.endswith('*') else ' '
        decl = '    %s %s%s;' % (ctype.rstrip(' *').ljust(w), star, name)
        decl = decl.ljust(w + names + 8)
        lines.append(('%s/* %s */' % (decl, about)) if about else decl)
    lines.append('} samsa_%s_t;' % st.name)
    return lines


def emit_init(st):
    body = [(1, 'memset(m, 0, sizeof(*m));')]
    for f in st.fields:
        if f.type.kind == 'struct':
            body.append((1, 'samsa_%s_init(&m->%s);'
                         % (f.type.struct.name, f.name)))
            if default_value(f) == 'true':
                body.append((1, 'm->%s_null = true;' % f.name))
            continue
        d = default_value(f)
        if d is None:
            continue
        lhs = 'm->%s_cnt' % f.name if f.type.kind == 'array' else \
            'm->%s' % f.name
        body.append((1, '%s = %s;' % (lhs, d)))
    return (['void', 'samsa_%s_init(samsa_%s_t *m)' % (st.name, st.name), '{']
            + render(body) + ['}'])


def emit_min_wire(api, st):
    v0, v1 = api.versions.lo, api.versions.hi
    sizes = [min_wire(api, st, v) for v in range(v0, v1 + 1)]
    index = 'version' if v0 == 0 else 'version - %d' % v0
    return [
        '/* Fewest bytes one %s takes on the wire, by version: bounds'
        % st.name,
        ' * array counts before anything is allocated. */',
        'static size_t',
        '%s_min_wire(int16_t version)' % st.name,
        '{',
        '    static const uint16_t  min[] = { %s };' %
        ', '.join(str(s) for s in sizes),
        '',
        '    return min[%s];' % index,
        '}',
    ]


def finish_body(body, params, width=8):
    """Declarations of the params (type, name) that body uses."""
    text = '\n'.join(t for _, t in body)
    decls = []
    for typ, name in params:
        if re.search(r'\b%s\b' % re.escape(name), text):
            decls.append((1, '%s %s;' % (typ.ljust(width), name)))
    return decls


def unused(body, names):
    text = '\n'.join(t for _, t in body)
    return [(1, '(void) %s;' % n) for n in names
            if not re.search(r'\b%s\b' % n, text)]


def emit_decode(api, st):
    em = Emitter(api, st)
    ctx = st.ctx
    blocks = []
    for f in st.fields:
        stmts = em.dec_value(f, 'rd', f.regular().intersect(ctx),
                             'm->%s' % f.name)
        blocks.append((cond(f.regular(), ctx), render(stmts)))
    tags = [f for f in st.fields if f.tag is not None]
    tag_call = ('%s_decode_tags(rd, version, arena, m);' % st.name
                if tags else 'samsa_rd_tags_skip(rd);')
    blocks.append((em.flex(ctx), [tag_call]))
    body = [(0, 'samsa_%s_init(m);' % st.name)] + guards(blocks, 0)
    body = nest(body, 1)
    head = finish_body(body, [('int32_t', 'i')])
    pre = unused(body, ['rd', 'version', 'arena'])
    out = []
    if tags:
        out += emit_decode_tags(api, st, em, tags) + ['']
    out += ['static void',
            '%s_decode(samsa_rd_t *rd, int16_t version, samsa_arena_t *arena, '
            'samsa_%s_t *m)' % (st.name, st.name), '{']
    out += render(head + ([(0, '')] if head else []) + pre + body) + ['}']
    return out


def emit_decode_tags(api, st, em, tags):
    ctx = st.ctx
    cases = []
    for f in sorted(tags, key=lambda f: f.tag):
        fctx = f.tagged.intersect(ctx)
        stmts = render(em.dec_value(f, 'sub', fctx, 'm->%s' % f.name))
        if f.type.kind == 'struct':
            stmts.append('m->%s_set = true;' % f.name)
        cases.append((0, 'case %d:' % f.tag))
        cases += nest(guard(cond(f.tagged, ctx), stmts, 0), 1)
        cases.append((1, 'break;'))
    cases += [(0, 'default:'), (1, 'break;                 '
                                   '/* unknown tags are skipped */')]
    loop = [
        (0, 'for (n = samsa_rd_uvarint(rd); n > 0 && rd->err == '
            'SAMSA_ERR_NONE; n--) {'),
        (1, 'tag = samsa_rd_uvarint(rd);'),
        (1, 'samsa_rd_sub(rd, samsa_rd_uvarint(rd), sub);'),
        (1, 'switch (tag) {'),
    ] + nest(cases, 1) + [
        (1, '}'),
        (1, 'samsa_rd_fail(rd, sub->err);'),
        (0, '}'),
    ]
    body = nest(loop, 1)
    decls = [(1, 'uint32_t     n, tag;'),
             (1, 'samsa_rd_t   sub_rd;'),
             (1, 'samsa_rd_t  *sub = &sub_rd;')]
    decls += finish_body(body, [('int32_t', 'i')], 12)
    pre = unused(body, ['version', 'arena'])
    return (['/* The tagged fields of %s (KIP-482). */' % st.name,
             'static void',
             '%s_decode_tags(samsa_rd_t *rd, int16_t version, '
             'samsa_arena_t *arena, samsa_%s_t *m)' % (st.name, st.name),
             '{']
            + render(decls + [(0, '')] + pre + body) + ['}'])


def emit_encode(api, st):
    em = Emitter(api, st)
    ctx = st.ctx
    blocks = []
    for f in st.fields:
        stmts = em.enc_value(f, f.regular().intersect(ctx), 'm->%s' % f.name)
        blocks.append((cond(f.regular(), ctx), render(stmts)))
    tags = [f for f in st.fields if f.tag is not None]
    tag_call = ('%s_encode_tags(wr, version, m);' % st.name
                if tags else 'samsa_wr_uvarint(wr, 0);     /* no tags */')
    blocks.append((em.flex(ctx), [tag_call]))
    body = guards(blocks, 0)
    body = nest(body, 1)
    head = finish_body(body, [('int32_t', 'i')])
    pre = unused(body, ['wr', 'version', 'm'])
    out = []
    if tags:
        out += emit_encode_tags(api, st, em, tags) + ['']
    out += ['static void',
            '%s_encode(samsa_wr_t *wr, int16_t version, const samsa_%s_t *m)'
            % (st.name, st.name), '{']
    out += render(head + ([(0, '')] if head else []) + pre + body) + ['}']
    return out


def emit_encode_tags(api, st, em, tags):
    ctx = st.ctx
    tags = sorted(tags, key=lambda f: f.tag)
    decls, count, writes = [], [], []
    for f in tags:
        has = 'has_%s' % f.name
        c = cond(f.tagged, ctx)
        nd = ('m->%s_set' % f.name if f.type.kind == 'struct'
              else em.not_default(f, 'm->%s' % f.name))
        decls.append((1, 'const bool  %s = %s;'
                      % (has, nd if c == 'true' else '%s && %s' % (c, nd))))
        count.append(has)
        stmts = render(em.enc_value(f, f.tagged.intersect(ctx),
                                    'm->%s' % f.name))
        writes += [(0, 'if (%s) {' % has),
                   (1, 'off = samsa_wr_tag_begin(wr, %d);' % f.tag)]
        writes += [(1, s) for s in stmts]
        writes += [(1, 'samsa_wr_tag_end(wr, off);'), (0, '}')]
    body = [(0, 'samsa_wr_uvarint(wr, (uint32_t) (%s));' % ' + '.join(count))]
    body += writes
    body = nest(body, 1)
    decls += [(1, 'size_t      off;')]
    decls += finish_body(body, [('int32_t', 'i')], 11)
    pre = unused(decls + body, ['version'])
    return (['/* The tagged fields of %s, each only when not its default. */'
             % st.name,
             'static void',
             '%s_encode_tags(samsa_wr_t *wr, int16_t version, '
             'const samsa_%s_t *m)' % (st.name, st.name), '{']
            + render(decls + [(0, '')] + pre + body) + ['}'])


def emit_public(api, st):
    v0, v1 = api.versions.lo, api.versions.hi
    name = st.name
    return [
        'samsa_err_t',
        'samsa_%s_decode(samsa_rd_t *rd, int16_t version, '
        'samsa_arena_t *arena, samsa_%s_t *m)' % (name, name),
        '{',
        '    if (version < %d || version > %d) {' % (v0, v1),
        '        samsa_%s_init(m);' % name,
        '        return SAMSA_ERR_UNSUPPORTED_VERSION;',
        '    }',
        '    %s_decode(rd, version, arena, m);' % name,
        '    return rd->err;',
        '}',
        '',
        'void',
        'samsa_%s_encode(samsa_wr_t *wr, int16_t version, '
        'const samsa_%s_t *m)' % (name, name),
        '{',
        '    samsa_assert(version >= %d && version <= %d);' % (v0, v1),
        '    %s_encode(wr, version, m);' % name,
        '}',
    ]


def error_structs(st, seen):
    """The structs st's fields reach (arrays too), each once, by name."""
    for f in st.fields:
        t = f.type.elem if f.type.kind == 'array' else f.type
        if t.kind == 'struct' and t.struct.name not in seen:
            seen[t.struct.name] = t.struct
            error_structs(t.struct, seen)
    return seen


def is_error_field(f):
    return f.type.is_prim('int16') and f.name.endswith('ErrorCode')


def emit_error_replace_one(st):
    body = []
    for f in st.fields:
        t = f.type
        if is_error_field(f):
            body += [(1, 'if (m->%s == from) {' % f.name),
                     (2, 'm->%s = to;' % f.name), (2, 'n++;'), (1, '}')]
        elif t.kind == 'array' and t.elem.kind == 'struct':
            body += [(1, 'for (i = 0; i < m->%s_cnt; i++) {' % f.name),
                     (2, 'n += %s_error_replace(&m->%s[i], from, to);'
                      % (t.elem.struct.name, f.name)),
                     (1, '}')]
        elif t.kind == 'struct':
            body.append((1, 'n += %s_error_replace(&m->%s, from, to);'
                         % (t.struct.name, f.name)))
    text = '\n'.join(b for _, b in body)
    decls = [(1, 'int32_t  n = 0;')]
    if re.search(r'\bi\b', text):
        decls.append((1, 'int32_t  i;'))
    pre = [] if body else [(1, '(void) m;'), (1, '(void) from;'),
                           (1, '(void) to;')]
    return (['static int32_t',
             '%s_error_replace(samsa_%s_t *m, int16_t from, int16_t to)'
             % (st.name, st.name), '{']
            + render(decls + [(0, '')] + pre + body + [(1, 'return n;')])
            + ['}'])


def emit_error_replace(st):
    """samsa_<st>_error_replace and the static ones of the structs it
    reaches (prototypes first: any order works)."""
    sts = list(error_structs(st, {}).values()) + [st]
    out = ['static int32_t %s_error_replace(samsa_%s_t *m, int16_t from, '
           'int16_t to);' % (s.name, s.name) for s in sts] + ['']
    for s in sts:
        out += emit_error_replace_one(s) + ['']
    return out + [
        'int32_t',
        'samsa_%s_error_replace(samsa_%s_t *m, int16_t from, int16_t to)'
        % (st.name, st.name),
        '{',
        '    return %s_error_replace(m, from, to);' % st.name,
        '}',
    ]


# ---------------------------------------------------------------------------
# Files


def banner(path, api, what):
    rel = os.path.relpath(api.path, os.path.join(os.path.dirname(
        os.path.abspath(__file__)), '..', '..'))
    return [
        '/*',
        ' * %s - generated by src/proto/gen.py from' % path,
        ' * %s; do not edit.' % rel,
        ' * %s (key %d): versions %s, flexible %s.'
        % (api.name, api.key, api.versions, api.flexible),
        ' * %s' % what,
        ' */',
    ]


HDR_NOTE = ('Decode: strings borrow the input buffer, arrays come from the '
            'arena.\n * Threads: whoever owns the message; no shared state.')


HDR_INCLUDES = [
    '#include <stdbool.h>', '#include <stdint.h>', '',
    '#include <samsa/errors.h>', '',
    '#include "proto/rd.h"', '#include "proto/types.h"',
    '#include "proto/wr.h"', '#include "util/arena.h"',
    '#include "util/slice.h"', '',
]


def gen_header(api, prefix):
    path = '%s/%s.h' % (prefix, api.name)
    guard_name = 'SAMSA_%s_%s_H' % (prefix.upper().replace('/', '_'),
                                     api.name.upper())
    out = banner(path, api, HDR_NOTE) + [
        '#ifndef ' + guard_name, '#define ' + guard_name, '',
    ] + HDR_INCLUDES + header_body(api)
    out += ['', '#endif /* %s */' % guard_name]
    return out


def header_body(api):
    """Version macros, typedefs and prototypes of one API or record."""
    out = [
        '#define SAMSA_%s_VERSION_MIN %d' % (api.name, api.versions.lo),
        '#define SAMSA_%s_VERSION_MAX %d' % (api.name, api.versions.hi), '',
    ]
    for st in api.order + api.messages:
        out += emit_typedef(st) + ['']
    for st in api.order:
        out += ['void samsa_%s_init(samsa_%s_t *m);' % (st.name, st.name)]
    if api.order:
        out += ['', '/* The inits for tables of untyped ones. */']
    for st in api.order:
        out += ['static inline void samsa_%s_init_any(void *m) '
                '{ samsa_%s_init(m); }' % (st.name, st.name)]
    for st in api.messages:
        n = st.name
        out += [
            '',
            '/* %s: schema defaults in every field. */' % n,
            'void samsa_%s_init(samsa_%s_t *m);' % (n, n),
            '/* Decode %s %s body of the given version; never reads past rd.'
            % ('an' if n[0] in 'AEIOU' else 'a', n),
            ' * @returns rd->err, or SAMSA_ERR_UNSUPPORTED_VERSION outside '
            'v%s */' % api.versions,
            'SAMSA_MUST_CHECK samsa_err_t samsa_%s_decode(samsa_rd_t *rd,' % n,
            '    int16_t version, samsa_arena_t *arena, samsa_%s_t *m);' % n,
            '/* Encode m as that version: fields absent from it are skipped, '
            'tagged',
            ' * fields written only when not their default. */',
            'void samsa_%s_encode(samsa_wr_t *wr, int16_t version,' % n,
            '    const samsa_%s_t *m);' % n,
            '/* The same two, untyped, for code that takes a codec. */',
            'static inline void samsa_%s_encode_any(samsa_wr_t *wr, '
            'int16_t version, const void *m) { samsa_%s_encode(wr, version, '
            'm); }' % (n, n),
            'static inline samsa_err_t samsa_%s_decode_any(samsa_rd_t *rd, '
            'int16_t version, samsa_arena_t *arena, void *m) '
            '{ return samsa_%s_decode(rd, version, arena, m); }' % (n, n),
        ]
        if api.kind == 'api' and st is api.messages[1]:
            out += [
                '/* Set every ErrorCode field (any int16 field named '
                '...ErrorCode, in m',
                ' * and every struct it holds) that is from to to; '
                '@returns how many',
                ' * were from (from == to: only counts them). */',
                'int32_t samsa_%s_error_replace(samsa_%s_t *m, '
                'int16_t from,' % (n, n),
                '    int16_t to);',
            ]
    return out


def gen_source(api, prefix):
    path = '%s/%s.c' % (prefix, api.name)
    out = banner(path, api, 'See %s.h.  Threads: any; no shared state.'
                 % api.name) + [
        '#include "%s/%s.h"' % (prefix, api.name), '',
        '#include <string.h>', '',
        '#include "util/diag.h"',
    ]
    return out + source_body(api)


def source_body(api):
    """init/decode/encode of every struct of one API or record."""
    out = []
    for st in api.order + api.messages:
        out += ['', '/* ---- %s */' % st.name, '']
        out += emit_init(st) + ['']
        if st.in_array:
            out += emit_min_wire(api, st) + ['']
        out += emit_decode(api, st) + ['']
        out += emit_encode(api, st)
        if st.is_message:
            out += [''] + emit_public(api, st)
    if api.kind == 'api':
        out += ['', '/* ---- %s error codes */' % api.messages[1].name, '']
        out += emit_error_replace(api.messages[1])
    return out


def group_banner(path, group, what):
    rel = os.path.relpath(group.path, os.path.join(os.path.dirname(
        os.path.abspath(__file__)), '..', '..'))
    out = [
        '/*',
        ' * %s - generated by src/proto/gen.py from' % path,
        ' * %s; do not edit.' % rel,
        ' * The %s records:' % group.name,
    ]
    for r in group.records:
        out.append(' *   %s (type %d): versions %s, flexible %s.'
                   % (r.name, r.key, r.versions, r.flexible))
    return out + [' * %s' % what, ' */']


def gen_group_header(group, prefix):
    g = group.name
    path = '%s/%s.h' % (prefix, g)
    guard_name = 'SAMSA_%s_%s_H' % (prefix.upper().replace('/', '_'),
                                     g.upper())
    out = group_banner(path, group, HDR_NOTE) + [
        '#ifndef ' + guard_name, '#define ' + guard_name, '',
        '#include <stdbool.h>', '#include <stddef.h>',
    ] + HDR_INCLUDES[1:]
    for r in group.records:
        out += ['/* ==== %s (type %d) */' % (r.name, r.key), '']
        out += header_body(r) + ['']
    out += [
        '/* ==== The group */',
        '',
        '/* Record types, spelled as the records are named. */',
        'typedef enum samsa_%s_type {' % g,
    ]
    for r in group.records:
        out.append('    SAMSA_%s_%s = %d,' % (g, r.name, r.key))
    out += [
        '} samsa_%s_type_t;' % g, '',
        'typedef struct samsa_%s_info {' % g,
        '    int16_t      type;',
        '    const char  *name;            /* "%s" */' % group.records[0].name,
        '    int16_t      min_version;     /* versions the schema describes */',
        '    int16_t      max_version;',
        '    int16_t      flexible_min;    /* first flexible version or -1 */',
        '} samsa_%s_info_t;' % g, '',
        '/* Every record type, by ascending type. */',
        'extern const samsa_%s_info_t  samsa_%s_infos[];' % (g, g),
        'extern const size_t  samsa_%s_infos_cnt;' % g, '',
        '/* The record type with this number, or NULL if there is no schema',
        ' * for it. */',
        'const samsa_%s_info_t *samsa_%s_find(int16_t type);' % (g, g), '',
        '/* Any one record: its type and version pick the member of u. */',
        'typedef struct samsa_%s_any {' % g,
        '    int16_t  type;',
        '    int16_t  version;',
        '    union {',
    ]
    w = max(len('samsa_%s_t' % r.name) for r in group.records)
    for r in group.records:
        out.append('        %s  %s;' % (('samsa_%s_t' % r.name).ljust(w),
                                         r.name))
    out += [
        '    } u;',
        '} samsa_%s_any_t;' % g, '',
        '/* Decode the body of a record of that type and version into any.',
        ' * @returns rd->err, SAMSA_ERR__BAD_MSG for an unknown type, or',
        ' * SAMSA_ERR_UNSUPPORTED_VERSION for a version outside its',
        ' * schema\'s */',
        'SAMSA_MUST_CHECK samsa_err_t samsa_%s_decode(samsa_rd_t *rd,' % g,
        '    int16_t type, int16_t version, samsa_arena_t *arena,',
        '    samsa_%s_any_t *any);' % g,
        '/* Encode any\'s body (its type and version must be known). */',
        'void samsa_%s_encode(samsa_wr_t *wr, const samsa_%s_any_t *any);'
        % (g, g), '',
        '/* Kafka\'s framing of one record as a metadata log value',
        ' * (AbstractApiMessageSerde): unsigned varints frame version (1),',
        ' * type and version, then the body.  Decoding does not require the',
        ' * input to end with the record; SAMSA_ERR__BAD_MSG for another',
        ' * frame version or a type or version past int16. */',
        '#define SAMSA_%s_FRAME_VERSION 1' % g.upper(),
        'SAMSA_MUST_CHECK samsa_err_t samsa_%s_decode_framed(samsa_rd_t *rd,'
        % g,
        '    samsa_arena_t *arena, samsa_%s_any_t *any);' % g,
        'void samsa_%s_encode_framed(samsa_wr_t *wr,' % g,
        '    const samsa_%s_any_t *any);' % g,
        '',
        '#endif /* %s */' % guard_name,
    ]
    return out


def gen_group_source(group, prefix):
    g = group.name
    path = '%s/%s.c' % (prefix, g)
    out = group_banner(path, group, 'See %s.h.  Threads: any; no shared '
                       'state.' % g) + [
        '#include "%s/%s.h"' % (prefix, g), '',
        '#include <string.h>', '',
        '#include "util/diag.h"',
    ]
    for r in group.records:
        out += ['', '/* ==== %s (type %d) */' % (r.name, r.key)]
        out += source_body(r)
    out += ['', '/* ==== The group */', '',
            'const samsa_%s_info_t  samsa_%s_infos[] = {' % (g, g)]
    for r in group.records:
        out.append('    { %d, "%s", %d, %d, %d },' % (
            r.key, r.name, r.versions.lo, r.versions.hi, r.flex_min()))
    out += [
        '};', '',
        'const size_t  samsa_%s_infos_cnt = %d;' % (g, len(group.records)),
        '',
        'const samsa_%s_info_t *' % g,
        'samsa_%s_find(int16_t type)' % g,
        '{',
        '    switch (type) {',
    ]
    for i, r in enumerate(group.records):
        out.append('    case SAMSA_%s_%s: return &samsa_%s_infos[%d];'
                   % (g, r.name, g, i))
    out += ['    default: return NULL;', '    }', '}', '',
            'samsa_err_t',
            'samsa_%s_decode(samsa_rd_t *rd, int16_t type, int16_t version,'
            % g,
            '    samsa_arena_t *arena, samsa_%s_any_t *any)' % g,
            '{',
            '    memset(any, 0, sizeof(*any));',
            '    any->type = type;',
            '    any->version = version;',
            '    switch (type) {']
    for r in group.records:
        out += ['    case SAMSA_%s_%s:' % (g, r.name),
                '        return samsa_%s_decode(rd, version, arena, '
                '&any->u.%s);' % (r.name, r.name)]
    out += ['    default:',
            '        samsa_rd_fail(rd, SAMSA_ERR__BAD_MSG);',
            '        return rd->err;',
            '    }', '}', '',
            'void',
            'samsa_%s_encode(samsa_wr_t *wr, const samsa_%s_any_t *any)'
            % (g, g),
            '{',
            '    switch (any->type) {']
    for r in group.records:
        out += ['    case SAMSA_%s_%s:' % (g, r.name),
                '        samsa_%s_encode(wr, any->version, &any->u.%s);'
                % (r.name, r.name),
                '        break;']
    out += ['    default:',
            '        samsa_assert(!"unknown record type");',
            '    }', '}', '',
            'samsa_err_t',
            'samsa_%s_decode_framed(samsa_rd_t *rd, samsa_arena_t *arena,'
            % g,
            '    samsa_%s_any_t *any)' % g,
            '{',
            '    uint32_t  frame, type, version;',
            '',
            '    memset(any, 0, sizeof(*any));',
            '    frame = samsa_rd_uvarint(rd);',
            '    type = samsa_rd_uvarint(rd);',
            '    version = samsa_rd_uvarint(rd);',
            '    if (rd->err != SAMSA_ERR_NONE) {',
            '        return rd->err;',
            '    }',
            '    if (frame != SAMSA_%s_FRAME_VERSION || type > INT16_MAX'
            % g.upper(),
            '        || version > INT16_MAX) {',
            '        samsa_rd_fail(rd, SAMSA_ERR__BAD_MSG);',
            '        return rd->err;',
            '    }',
            '    return samsa_%s_decode(rd, (int16_t) type, (int16_t) version,'
            % g,
            '                           arena, any);',
            '}', '',
            'void',
            'samsa_%s_encode_framed(samsa_wr_t *wr, const samsa_%s_any_t *any)'
            % (g, g),
            '{',
            '    samsa_wr_uvarint(wr, SAMSA_%s_FRAME_VERSION);' % g.upper(),
            '    samsa_wr_uvarint(wr, (uint32_t) any->type);',
            '    samsa_wr_uvarint(wr, (uint32_t) any->version);',
            '    samsa_%s_encode(wr, any);' % g,
            '}']
    return out


def gen_table_header(apis, prefix):
    out = [
        '/*',
        ' * %s/apis.h - generated by src/proto/gen.py from the API lines of'
        % prefix,
        ' * src/proto/schema/<Api>.schema; do not edit.  The APIs whose '
        'messages Samsa',
        ' * can decode and encode, with the versions their schemas describe.',
        ' * Threads: const data; any thread.',
        ' */',
        '#ifndef SAMSA_PROTO_GEN_APIS_H',
        '#define SAMSA_PROTO_GEN_APIS_H', '',
        '#include <stddef.h>', '#include <stdint.h>', '',
        '#include <samsa/errors.h>', '',
        '#include "proto/rd.h"',
        '#include "proto/wr.h"',
        '#include "util/arena.h"', '',
        '/* Kafka\'s API keys, spelled as Kafka names the APIs. */',
        'typedef enum samsa_api_key {',
    ]
    for a in apis:
        out.append('    SAMSA_API_%s = %d,' % (a.name, a.key))
    out += [
        '} samsa_api_key_t;', '',
        'typedef struct samsa_proto_api {',
        '    int16_t      key;',
        '    const char  *name;            /* "ApiVersions" */',
        '    const char  *enum_name;       /* "API_VERSIONS", Kafka\'s '
        'ApiKeys name */',
        '    int16_t      min_version;     /* versions the schema describes */',
        '    int16_t      max_version;',
        '    int16_t      flexible_min;    /* first flexible version or -1 */',
        '    /* The request message: its size, init and decoder. */',
        '    size_t       request_size;',
        '    void       (*request_init)(void *m);',
        '    samsa_err_t (*request_decode)(samsa_rd_t *rd, int16_t version,',
        '                                  samsa_arena_t *arena, void *m);',
        '    /* The response message: its size, init and encoder, and where',
        '     * its ThrottleTimeMs is (throttle_from: the first version with',
        '     * it, -1 if none; throttle_off: offsetof in the struct). */',
        '    size_t       response_size;',
        '    void       (*response_init)(void *m);',
        '    void       (*response_encode)(samsa_wr_t *wr, int16_t version,',
        '                                  const void *m);',
        '    int16_t      throttle_from;',
        '    size_t       throttle_off;',
        '    /* Its decoder, and its ErrorCode rewriter (samsa_<Api>Response_'
        'error_replace). */',
        '    samsa_err_t (*response_decode)(samsa_rd_t *rd, int16_t version,',
        '                                   samsa_arena_t *arena, void *m);',
        '    int32_t     (*response_error_replace)(void *m, int16_t from,',
        '                                          int16_t to);',
        '} samsa_proto_api_t;', '',
        '/* Every API, by ascending key. */',
        'extern const samsa_proto_api_t  samsa_proto_apis[];',
        'extern const size_t             samsa_proto_apis_cnt;', '',
        '/* The API with this key, or NULL if there is no schema for it. */',
        'const samsa_proto_api_t *samsa_proto_api_find(int16_t key);', '',
        '#endif /* SAMSA_PROTO_GEN_APIS_H */',
    ]
    return out


def gen_table_source(apis, prefix):
    out = [
        '/*',
        ' * %s/apis.c - generated by src/proto/gen.py; do not edit.' % prefix,
        ' * See apis.h.  Threads: const data; any thread.',
        ' */',
        '#include "%s/apis.h"' % prefix, '',
    ]
    for a in apis:
        out.append('#include "%s/%s.h"' % (prefix, a.name))
    out.append('')
    for a in apis:
        r = a.messages[1].name
        q = a.messages[0].name
        out += [
            'static void',
            'req_init_%s(void *m)' % a.name,
            '{',
            '    samsa_%s_init(m);' % q,
            '}', '',
            'static samsa_err_t',
            'req_decode_%s(samsa_rd_t *rd, int16_t version, samsa_arena_t *arena,'
            % a.name,
            '              void *m)',
            '{',
            '    return samsa_%s_decode(rd, version, arena, m);' % q,
            '}', '',
            'static void',
            'resp_init_%s(void *m)' % a.name,
            '{',
            '    samsa_%s_init(m);' % r,
            '}', '',
            'static void',
            'resp_encode_%s(samsa_wr_t *wr, int16_t version, const void *m)'
            % a.name,
            '{',
            '    samsa_%s_encode(wr, version, m);' % r,
            '}', '',
            'static samsa_err_t',
            'resp_decode_%s(samsa_rd_t *rd, int16_t version, '
            'samsa_arena_t *arena,' % a.name,
            '               void *m)',
            '{',
            '    return samsa_%s_decode(rd, version, arena, m);' % r,
            '}', '',
            'static int32_t',
            'resp_error_replace_%s(void *m, int16_t from, int16_t to)' % a.name,
            '{',
            '    return samsa_%s_error_replace(m, from, to);' % r,
            '}', '',
        ]
    out.append('const samsa_proto_api_t  samsa_proto_apis[] = {')
    for a in apis:
        r = a.messages[1].name
        th = [f for f in a.messages[1].fields if f.name == 'ThrottleTimeMs'
              and f.type.kind == 'prim' and f.type.name == 'int32'
              and f.tagged.empty() and not f.versions.empty()]
        out.append('    { %d, "%s", "%s", %d, %d, %d, sizeof(samsa_%s_t), '
                   'req_init_%s, req_decode_%s, sizeof(samsa_%s_t), '
                   'resp_init_%s, resp_encode_%s, %d, %s, resp_decode_%s, '
                   'resp_error_replace_%s },' % (
                       a.key, a.name, a.enum, a.versions.lo, a.versions.hi,
                       a.flex_min(), a.messages[0].name, a.name, a.name, r,
                       a.name, a.name,
                       th[0].versions.lo if th else -1,
                       'offsetof(samsa_%s_t, ThrottleTimeMs)' % r if th
                       else '0', a.name, a.name))
    out += [
        '};', '',
        'const size_t  samsa_proto_apis_cnt = %d;' % len(apis), '',
        'const samsa_proto_api_t *',
        'samsa_proto_api_find(int16_t key)',
        '{',
        '    switch (key) {',
    ]
    for i, a in enumerate(apis):
        out.append('    case SAMSA_API_%s: return &samsa_proto_apis[%d];'
                   % (a.name, i))
    out += ['    default: return NULL;', '    }', '}']
    return out


def split_args(text):
    """Split text at the commas outside any parentheses or braces."""
    parts, depth, cur = [], 0, ''
    for c in text:
        if c in '({':
            depth += 1
        elif c in ')}':
            depth -= 1
        if c == ',' and depth == 0:
            parts.append(cur.strip())
            cur = ''
        else:
            cur += c
    parts.append(cur.strip())
    return parts


def wrap(line, width=80):
    """A statement over width split after the commas of its first call,
    continuation lines aligned under that call's first argument."""
    body = line.lstrip(' ')
    if (len(line) <= width or '"' in line or body.startswith(('/*', '*'))
            or body.startswith(('for ', 'if ', 'while ')) or '(' not in line):
        return [line]
    i = line.index('(')
    depth = 0
    for j in range(i, len(line)):
        depth += {'(': 1, ')': -1}.get(line[j], 0)
        if depth == 0:
            break
    args = split_args(line[i + 1:j])
    if len(args) < 2:
        return [line]
    out, cur = [], line[:i + 1]
    for k, a in enumerate(args):
        piece = a + (', ' if k < len(args) - 1 else '')
        if len(cur) + len(piece.rstrip()) > width and cur != line[:i + 1]:
            out.append(cur.rstrip())
            cur = ' ' * (i + 1)
        cur += piece
    out.append(cur + line[j:])
    return out


def write(path, lines):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    text = '\n'.join(w for line in lines for w in wrap(line)) + '\n'
    tmp = path + '.tmp'
    with open(tmp, 'w', encoding='utf-8') as f:
        f.write(text)
    os.replace(tmp, path)


def load_group(group, structs):
    types = {}
    if not group.records:
        raise SchemaError('%s: no records' % group.path)
    for r in group.records:
        check_api(r)
        if r.key in types:
            raise SchemaError('%s: records %s and %s share type %d'
                              % (group.path, types[r.key], r.name, r.key))
        types[r.key] = r.name
        for st in r.order + r.messages:
            if st.name in structs:
                raise SchemaError('%s: struct name %s already used in %s; '
                                  'C names are global, rename one'
                                  % (st.where, st.name, structs[st.name]))
            structs[st.name] = st.where
    group.records.sort(key=lambda r: r.key)


def load(paths):
    """(apis by key, record groups) of the schema files."""
    apis, groups, structs = [], [], {}
    for path in paths:
        api = Parser(path).parse()
        if isinstance(api, Group):
            load_group(api, structs)
            groups.append(api)
            continue
        base = os.path.splitext(os.path.basename(path))[0]
        if base != api.name:
            raise SchemaError('%s: file must be named %s.schema'
                              % (path, api.name))
        check_api(api)
        for st in api.order + api.messages:
            if st.name in structs:
                raise SchemaError('%s: struct name %s already used in %s; '
                                  'C names are global, rename one'
                                  % (st.where, st.name, structs[st.name]))
            structs[st.name] = st.where
        apis.append(api)
    apis.sort(key=lambda a: a.key)
    for a, b in zip(apis, apis[1:]):
        if a.key == b.key:
            raise SchemaError('%s and %s share key %d' % (a.path, b.path,
                                                          a.key))
    return apis, groups


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[1])
    ap.add_argument('--out', required=True,
                    help='directory for the generated files')
    ap.add_argument('--prefix', default='proto/gen',
                    help='include path of --out (default proto/gen)')
    ap.add_argument('--no-table', action='store_true',
                    help='skip apis.{h,c} (for test schemas)')
    ap.add_argument('schemas', nargs='+')
    args = ap.parse_args(argv)
    try:
        apis, groups = load(args.schemas)
    except (SchemaError, OSError) as e:
        print('gen.py: error: %s' % e, file=sys.stderr)
        return 1
    for group in groups:
        write(os.path.join(args.out, group.name + '.h'),
              gen_group_header(group, args.prefix))
        write(os.path.join(args.out, group.name + '.c'),
              gen_group_source(group, args.prefix))
    for api in apis:
        write(os.path.join(args.out, api.name + '.h'),
              gen_header(api, args.prefix))
        write(os.path.join(args.out, api.name + '.c'),
              gen_source(api, args.prefix))
    if not args.no_table:
        write(os.path.join(args.out, 'apis.h'),
              gen_table_header(apis, args.prefix))
        write(os.path.join(args.out, 'apis.c'),
              gen_table_source(apis, args.prefix))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
