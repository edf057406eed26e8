#!/usr/bin/env python3
"""conformance_request_schema: the requests ctxc sends, checked against the
providers' official request definitions.

Usage:
  check_schema.py --cli CTXC --work DIR [--schemas DIR] [--recordings DIR]
  check_schema.py --schemas DIR FILE.json ...   (check saved requests only)

Schemas ($CTXC_CONFORMANCE_SCHEMAS or --schemas; no default):
  openai     openai-CreateChatCompletionRequest.schema.json (OpenAPI 3.1 /
             JSON Schema): $ref, allOf, anyOf, oneOf (taken as anyOf: the
             OpenAPI document's branches overlap), type, nullable, enum,
             properties, required, additionalProperties, items, minItems.
             Every object key must be a property declared by the object's
             schema (for allOf: by any of its branches; for anyOf/oneOf: by
             the branch that matched); a property marked deprecated is
             reported as a note.
  anthropic  anthropic-sdk-typescript-messages.ts: the interfaces and type
             aliases (namespaces, extends, unions, intersections, Array<T>,
             T[], string/number/boolean literals, inline object types);
             the body must be a MessageCreateParamsNonStreaming or
             MessageCreateParamsStreaming: every key a declared field,
             required fields present, literal unions respected.
  gemini     gemini-v1beta-*.proto: messages (nested too), oneofs, enums,
             maps; JSON names are the lowerCamelCase of the proto names (the
             proto names accepted too); the body must be a
             GenerateContentRequest: every key a field of its message, at
             most one field of a oneof, enum values by name, REQUIRED
             fields present (except `model`, which is in the URL).

Rules checked, each reported on its own:
  schema       every request body is valid (above)
  alternation  Anthropic and Gemini requests start with a user turn and
               alternate user/assistant (user/model)
  shapes       every request shape was captured and checked: each provider
               streamed and not, with and without a system instruction,
               with assistant turns, middle-out and one-shot
  selfcheck    bad bodies (an unknown top-level key, an unknown key in a
               message / part, a wrong enum value) are rejected and good
               ones (the shapes ctxc writes, max output tokens set included)
               pass: the checker can fail

The requests come from runs of the CLI against replay.py's one-request
server: every row of expected.json (as conformance_replay runs it), `ctxc
chat` with and without --system over a history with assistant turns, and
`ctxc compress` over boards/host/examples/coding-session.jsonl (tool calls:
tool entries become user turns). Prints one line per request and rule,
then "N passed, N failed"; exit 1 when anything failed, 77 when the
schemas or recordings are missing.
"""

import argparse
import json
import os
import re
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import replay  # noqa: E402

DEFAULT_SCHEMAS = ""  # no default: $CTXC_CONFORMANCE_SCHEMAS or --schemas


def jtype(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"


# ==========================================================================
# OpenAI: JSON Schema


class JsonSchema:
    def __init__(self, path):
        with open(path, encoding="utf-8") as f:
            self.doc = json.load(f)
        self.notes = []

    def resolve(self, s):
        seen = 0
        while isinstance(s, dict) and "$ref" in s:
            ref = s["$ref"]
            if not ref.startswith("#/"):
                raise ValueError("external $ref %s" % ref)
            target = self.doc
            for part in ref[2:].split("/"):
                target = target[part]
            rest = {k: v for k, v in s.items() if k not in ("$ref", "description", "example")}
            s = dict(target, **rest) if rest else target
            seen += 1
            if seen > 50:
                raise ValueError("$ref loop at %s" % ref)
        return s

    def check(self, v, s=None, path="$"):
        """Errors of value v against schema s, unknown keys included."""
        if s is None:
            s = self.doc
        errs, declared = self._node(v, s, path)
        if isinstance(v, dict) and declared is not None:
            for k in v:
                if k not in declared:
                    errs.append("%s: unknown field %r" % (path, k))
        return errs

    def _node(self, v, s, path):
        """(errors, declared property names or None = any key) of v against
        s, unknown keys of v at this level not yet reported."""
        s = self.resolve(s)
        if s is True or s == {}:
            return [], None
        errs = []
        declared = set() if isinstance(v, dict) else None
        t = s.get("type")
        if t is not None:
            types = t if isinstance(t, list) else [t]
            have = jtype(v)
            ok = have in types or (have == "integer" and "number" in types) or \
                (v is None and s.get("nullable"))
            if not ok:
                return ["%s: %s, want %s" % (path, have, "/".join(types))], None
            if v is None:
                return [], None
        if "enum" in s and v not in s["enum"] and not (v is None and s.get("nullable")):
            errs.append("%s: %r not one of %s" % (path, v, short_list(s["enum"])))
        if "minItems" in s and isinstance(v, list) and len(v) < s["minItems"]:
            errs.append("%s: %d items, at least %d" % (path, len(v), s["minItems"]))
        if "items" in s and isinstance(v, list):
            for i, item in enumerate(v):
                errs += self.check(item, s["items"], "%s[%d]" % (path, i))
        if isinstance(v, dict):
            props = s.get("properties", {})
            for k, sub in props.items():
                if k in v:
                    sub_r = self.resolve(sub)
                    if isinstance(sub_r, dict) and sub_r.get("deprecated"):
                        self.notes.append("%s.%s is deprecated in the schema" % (path, k))
                    errs += self.check(v[k], sub, "%s.%s" % (path, k))
            declared |= set(props)
            for k in s.get("required", []):
                if k not in v:
                    errs.append("%s: required field %r missing" % (path, k))
            ap = s.get("additionalProperties")
            if ap is True or isinstance(ap, dict):
                extra = [k for k in v if k not in props]
                if isinstance(ap, dict):
                    for k in extra:
                        errs += self.check(v[k], ap, "%s.%s" % (path, k))
                declared = None
            elif "properties" not in s and not any(x in s for x in ("allOf", "anyOf", "oneOf")):
                declared = None  # a free-form object
        for b in s.get("allOf", []):
            e, d = self._node(v, b, path)
            errs += e
            if declared is not None:
                declared = None if d is None else declared | d
        for key in ("anyOf", "oneOf"):
            if key not in s:
                continue
            best = None
            matched = None
            for b in s[key]:
                e = self.check(v, b, path)
                if not e:
                    _, d = self._node(v, b, path)
                    matched = d
                    break
                if best is None or len(e) < len(best):
                    best = e
            if matched is None and best is not None:
                errs.append("%s: matches no branch of %s; nearest: %s" % (path, key, "; ".join(best[:3])))
            elif declared is not None:
                declared = None if matched is None else declared | matched
        return errs, declared


def short_list(xs, n=8):
    xs = list(xs)
    return "[%s%s]" % (", ".join(repr(x) for x in xs[:n]), ", ..." if len(xs) > n else "")


# ==========================================================================
# Anthropic: TypeScript declarations


TS_TOKEN = re.compile(r"""\s*(?:(?P<str>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")|(?P<num>-?\d+(?:\.\d+)?)|"""
                      r"""(?P<id>[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)|(?P<p>=>|[|&<>\[\]{}(),:;?=]))""")


def ts_tokens(text):
    out, i = [], 0
    while i < len(text):
        m = TS_TOKEN.match(text, i)
        if not m or m.end() == i:
            if text[i:].strip() == "":
                break
            raise ValueError("cannot tokenise TypeScript at %r" % text[i:i + 40])
        i = m.end()
        for kind in ("str", "num", "id", "p"):
            if m.group(kind) is not None:
                out.append((kind, m.group(kind)))
                break
    return out


class TsParser:
    def __init__(self, toks):
        self.t, self.i = toks, 0

    def peek(self, k=0):
        return self.t[self.i + k] if self.i + k < len(self.t) else (None, None)

    def take(self, val=None):
        tok = self.peek()
        if val is not None and tok[1] != val:
            raise ValueError("expected %r, got %r" % (val, tok[1]))
        self.i += 1
        return tok

    def union(self):
        if self.peek()[1] == "|":
            self.take()
        items = [self.inter()]
        while self.peek()[1] == "|":
            self.take()
            items.append(self.inter())
        return items[0] if len(items) == 1 else ("union", items)

    def inter(self):
        items = [self.postfix()]
        while self.peek()[1] == "&":
            self.take()
            items.append(self.postfix())
        return items[0] if len(items) == 1 else ("inter", items)

    def postfix(self):
        t = self.primary()
        while self.peek()[1] == "[" and self.peek(1)[1] == "]":
            self.take()
            self.take()
            t = ("array", t)
        return t

    def primary(self):
        kind, val = self.peek()
        if val == "(":
            self.take()
            t = self.union()
            self.take(")")
            return t
        if kind == "str":
            self.take()
            return ("lit", json.loads('"%s"' % val[1:-1].replace('"', '\\"')) if val[0] == "'" else json.loads(val))
        if kind == "num":
            self.take()
            return ("lit", float(val) if "." in val else int(val))
        if val == "{":
            return self.object_type()
        if kind == "id":
            self.take()
            if val in ("true", "false"):
                return ("lit", val == "true")
            args = []
            if self.peek()[1] == "<":
                self.take()
                args.append(self.union())
                while self.peek()[1] == ",":
                    self.take()
                    args.append(self.union())
                self.take(">")
            return ("ref", val, args)
        raise ValueError("unexpected %r in a type" % (val,))

    def object_type(self):
        self.take("{")
        fields, index = {}, None
        while self.peek()[1] != "}":
            if self.peek()[1] == "[":  # [key: string]: T
                self.take("[")
                self.take()
                self.take(":")
                self.union()
                self.take("]")
                self.take(":")
                index = self.union()
            else:
                _, name = self.take()
                if name and name[0] in "'\"":
                    name = name[1:-1]
                opt = False
                if self.peek()[1] == "?":
                    self.take()
                    opt = True
                self.take(":")
                fields[name] = (self.union(), opt)
            while self.peek()[1] in (";", ","):
                self.take()
        self.take("}")
        return ("object", fields, index, [])


def strip_ts_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"(?m)//[^\n]*$", "", text)


class TsSchema:
    PRIMS = {"string", "number", "boolean", "null", "undefined", "unknown", "any", "object", "never"}

    def __init__(self, path):
        with open(path, encoding="utf-8") as f:
            text = strip_ts_comments(f.read())
        self.decls = {}  # qualified name -> type
        self._scan(text, "")
        self.unresolved = set()

    def _scan(self, text, ns):
        i = 0
        decl = re.compile(r"(?m)^[ \t]*(?:export\s+)?(?:declare\s+)?(?:abstract\s+)?(interface|type|namespace|class|function|const|import)\s+([\w$]+)")
        while True:
            m = decl.search(text, i)
            if not m:
                return
            kind, name = m.group(1), m.group(2)
            j = m.end()
            if kind == "namespace":
                k = text.index("{", j)
                end = match_brace(text, k)
                self._scan(text[k + 1:end], ns + name + ".")
                i = end + 1
            elif kind == "interface":
                k = text.index("{", j)
                head = text[j:k]
                end = match_brace(text, k)
                extends = []
                mm = re.search(r"extends\s+(.*)$", head, re.S)
                if mm:
                    extends = [x.strip() for x in split_top(mm.group(1), ",") if x.strip()]
                body = TsParser(ts_tokens(text[k:end + 1])).object_type()
                self.decls[ns + name] = ("object", body[1], body[2], extends, ns)
                i = end + 1
            elif kind == "type":
                k = text.find("=", j)
                if k < 0:
                    i = j
                    continue
                end = find_statement_end(text, k + 1)
                try:
                    t = TsParser(ts_tokens(text[k + 1:end])).union()
                except ValueError:
                    t = ("ref", "unknown", [])  # a type we cannot read: any
                self.decls[ns + name] = ("alias", t, ns)
                i = end + 1
            elif kind in ("class", "function"):
                k = text.find("{", j)
                i = match_brace(text, k) + 1 if k >= 0 else j
            else:
                i = j

    def lookup(self, name, ns):
        parts = ns.split(".")[:-1] if ns else []
        for n in range(len(parts), -1, -1):
            q = ".".join(parts[:n] + [name]) if n else name
            if q in self.decls:
                return q
        if "." in name:  # MessagesAPI.X: an import alias of this file
            return self.lookup(name.split(".", 1)[1], ns)
        return None

    def check(self, v, t, path, ns=""):
        kind = t[0]
        if kind == "lit":
            return [] if v == t[1] and type(v) is type(t[1]) or (jtype(v) == "integer" and v == t[1]) else \
                ["%s: %r, want %r" % (path, v, t[1])]
        if kind == "array":
            if not isinstance(v, list):
                return ["%s: %s, want an array" % (path, jtype(v))]
            errs = []
            for i, x in enumerate(v):
                errs += self.check(x, t[1], "%s[%d]" % (path, i), ns)
            return errs
        if kind == "union":
            best = None
            for b in t[1]:
                e = self.check(v, b, path, ns)
                if not e:
                    return []
                if best is None or len(e) < len(best):
                    best = e
            return ["%s: matches no member of the union; nearest: %s" % (path, "; ".join(best[:3]))]
        if kind == "inter":
            errs = []
            for b in t[1]:
                if b[0] == "object" and not b[1] and b[2] is None:
                    continue  # string & {}
                errs += self.check(v, b, path, ns)
            return errs
        if kind == "object":
            return self.check_object(v, dict(t[1]), t[2], path, ns)
        if kind == "ref":
            name, args = t[1], t[2]
            if name in self.PRIMS:
                want = {"string": ["string"], "number": ["integer", "number"], "boolean": ["boolean"],
                        "null": ["null"], "undefined": [], "object": ["object", "array"], "never": []}.get(name)
                if want is None or jtype(v) in want:
                    return []
                return ["%s: %s, want %s" % (path, jtype(v), name)]
            if name == "Array" and args:
                return self.check(v, ("array", args[0]), path, ns)
            if name == "Record" and len(args) == 2:
                if not isinstance(v, dict):
                    return ["%s: %s, want an object" % (path, jtype(v))]
                errs = []
                for k, x in v.items():
                    errs += self.check(x, args[1], "%s.%s" % (path, k), ns)
                return errs
            q = self.lookup(name, ns)
            if q is None:
                self.unresolved.add(name)
                return ["%s: type %s is not declared in the .ts file" % (path, name)]
            d = self.decls[q]
            if d[0] == "alias":
                return self.check(v, d[1], path, d[2])
            fields, index = self.fields_of(q)
            return self.check_object(v, fields, index, path, d[4])
        raise ValueError(kind)

    def fields_of(self, q):
        d = self.decls[q]
        fields, index = {}, d[2]
        for base in d[3]:
            bq = self.lookup(re.sub(r"<.*", "", base), d[4])
            if bq is None or self.decls[bq][0] != "object":
                self.unresolved.add(base)
                continue
            bf, bi = self.fields_of(bq)
            fields.update(bf)
            index = index or bi
        fields.update(d[1])
        return fields, index

    def check_object(self, v, fields, index, path, ns):
        if not isinstance(v, dict):
            return ["%s: %s, want an object" % (path, jtype(v))]
        errs = []
        for k, x in v.items():
            if k in fields:
                errs += self.check(x, fields[k][0], "%s.%s" % (path, k), ns)
            elif index is not None:
                errs += self.check(x, index, "%s.%s" % (path, k), ns)
            else:
                errs.append("%s: unknown field %r" % (path, k))
        for k, (_, opt) in fields.items():
            if not opt and k not in v:
                errs.append("%s: required field %r missing" % (path, k))
        return errs

    def check_request(self, body):
        return self.check(body, ("union", [("ref", "MessageCreateParamsNonStreaming", []),
                                           ("ref", "MessageCreateParamsStreaming", [])]), "$")


def match_brace(text, k):
    depth = 0
    for i in range(k, len(text)):
        c = text[i]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i
        elif c in "'\"`":
            j = i + 1
            while j < len(text) and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            # strings are skipped by the caller's regexes only roughly; fine
    raise ValueError("unbalanced braces")


def find_statement_end(text, k):
    depth = 0
    for i in range(k, len(text)):
        c = text[i]
        if c in "{(<[":
            depth += 1
        elif c in "})>]":
            depth -= 1
        elif c == ";" and depth == 0:
            return i
    return len(text)


def split_top(s, sep):
    out, depth, cur = [], 0, ""
    for c in s:
        if c in "<({[":
            depth += 1
        elif c in ">)}]":
            depth -= 1
        if c == sep and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += c
    out.append(cur)
    return out


# ==========================================================================
# Gemini: protos


PROTO_SCALARS = {
    "string": ["string"], "bytes": ["string"], "bool": ["boolean"],
    "double": ["number", "integer", "string"], "float": ["number", "integer", "string"],
    "int32": ["integer"], "sint32": ["integer"], "uint32": ["integer"], "fixed32": ["integer"],
    "sfixed32": ["integer"], "int64": ["integer", "string"], "sint64": ["integer", "string"],
    "uint64": ["integer", "string"], "fixed64": ["integer", "string"], "sfixed64": ["integer", "string"],
}
PROTO_WELL_KNOWN = {"google.protobuf.Struct", "google.protobuf.Value", "google.protobuf.ListValue",
                    "google.protobuf.Duration", "google.protobuf.Timestamp", "google.protobuf.Any",
                    "google.type.Interval", "google.type.LatLng", "google.type.Date"}


def lower_camel(name):
    parts = name.split("_")
    return parts[0] + "".join(p[:1].upper() + p[1:] for p in parts[1:])


class ProtoSchema:
    FIELD = re.compile(r"^(?:(optional|repeated)\s+)?(map\s*<\s*([\w.]+)\s*,\s*([\w.]+)\s*>|[\w.]+)\s+(\w+)\s*=\s*\d+\s*(\[.*\])?\s*$", re.S)

    def __init__(self, paths):
        self.messages = {}  # full name -> {fields: {json/proto name: field}, oneofs}
        self.enums = {}  # full name -> set of value names
        for p in paths:
            with open(p, encoding="utf-8") as f:
                text = strip_ts_comments(f.read())
            self._scan(text, "")

    def _scan(self, text, scope):
        i = 0
        pat = re.compile(r"\b(message|enum|oneof|service)\s+(\w+)\s*\{")
        while True:
            m = pat.search(text, i)
            if not m:
                return
            kind, name = m.group(1), m.group(2)
            k = m.end() - 1
            end = match_brace(text, k)
            body = text[k + 1:end]
            if kind == "message":
                full = scope + name
                self.messages[full] = {"fields": {}, "scope": full + "."}
                self._message_body(body, full)
            elif kind == "enum":
                self.enums[scope + name] = set(re.findall(r"(?m)^\s*(\w+)\s*=\s*-?\d+", body))
            i = end + 1

    def _message_body(self, body, full):
        # nested declarations first (their text removed from the fields)
        flat, i = "", 0
        pat = re.compile(r"\b(message|enum|oneof)\s+(\w+)\s*\{")
        msg = self.messages[full]
        while True:
            m = pat.search(body, i)
            if not m:
                flat += body[i:]
                break
            flat += body[i:m.start()]
            k = m.end() - 1
            end = match_brace(body, k)
            inner = body[k + 1:end]
            if m.group(1) == "oneof":
                for stmt in inner.split(";"):
                    self._field(stmt, msg, oneof=m.group(2))
            elif m.group(1) == "message":
                self.messages[full + "." + m.group(2)] = {"fields": {}, "scope": full + "." + m.group(2) + "."}
                self._message_body(inner, full + "." + m.group(2))
            else:
                self.enums[full + "." + m.group(2)] = set(re.findall(r"(?m)^\s*(\w+)\s*=\s*-?\d+", inner))
            i = end + 1
        for stmt in split_top(flat, ";"):
            self._field(stmt, msg)

    def _field(self, stmt, msg, oneof=None):
        stmt = " ".join(stmt.split())
        if not stmt or stmt.startswith(("option ", "reserved ")):
            return
        m = self.FIELD.match(stmt)
        if not m:
            return
        label, typ, mk, mv, name, opts = m.groups()
        f = {"name": name, "repeated": label == "repeated", "type": typ, "map": (mk, mv) if mk else None,
             "oneof": oneof, "required": bool(opts and "REQUIRED" in opts), "scope": msg["scope"]}
        msg["fields"][name] = f
        msg["fields"].setdefault(lower_camel(name), f)

    def resolve(self, typ, scope):
        typ = typ.lstrip(".")
        if typ.startswith("google.ai.generativelanguage.v1beta."):
            typ = typ[len("google.ai.generativelanguage.v1beta."):]
        parts = scope.split(".")[:-1]
        for n in range(len(parts), -1, -1):
            q = ".".join(parts[:n] + [typ]) if n else typ
            if q in self.messages or q in self.enums:
                return q
        return None

    def check_message(self, v, full, path):
        if not isinstance(v, dict):
            return ["%s: %s, want an object (%s)" % (path, jtype(v), full)]
        msg = self.messages[full]
        errs, seen_oneof = [], {}
        for k, x in v.items():
            f = msg["fields"].get(k)
            if f is None:
                errs.append("%s: unknown field %r (not a field of %s)" % (path, k, full))
                continue
            if f["oneof"]:
                if f["oneof"] in seen_oneof and seen_oneof[f["oneof"]] != f["name"]:
                    errs.append("%s: %r and %r are both set (oneof %s)" % (path, seen_oneof[f["oneof"]], k, f["oneof"]))
                seen_oneof[f["oneof"]] = f["name"]
            sub = "%s.%s" % (path, k)
            if f["map"]:
                if not isinstance(x, dict):
                    errs.append("%s: %s, want an object (map)" % (sub, jtype(x)))
                    continue
                for mk, mx in x.items():
                    errs += self.check_value(mx, f["map"][1], f["scope"], "%s.%s" % (sub, mk))
            elif f["repeated"]:
                if not isinstance(x, list):
                    errs.append("%s: %s, want an array (repeated)" % (sub, jtype(x)))
                    continue
                for i, item in enumerate(x):
                    errs += self.check_value(item, f["type"], f["scope"], "%s[%d]" % (sub, i))
            else:
                errs += self.check_value(x, f["type"], f["scope"], sub)
        names = {f["name"] for k, f in msg["fields"].items() if k in v}
        for f in msg["fields"].values():
            if f["required"] and f["name"] not in names and not (full == "GenerateContentRequest" and f["name"] == "model"):
                errs.append("%s: required field %r missing (%s)" % (path, lower_camel(f["name"]), full))
        return errs

    def check_value(self, x, typ, scope, path):
        if typ in PROTO_SCALARS:
            if x is None or jtype(x) in PROTO_SCALARS[typ]:
                return []
            return ["%s: %s, want %s" % (path, jtype(x), typ)]
        if typ in PROTO_WELL_KNOWN:
            return []
        q = self.resolve(typ, scope)
        if q is None:
            return ["%s: type %s is not in the provided protos" % (path, typ)]
        if q in self.enums:
            if isinstance(x, str) and x in self.enums[q]:
                return []
            if isinstance(x, int) and not isinstance(x, bool):
                return []
            return ["%s: %r is not a value of enum %s" % (path, x, q)]
        return self.check_message(x, q, path)

    def check_request(self, body):
        return self.check_message(body, "GenerateContentRequest", "$")


# ==========================================================================
# the rules


class Checkers:
    def __init__(self, sdir):
        self.openai = JsonSchema(os.path.join(sdir, "openai-CreateChatCompletionRequest.schema.json"))
        self.anthropic = TsSchema(os.path.join(sdir, "anthropic-sdk-typescript-messages.ts"))
        protos = sorted(os.path.join(sdir, n) for n in os.listdir(sdir) if n.endswith(".proto"))
        self.gemini = ProtoSchema(protos)

    def check(self, provider, body):
        if provider == "openai":
            self.openai.notes = []
            return self.openai.check(body)
        if provider == "anthropic":
            return self.anthropic.check_request(body)
        return self.gemini.check_request(body)


def alternation(provider, body):
    """Errors of the turn order: a user turn first, then alternating."""
    if provider == "openai":
        return []
    key, other = ("messages", "assistant") if provider == "anthropic" else ("contents", "model")
    turns = body.get(key) or []
    roles = [t.get("role") for t in turns]
    errs = []
    if not roles:
        return ["no turns"]
    if roles[0] != "user":
        errs.append("the first turn is %r, not 'user'" % roles[0])
    for i in range(1, len(roles)):
        if roles[i] == roles[i - 1]:
            errs.append("turns %d and %d are both %r" % (i - 1, i, roles[i]))
    for i, r in enumerate(roles):
        if r not in ("user", other):
            errs.append("turn %d has role %r" % (i, r))
    if len(errs) > 4:
        errs = errs[:4] + ["... %d more" % (len(errs) - 4)]
    return errs


def provider_of(req):
    path = req["path"]
    if "chat/completions" in path:
        return "openai"
    if "/v1/messages" in path:
        return "anthropic"
    if "generateContent" in path or "GenerateContent" in path:
        return "gemini"
    return None


def shape_of(provider, body, path):
    """The request shape: streamed, system instruction, assistant turns,
    max output tokens."""
    if provider == "openai":
        msgs = body.get("messages", [])
        return {"stream": body.get("stream") is True,
                "system": any(m.get("role") in ("system", "developer") for m in msgs),
                "assistant": any(m.get("role") == "assistant" for m in msgs),
                "max_tokens": "max_tokens" in body or "max_completion_tokens" in body}
    if provider == "anthropic":
        msgs = body.get("messages", [])
        return {"stream": body.get("stream") is True, "system": "system" in body,
                "assistant": any(m.get("role") == "assistant" for m in msgs), "max_tokens": "max_tokens" in body}
    cont = body.get("contents", [])
    return {"stream": ":streamGenerateContent" in path,
            "system": "systemInstruction" in body or "system_instruction" in body,
            "assistant": any(c.get("role") == "model" for c in cont),
            "max_tokens": "maxOutputTokens" in (body.get("generationConfig") or body.get("generation_config") or {})}


# --------------------------------------------------------------------------
# the self-check: bodies that must fail and bodies that must pass


def selfcheck_cases():
    long = "x" * 10
    oa = {"model": "gpt-4o-mini", "messages": [{"role": "system", "content": "be brief"},
                                                {"role": "user", "content": long},
                                                {"role": "assistant", "content": "ok"},
                                                {"role": "user", "content": "go on"}],
          "stream": True, "stream_options": {"include_usage": True}}
    an = {"model": "claude-sonnet-4-5", "max_tokens": 4096, "system": "be brief",
          "messages": [{"role": "user", "content": long}, {"role": "assistant", "content": "ok"},
                       {"role": "user", "content": "go on"}], "stream": True}
    ge = {"systemInstruction": {"parts": [{"text": "be brief"}]},
          "contents": [{"role": "user", "parts": [{"text": long}]}, {"role": "model", "parts": [{"text": "ok"}]},
                       {"role": "user", "parts": [{"text": "go on"}]}],
          "generationConfig": {"maxOutputTokens": 2048}}

    def edit(base, fn):
        b = json.loads(json.dumps(base))
        fn(b)
        return b

    good = [
        ("openai", "streamed, system, assistant turn", oa),
        ("openai", "not streamed, max_tokens", edit(oa, lambda b: (b.pop("stream_options"), b.update(stream=False, max_tokens=2048)))),
        ("openai", "no system, max_completion_tokens", edit(oa, lambda b: (b["messages"].pop(0), b.update(max_completion_tokens=100)))),
        ("anthropic", "streamed, system, assistant turn", an),
        ("anthropic", "not streamed, no system", edit(an, lambda b: (b.pop("system"), b.update(stream=False)))),
        ("anthropic", "system as text blocks", edit(an, lambda b: b.update(system=[{"type": "text", "text": "be brief"}]))),
        ("anthropic", "content as text blocks", edit(an, lambda b: b["messages"][0].update(content=[{"type": "text", "text": "hi"}]))),
        ("gemini", "system, model turn, maxOutputTokens", ge),
        ("gemini", "no system, no generationConfig", edit(ge, lambda b: (b.pop("systemInstruction"), b.pop("generationConfig")))),
        ("gemini", "proto field names", {"system_instruction": {"parts": [{"text": "s"}]},
                                         "contents": [{"role": "user", "parts": [{"text": "t"}]}],
                                         "generation_config": {"max_output_tokens": 10}}),
    ]
    bad = [
        ("openai", "unknown top-level key", edit(oa, lambda b: b.update(max_output_tokens=5)), "unknown field 'max_output_tokens'"),
        ("openai", "unknown key in a message", edit(oa, lambda b: b["messages"][1].update(thought="x")), "matches no branch"),
        ("openai", "wrong role enum", edit(oa, lambda b: b["messages"][1].update(role="model")), "matches no branch"),
        ("openai", "wrong type (stream as a string)", edit(oa, lambda b: b.update(stream="yes")), "$.stream"),
        ("openai", "unknown key in stream_options", edit(oa, lambda b: b["stream_options"].update(usage=True)), "stream_options"),
        ("anthropic", "unknown top-level key", edit(an, lambda b: b.update(max_output_tokens=5)), "unknown field 'max_output_tokens'"),
        ("anthropic", "unknown key in a message", edit(an, lambda b: b["messages"][0].update(name="me")), "unknown field 'name'"),
        ("anthropic", "wrong role enum", edit(an, lambda b: b["messages"][1].update(role="model")), "$.messages[1].role"),
        ("anthropic", "required max_tokens missing", edit(an, lambda b: b.pop("max_tokens")), "required field 'max_tokens'"),
        ("anthropic", "unknown key in a text block", edit(an, lambda b: b["messages"][0].update(content=[{"type": "text", "text": "t", "thought": True}])), "content"),
        ("gemini", "unknown top-level key", edit(ge, lambda b: b.update(stream=True)), "unknown field 'stream'"),
        ("gemini", "unknown key in a part", edit(ge, lambda b: b["contents"][0]["parts"][0].update(content="x")), "unknown field 'content'"),
        ("gemini", "unknown key in a content", edit(ge, lambda b: b["contents"][0].update(author="me")), "unknown field 'author'"),
        ("gemini", "wrong enum (harm category)", edit(ge, lambda b: b.update(safetySettings=[{"category": "HARM_CATEGORY_RUDE", "threshold": "BLOCK_NONE"}])), "HARM_CATEGORY_RUDE"),
        ("gemini", "oneof data set twice", edit(ge, lambda b: b["contents"][0]["parts"][0].update(inlineData={"mimeType": "text/plain", "data": ""})), "oneof data"),
        ("gemini", "unknown generationConfig key", edit(ge, lambda b: b["generationConfig"].update(max_tokens=5)), "unknown field 'max_tokens'"),
    ]
    alt_bad = [
        ("anthropic", "assistant first", {"messages": [{"role": "assistant", "content": "a"}, {"role": "user", "content": "b"}]}),
        ("anthropic", "two user turns", {"messages": [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]}),
        ("gemini", "model first", {"contents": [{"role": "model", "parts": []}, {"role": "user", "parts": []}]}),
        ("gemini", "two model turns", {"contents": [{"role": "user", "parts": []}, {"role": "model", "parts": []}, {"role": "model", "parts": []}]}),
    ]
    return good, bad, alt_bad


def run_selfcheck(ck, out):
    good, bad, alt_bad = selfcheck_cases()
    fails = 0
    for prov, what, body in good:
        e = ck.check(prov, body) + alternation(prov, body)
        if e:
            fails += 1
            out.append("selfcheck %-9s good: %-34s FAIL rejected: %s" % (prov, what, "; ".join(e[:3])))
    for prov, what, body, want in bad:
        e = ck.check(prov, body)
        if not e:
            fails += 1
            out.append("selfcheck %-9s bad: %-35s FAIL accepted" % (prov, what))
        elif not any(want in x for x in e):
            fails += 1
            out.append("selfcheck %-9s bad: %-35s FAIL rejected for another reason: %s" % (prov, what, "; ".join(e[:3])))
    for prov, what, body in alt_bad:
        if not alternation(prov, body):
            fails += 1
            out.append("selfcheck %-9s alternation: %-27s FAIL accepted" % (prov, what))
    n = len(good) + len(bad) + len(alt_bad)
    return n, fails


# --------------------------------------------------------------------------
# capturing the CLI's requests


def capture(cli, work, rdir):
    """Runs the CLI against replay's server: every row of expected.json,
    plus the chat and tool-history shapes. Returns [(label, request)]."""
    certs = replay.make_certs(work)
    reqdir = os.path.join(work, "requests")
    shutil.rmtree(reqdir, ignore_errors=True)
    os.makedirs(reqdir)
    history = os.path.join(work, "history.jsonl")
    replay.make_history(history)
    got = []

    def run(label, rec, case, **kw):
        meta, body = replay.load_recording(rdir, rec)
        if kw.pop("unary_json", False):  # an SSE-wrapped whole response as application/json
            text = body.decode("utf-8")
            body = text[text.index("data:") + 5:].strip().encode("utf-8")
            meta = dict(meta, content_type="application/json; charset=UTF-8")
        case = dict(case, name=label)
        res = replay.run_case(cli, work, certs, kw.pop("history", history), case, meta, body,
                              save_path=os.path.join(reqdir, label + ".json"), **kw)
        got.append((label, res["request"], res))

    for row in replay.load_table(os.path.join(HERE, "expected.json")):
        run("replay/" + row["name"], row.get("recording", row["name"]), row)
    # gemini not streamed (generateContent): the gemini-unary-text answer as JSON
    run("shape/gemini-compress-unary", "gemini-unary-text", {"exit": 0}, unary_json=True)
    # the chat: assistant turns, with and without a system instruction
    chat_hist = os.path.join(work, "chat-history.jsonl")
    with open(chat_hist, "w", encoding="utf-8") as f:
        for i, (sp, text) in enumerate([("human", "Hello, can you help me plan the garden?"),
                                        ("ai", "Of course. What grows there now?"),
                                        ("human", "Tomatoes and beans."),
                                        ("ai", "Good: both like sun. Where is the sunniest bed?")]):
            f.write(json.dumps({"speaker": sp, "blocks": [{"type": "text", "text": text}]}) + "\n")
    for prov, rec in (("openai", "openai-stream-text-after-tool"), ("anthropic", "anthropic-stream-text"),
                      ("gemini", "gemini-stream-plain")):
        for system in (False, True):
            h = os.path.join(work, "chat-%s-%d.jsonl" % (prov, system))
            shutil.copy(chat_hist, h)
            extra = ["--history", h] + (["--system", "You are a gardening assistant. Be brief."] if system else [])
            run("shape/%s-chat%s" % (prov, "-system" if system else ""), rec, {"exit": 0}, command="chat",
                extra_args=extra, stdin_text="The one by the south wall.\n")
    # a tool-heavy history: tool entries are sent as user turns
    example = os.path.join(replay.SOURCE, "boards", "host", "examples", "coding-session.jsonl")
    for prov, rec in (("openai", "openai-stream-text-after-tool"), ("anthropic", "anthropic-stream-text"),
                      ("gemini", "gemini-stream-plain")):
        for strategy in ("middle-out", "one-shot"):
            run("shape/%s-tools-%s" % (prov, strategy), rec, {"exit": 0, "strategy": strategy}, history=example)
    return got


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli")
    ap.add_argument("--work")
    ap.add_argument("--schemas", default=os.environ.get("CTXC_CONFORMANCE_SCHEMAS", DEFAULT_SCHEMAS))
    ap.add_argument("--recordings", default=os.environ.get("CTXC_CONFORMANCE_RECORDINGS", replay.DEFAULT_RECORDINGS))
    ap.add_argument("files", nargs="*", help="saved requests to check (no CLI runs)")
    a = ap.parse_args()
    if not os.path.isdir(a.schemas) or (not a.files and not os.path.isdir(a.recordings)):
        print("conformance_request_schema: no schemas at '%s' or recordings at '%s' (set CTXC_CONFORMANCE_SCHEMAS and "
              "CTXC_CONFORMANCE_RECORDINGS; test/conformance/README.md says what they hold): skipped"
              % (a.schemas, a.recordings))
        return 77
    ck = Checkers(a.schemas)
    lines = []
    passed = failed = 0

    n, f = run_selfcheck(ck, lines)
    for line in lines:
        print(line)
    print("%-58s %s" % ("selfcheck: %d bodies (good, bad, turn order)" % n, "FAIL" if f else "PASS"))
    passed, failed = (passed + 1, failed) if not f else (passed, failed + 1)

    if a.files:
        reqs = []
        for p in a.files:
            with open(p, encoding="utf-8") as fh:
                reqs.append((os.path.basename(p), json.load(fh), None))
    else:
        if not a.cli or not a.work:
            ap.error("--cli and --work are needed to capture requests")
        os.makedirs(a.work, exist_ok=True)
        reqs = capture(a.cli, a.work, a.recordings)

    shapes = {}
    alt_fail = []
    for label, req, res in reqs:
        if req is None:
            why = "no request reached the server"
            if res is not None:
                first = (res["stderr"].strip().splitlines() or [""])[0]
                why += " (exit %s: %s)" % (res["rc"], first)
            print("%-58s MISSING %s" % (label, why))
            continue
        prov = provider_of(req)
        try:
            body = json.loads(req["body"])
        except ValueError as e:
            print("%-58s FAIL schema: the body is not JSON: %s" % (label, e))
            failed += 1
            continue
        errs = ck.check(prov, body) if prov else ["unknown endpoint %s" % req["path"]]
        notes = sorted(set(ck.openai.notes)) if prov == "openai" else []
        sh = shape_of(prov, body, req["path"]) if prov else {}
        key = (prov, label.split("/")[0] == "shape" and "chat" in label, sh.get("stream"), sh.get("system"),
               sh.get("assistant"))
        shapes.setdefault(prov, set()).add(tuple(sorted((k, v) for k, v in sh.items())))
        alt = alternation(prov, body) if prov else []
        if alt:
            alt_fail.append((label, alt))
        desc = "%s %s%s%s%s" % (prov, "stream" if sh.get("stream") else "unary",
                                 " +system" if sh.get("system") else "", " +assistant" if sh.get("assistant") else "",
                                 " +max" if sh.get("max_tokens") else "")
        del key
        if errs:
            failed += 1
            print("%-58s FAIL schema (%s): %s" % (label, desc, "; ".join(errs[:4])))
        else:
            passed += 1
            print("%-58s PASS schema (%s)%s" % (label, desc, ("; note: " + "; ".join(notes)) if notes else ""))

    # the turn order, a rule of its own
    if alt_fail:
        failed += 1
        print("%-58s FAIL %d of the Anthropic/Gemini requests:" % ("rule alternation (user first, then alternating)", len(alt_fail)))
        for label, e in alt_fail:
            print("    %s: %s" % (label, "; ".join(e)))
    else:
        passed += 1
        print("%-58s PASS" % "rule alternation (user first, then alternating)")

    # the shapes: every provider streamed and not, with and without a
    # system instruction, with assistant turns
    if not a.files:
        missing = []
        for prov in ("openai", "anthropic", "gemini"):
            have = [dict(s) for s in shapes.get(prov, set())]
            for want, label in (({"stream": True}, "streamed"), ({"stream": False}, "not streamed"),
                                ({"system": True}, "with a system instruction"),
                                ({"system": False}, "without a system instruction"),
                                ({"assistant": True}, "with assistant turns")):
                if not any(all(s.get(k) == v for k, v in want.items()) for s in have):
                    missing.append("%s %s" % (prov, label))
        if missing:
            failed += 1
            print("%-58s FAIL not captured (so not checked): %s" % ("rule shapes", ", ".join(missing)))
        else:
            passed += 1
            print("%-58s PASS" % "rule shapes")
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
