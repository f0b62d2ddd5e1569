"""A reader of Grafana Alloy's configuration syntax, enough to check a file against schemas.json.

Alloy files are blocks (`name "label" { ... }`, names may hold dots: `profile.custom`) and
attributes (`name = expression`). Expressions: strings, numbers, true/false/null, lists,
objects (`{ key = value }`), references (`discovery.relabel.hucprof.output`) and calls
(`sys.env("X")`). Comments: `//`, `/* */` and `#`. What it returns is plain data:

  Block(name, label, attrs: {name: (value, line)}, blocks: [Block], line)
  values: str | int | float | bool | None | list | dict | Ref(path) | Call(name, args)
"""

from __future__ import annotations

import dataclasses
import json
import re


class AlloySyntaxError(ValueError):
    pass


@dataclasses.dataclass
class Ref:
    path: str  # "discovery.relabel.hucprof.output"


@dataclasses.dataclass
class Call:
    name: str
    args: list


@dataclasses.dataclass
class Block:
    name: str
    label: str | None
    line: int
    attrs: dict = dataclasses.field(default_factory=dict)   # name -> (value, line)
    blocks: list = dataclasses.field(default_factory=list)


TOKEN = re.compile(r"""
    (?P<space>[ \t\r]+)
  | (?P<newline>\n)
  | (?P<comment>//[^\n]*|\#[^\n]*|/\*.*?\*/)
  | (?P<string>"(?:[^"\\\n]|\\.)*")
  | (?P<rawstring>`[^`]*`)
  | (?P<number>-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<punct>[{}\[\](),=.:])
""", re.X | re.S)


def tokenize(text: str) -> list[tuple[str, str, int]]:
    out, pos, line = [], 0, 1
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if not m:
            raise AlloySyntaxError(f"line {line}: unexpected character {text[pos]!r}")
        kind, value = m.lastgroup, m.group()
        if kind not in ("space", "comment", "newline"):
            out.append((kind, value, line))
        line += value.count("\n")
        pos = m.end()
    out.append(("eof", "", line))
    return out


class Parser:
    def __init__(self, text: str):
        self.tokens = tokenize(text)
        self.i = 0

    def peek(self, k: int = 0):
        return self.tokens[min(self.i + k, len(self.tokens) - 1)]

    def take(self, kind: str | None = None, value: str | None = None):
        tok = self.peek()
        if (kind and tok[0] != kind) or (value and tok[1] != value):
            want = value or kind
            raise AlloySyntaxError(f"line {tok[2]}: expected {want}, found {tok[1] or 'the end'!r}")
        self.i += 1
        return tok

    def dotted(self) -> str:
        parts = [self.take("ident")[1]]
        while self.peek()[1] == "." and self.peek(1)[0] == "ident":
            self.take()
            parts.append(self.take("ident")[1])
        return ".".join(parts)

    def body(self, end: str) -> tuple[dict, list]:
        attrs, blocks = {}, []
        while self.peek()[1] != end and self.peek()[0] != "eof":
            line = self.peek()[2]
            name = self.dotted()
            if self.peek()[1] == "=":
                self.take()
                if name in attrs:
                    raise AlloySyntaxError(f"line {line}: attribute {name} set twice")
                attrs[name] = (self.expr(), line)
                continue
            label = None
            if self.peek()[0] == "string":
                label = json.loads(self.take()[1])
            self.take("punct", "{")
            inner_attrs, inner_blocks = self.body("}")
            self.take("punct", "}")
            blocks.append(Block(name, label, line, inner_attrs, inner_blocks))
        return attrs, blocks

    def expr(self):
        kind, value, line = self.peek()
        if kind == "string":
            self.take()
            return json.loads(value)
        if kind == "rawstring":
            self.take()
            return value[1:-1]
        if kind == "number":
            self.take()
            return float(value) if any(c in value for c in ".eE") else int(value)
        if value == "[":
            self.take()
            items = []
            while self.peek()[1] != "]":
                items.append(self.expr())
                if self.peek()[1] != "]":
                    self.take("punct", ",")
            self.take()
            return items
        if value == "{":
            self.take()
            obj = {}
            while self.peek()[1] != "}":
                key_kind, key, _ = self.take()
                if key_kind == "string":
                    key = json.loads(key)
                elif key_kind != "ident":
                    raise AlloySyntaxError(f"line {line}: bad object key {key!r}")
                if self.peek()[1] not in ("=", ":"):
                    raise AlloySyntaxError(f"line {line}: expected = after {key}")
                self.take()
                obj[key] = self.expr()
                if self.peek()[1] != "}":
                    self.take("punct", ",")
            self.take()
            return obj
        if kind == "ident":
            if value in ("true", "false"):
                self.take()
                return value == "true"
            if value == "null":
                self.take()
                return None
            name = self.dotted()
            if self.peek()[1] == "(":
                self.take()
                args = []
                while self.peek()[1] != ")":
                    args.append(self.expr())
                    if self.peek()[1] != ")":
                        self.take("punct", ",")
                self.take()
                return Call(name, args)
            return Ref(name)
        raise AlloySyntaxError(f"line {line}: expected a value, found {value or 'the end'!r}")


def parse(text: str) -> list[Block]:
    """The file's top-level blocks (components); a top-level attribute is an error."""
    p = Parser(text)
    attrs, blocks = p.body("eof")
    if attrs:
        name, (_, line) = next(iter(attrs.items()))
        raise AlloySyntaxError(f"line {line}: attribute {name} outside a block")
    p.take("eof")
    return blocks
