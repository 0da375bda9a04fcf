#!/usr/bin/env python3
"""Set Query on Apache Arrow's compute engine (pyarrow Acero): a CPU baseline for bench/setquery_bench.py.

Reads the BENCH table file (.xft, docs/table-format.md) into an in-memory pyarrow Table, takes every query
variant from the Set Query topologies (topologies/setquery_*.yaml: each `class: query` operator's where,
select and result), translates its WHERE text into a pyarrow.compute expression and runs it as an Acero
plan: table source (only the columns the variant reads) -> filter -> aggregate (COUNT(*), SUM) or ->
project (a projection, then sorted into table order by KSEQ). The table's load is timed apart. Per family it
times all of the family's variants one after the other as one batch, `--reps` times, and reports the
median and the least. Each variant's answer is written as the query operator's result CSV, and with
`--expected DIR` compared byte for byte with DIR/ID.csv from xeflow-setquery-ref.

  python3 bench/setquery_arrow.py bench.xft --topologies topologies --threads 16 --reps 5 \\
      --expected expected --json arrow.json

Needs numpy and pyarrow >= 12 (pyarrow.acero). `--self-check --expected DIR` needs numpy only: it answers
every variant with numpy from the same reader and the same parsed WHERE, compares with the reference and
runs the WHERE parser's own cases, which checks everything but the few pyarrow calls.
"""
import argparse
import glob
import json
import operator
import os
import re
import statistics
import sys
import time
from dataclasses import dataclass, field

import numpy as np

# ---- the table file ------------------------------------------------------------------------------------
# Mirrors docs/table-format.md and make_columnar_geometry (topics/columnar_layout.cpp).

TABLE_MAGIC = b"XFTABLE1"
TABLE_VERSION = 1
TABLE_HEADER_BYTES = 4096
DESCRIPTOR_OFFSET = 48
DESCRIPTOR_BYTES = 64
COLUMN_NAME_BYTES = 48
PAGE_BYTES = 4096
MAX_COLUMNS = 32
FRAME_HEADER_BYTES = 64  # columnar_frame_header: where the index pages' zone entries start
ZONE_ENTRY_BYTES = 32
FRAME_MAGIC = 0x31434658  # "XFC1"
INDEX_VALID = 1
# element_type's values (framework/core/element_type.hpp) as little-endian numpy types.
ELEMENT_DTYPES = ["u1", "i1", "<u2", "<i2", "<u4", "<i4", "<u8", "<i8", "<f4", "<f8"]
ELEMENT_I32 = 5


@dataclass
class ColumnGeometry:
    """Where one column lives in a frame, as make_columnar_geometry computes it."""
    name: str
    element: int
    chars: int  # N of char(N); 0 for a scalar column
    bloom_bits: int
    value_bytes: int = 0
    rows_per_page: int = 0  # a value never straddles two pages: page_bytes // value_bytes
    pages: int = 0  # data pages of a full frame
    first_page: int = 0


@dataclass
class LoadedTable:
    path: str
    rows: int
    rows_per_frame: int
    frames: int
    columns: dict  # name -> numpy array of the column's rows, in table order
    skipped: list  # character columns, not loaded


class TableError(Exception):
    pass


def columnar_geometry(columns, rows_per_frame):
    """Fills each ColumnGeometry's page map and returns (index_pages, total_pages)."""
    index_bytes = FRAME_HEADER_BYTES
    for c in columns:
        c.value_bytes = c.chars if c.chars else np.dtype(ELEMENT_DTYPES[c.element]).itemsize
        c.rows_per_page = PAGE_BYTES // c.value_bytes
        c.pages = -(-rows_per_frame // c.rows_per_page)
        # Each data page's zone entry is followed by its bloom filter, in column order.
        index_bytes += c.pages * (ZONE_ENTRY_BYTES + c.bloom_bits // 8)
    index_pages = -(-index_bytes // PAGE_BYTES)
    next_page = index_pages
    for c in columns:
        c.first_page = next_page
        next_page += c.pages
    return index_pages, next_page


def read_table(path):
    """Reads every scalar column of a table file into memory (numpy only). Character columns are left out:
    no Set Query variant reads S1 ... S8. Raises TableError naming the path and what is wrong."""
    def fail(what):
        raise TableError(f"{path}: {what}")

    file_bytes = os.path.getsize(path)
    with open(path, "rb") as f:
        header = f.read(TABLE_HEADER_BYTES)
    if len(header) < TABLE_HEADER_BYTES or header[:8] != TABLE_MAGIC:
        fail("not a table file (no XFTABLE1 header)")
    version, rows_per_frame, column_count = np.frombuffer(header, "<u4", 3, 8)
    row_count, frame_count, frame_bytes = (int(x) for x in np.frombuffer(header, "<u8", 3, 24))
    rows_per_frame, column_count = int(rows_per_frame), int(column_count)
    if version != TABLE_VERSION:
        fail(f"version {version}, this reader knows {TABLE_VERSION}")
    if rows_per_frame < 1 or not 1 <= column_count <= MAX_COLUMNS:
        fail(f"rows_per_frame {rows_per_frame}, {column_count} columns")
    columns = []
    for c in range(column_count):
        d = header[DESCRIPTOR_OFFSET + c * DESCRIPTOR_BYTES:DESCRIPTOR_OFFSET + (c + 1) * DESCRIPTOR_BYTES]
        name = d[:COLUMN_NAME_BYTES].split(b"\0", 1)[0].decode()
        element = d[48]
        chars, bloom_bits = (int(x) for x in np.frombuffer(d, "<u4", 2, 52))
        if element >= len(ELEMENT_DTYPES) or (chars and element != 0):
            fail(f"column {name}: element type {element} with chars {chars}")
        columns.append(ColumnGeometry(name, element, chars, bloom_bits))
    _, total_pages = columnar_geometry(columns, rows_per_frame)
    if frame_bytes != total_pages * PAGE_BYTES:
        fail(f"frame_bytes {frame_bytes}, but the columns make frames of {total_pages * PAGE_BYTES}")
    if frame_count != -(-row_count // rows_per_frame):
        fail(f"{frame_count} frames for {row_count} rows of {rows_per_frame} a frame")
    if file_bytes != TABLE_HEADER_BYTES + frame_count * frame_bytes:
        fail(f"{file_bytes} bytes, the header says {TABLE_HEADER_BYTES + frame_count * frame_bytes}")

    loaded = LoadedTable(path, row_count, rows_per_frame, frame_count, {}, [])
    if frame_count == 0:
        for c in columns:
            if c.chars:
                loaded.skipped.append(c.name)
            else:
                loaded.columns[c.name] = np.zeros(0, ELEMENT_DTYPES[c.element])
        return loaded
    frames = np.memmap(path, np.uint8, "r", TABLE_HEADER_BYTES, (frame_count, frame_bytes))
    frame_headers = np.array(frames[:, :16]).view("<u4")  # magic, column_count, rows, flags
    expected_rows = np.minimum(rows_per_frame, row_count - np.arange(frame_count) * rows_per_frame)
    bad = np.flatnonzero((frame_headers[:, 0] != FRAME_MAGIC) | (frame_headers[:, 1] != column_count) |
                         (frame_headers[:, 2] != expected_rows) | ((frame_headers[:, 3] & INDEX_VALID) == 0))
    if bad.size:
        k = int(bad[0])
        fail(f"frame {k}: header (magic {frame_headers[k, 0]:#x}, {frame_headers[k, 1]} columns, "
             f"{frame_headers[k, 2]} rows, flags {frame_headers[k, 3]}) is not that of an indexed frame of "
             f"{column_count} columns and {expected_rows[k]} rows")
    for c in columns:
        if c.chars:
            loaded.skipped.append(c.name)
            continue
        # Frame k's rows r sit in page first_page + r // rows_per_page at (r % rows_per_page) * value_bytes:
        # the pages' used bytes side by side are the frame's rows in order, so the frames' rows one after
        # another are the table's, and the last frame's zero rows past row_count are cut off at the end.
        start = c.first_page * PAGE_BYTES
        pages = frames[:, start:start + c.pages * PAGE_BYTES].reshape(frame_count, c.pages, PAGE_BYTES)
        used = np.ascontiguousarray(pages[:, :, :c.rows_per_page * c.value_bytes])
        values = used.view(ELEMENT_DTYPES[c.element]).reshape(frame_count, c.pages * c.rows_per_page)
        loaded.columns[c.name] = np.ascontiguousarray(values[:, :rows_per_frame].reshape(-1)[:row_count])
    del frames
    return loaded


# ---- the WHERE and SELECT text -------------------------------------------------------------------------
# Mirrors the query operator's grammar (operators/olap/query_text.cpp) for integer constants:
#   expression := term (OR term)*          term := factor (AND factor)*
#   factor     := NOT factor | '(' expression ')' | atom
#   atom       := COLUMN (= | <> | != | < | <= | > | >=) CONST
#               | COLUMN [NOT] BETWEEN CONST AND CONST | COLUMN [NOT] IN '(' CONST (',' CONST)* ')'
# Keywords are case-insensitive, column names are not; an empty WHERE selects every row. Text and real
# constants parse there but no Set Query variant has them (every column it reads is i32), so here they are
# an error. A parsed WHERE is a tree of tuples:
#   ("cmp", column, op, value)  ("between", column, low, high)  ("in", column, (values, ...))
#   ("not", child)  ("and", left, right)  ("or", left, right)

KEYWORDS = ("AND", "OR", "NOT", "BETWEEN", "IN")
TWO_CHAR_SYMBOLS = ("<>", "!=", "<=", ">=")
ONE_CHAR_SYMBOLS = "=<>(),*"
COMPARISONS = {"=": operator.eq, "<>": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt,
               ">=": operator.ge}
I32_MIN, I32_MAX = -2 ** 31, 2 ** 31 - 1


class QueryTextError(Exception):
    pass


@dataclass
class Token:
    kind: str  # "end", "word", "integer", "real", "text", "symbol"
    value: str
    at: int  # 1-based character position


def is_ascii_letter(c):
    return "a" <= c <= "z" or "A" <= c <= "Z"


def is_ascii_digit(c):
    return "0" <= c <= "9"


def tokenize(s):
    """The query operator's tokens (C locale: ASCII letters and digits only)."""
    out = []
    i = 0
    while i < len(s):
        c = s[i]
        if c.isspace():
            i += 1
            continue
        at = i + 1
        if is_ascii_letter(c) or c == "_":
            j = i
            while j < len(s) and (is_ascii_letter(s[j]) or is_ascii_digit(s[j]) or s[j] == "_"):
                j += 1
            out.append(Token("word", s[i:j], at))
            i = j
        elif is_ascii_digit(c) or (c in "-+." and i + 1 < len(s) and
                                   (is_ascii_digit(s[i + 1]) or s[i + 1] == ".")):
            j = i + 1
            real = c == "."
            while j < len(s):
                if is_ascii_digit(s[j]):
                    j += 1
                elif s[j] in ".eE":
                    real = True
                    j += 1
                    if s[j - 1] in "eE" and j < len(s) and s[j] in "+-":
                        j += 1
                else:
                    break
            out.append(Token("real" if real else "integer", s[i:j], at))
            i = j
        elif c == "'":
            j, value = i + 1, ""
            while True:
                if j >= len(s):
                    raise QueryTextError(f"at character {at}: a quoted text that never ends")
                if s[j] == "'":
                    if j + 1 < len(s) and s[j + 1] == "'":
                        value += "'"
                        j += 2
                        continue
                    break
                value += s[j]
                j += 1
            out.append(Token("text", value, at))
            i = j + 1
        else:
            symbol = s[i:i + 2] if s[i:i + 2] in TWO_CHAR_SYMBOLS else c
            if symbol == c and c not in ONE_CHAR_SYMBOLS:
                raise QueryTextError(f"at character {at}: unexpected '{c}'")
            out.append(Token("symbol", symbol, at))
            i += len(symbol)
    out.append(Token("end", "", len(s) + 1))
    return out


def is_keyword(t, k):
    return t.kind == "word" and t.value.upper() == k


def is_symbol(t, s):
    return t.kind == "symbol" and t.value == s


def describe(t):
    return "the end" if t.kind == "end" else f"'{t.value}'"


class WhereParser:
    """Recursive descent over the tokens, building the tree bottom-up."""

    def __init__(self, text):
        self.tokens = tokenize(text)
        self.pos = 0

    def parse(self):
        if self.peek().kind == "end":
            return None
        tree = self.expression()
        if self.peek().kind != "end":
            self.fail(self.peek(), f"expected AND, OR or the end, found {describe(self.peek())}")
        return tree

    def peek(self):
        return self.tokens[self.pos]

    def next(self):
        self.pos += 1
        return self.tokens[self.pos - 1]

    @staticmethod
    def fail(t, what):
        raise QueryTextError(f"at character {t.at}: {what}")

    def expression(self):
        tree = self.term()
        while is_keyword(self.peek(), "OR"):
            self.next()
            tree = ("or", tree, self.term())
        return tree

    def term(self):
        tree = self.factor()
        while is_keyword(self.peek(), "AND"):
            self.next()
            tree = ("and", tree, self.factor())
        return tree

    def factor(self):
        if is_keyword(self.peek(), "NOT"):
            self.next()
            return ("not", self.factor())
        if is_symbol(self.peek(), "("):
            self.next()
            tree = self.expression()
            if not is_symbol(self.peek(), ")"):
                self.fail(self.peek(), f"expected ')', found {describe(self.peek())}")
            self.next()
            return tree
        return self.atom()

    def constant(self, column):
        t = self.next()
        if t.kind == "integer":
            return int(t.value)
        if t.kind in ("real", "text"):
            self.fail(t, f"{describe(t)} is not an integer; column '{column}' and every column Set Query "
                         "reads holds integers")
        self.fail(t, f"expected a constant (a number or 'text'), found {describe(t)}")

    def atom(self):
        column = self.next()
        if column.kind != "word" or any(is_keyword(column, k) for k in KEYWORDS):
            self.fail(column, f"expected a column name, NOT or '(', found {describe(column)}")
        name = column.value
        negate = False
        if is_keyword(self.peek(), "NOT"):
            self.next()
            negate = True
            if not (is_keyword(self.peek(), "BETWEEN") or is_keyword(self.peek(), "IN")):
                self.fail(self.peek(), f"expected BETWEEN or IN after NOT, found {describe(self.peek())}")
        op = self.next()
        if is_keyword(op, "BETWEEN"):
            low = self.constant(name)
            if not is_keyword(self.peek(), "AND"):
                self.fail(self.peek(), f"expected AND in BETWEEN, found {describe(self.peek())}")
            self.next()
            tree = ("between", name, low, self.constant(name))
        elif is_keyword(op, "IN"):
            if not is_symbol(self.peek(), "("):
                self.fail(self.peek(), f"expected '(' after IN, found {describe(self.peek())}")
            self.next()
            values = [self.constant(name)]
            while is_symbol(self.peek(), ","):
                self.next()
                values.append(self.constant(name))
            if not is_symbol(self.peek(), ")"):
                self.fail(self.peek(), f"expected ',' or ')' in the IN list, found {describe(self.peek())}")
            self.next()
            tree = ("in", name, tuple(values))
        elif op.kind == "symbol" and op.value not in ("(", ")", ",", "*"):
            tree = ("cmp", name, "<>" if op.value == "!=" else op.value, self.constant(name))
        else:
            self.fail(op, f"expected a comparison (= <> < <= > >=), BETWEEN or IN after column '{name}', "
                          f"found {describe(op)}")
        return ("not", tree) if negate else tree


def parse_where(text):
    """The WHERE text as a tree (None: every row). Raises QueryTextError "at character N: ..."."""
    return WhereParser(text).parse()


def where_columns(tree):
    if tree is None:
        return set()
    if tree[0] in ("and", "or"):
        return where_columns(tree[1]) | where_columns(tree[2])
    if tree[0] == "not":
        return where_columns(tree[1])
    return {tree[1]}


def where_constants(tree):
    if tree is None:
        return []
    kind = tree[0]
    if kind in ("and", "or"):
        return where_constants(tree[1]) + where_constants(tree[2])
    if kind == "not":
        return where_constants(tree[1])
    if kind == "cmp":
        return [tree[3]]
    if kind == "between":
        return [tree[2], tree[3]]
    return list(tree[2])


def where_text(tree):
    """The tree fully parenthesised: what the parser's cases compare."""
    if tree is None:
        return ""
    kind = tree[0]
    if kind in ("and", "or"):
        return f"({where_text(tree[1])} {kind.upper()} {where_text(tree[2])})"
    if kind == "not":
        return f"NOT ({where_text(tree[1])})"
    if kind == "cmp":
        return f"{tree[1]} {tree[2]} {tree[3]}"
    if kind == "between":
        return f"{tree[1]} BETWEEN {tree[2]} AND {tree[3]}"
    return f"{tree[1]} IN ({', '.join(str(v) for v in tree[2])})"


def build_predicate(tree, column, constant, isin):
    """The tree in terms of an engine: `column(name)` gives a column (numpy array or pyarrow field
    expression), `constant(v)` a constant of the column's type (i32), `isin(col, values)` the membership
    test. The comparisons and &, |, ~ are the same Python operators for both engines."""
    def build(t):
        kind = t[0]
        if kind == "and":
            return build(t[1]) & build(t[2])
        if kind == "or":
            return build(t[1]) | build(t[2])
        if kind == "not":
            return ~build(t[1])
        if kind == "cmp":
            return COMPARISONS[t[2]](column(t[1]), constant(t[3]))
        if kind == "between":
            return (column(t[1]) >= constant(t[2])) & (column(t[1]) <= constant(t[3]))
        return isin(column(t[1]), list(t[2]))
    return build(tree)


@dataclass
class SelectItem:
    kind: str  # "count", "sum" or "column"
    column: str  # "" for COUNT(*)

    def header(self):
        return {"count": "COUNT(*)", "sum": f"SUM({self.column})"}.get(self.kind, self.column)


def parse_select(text):
    """The select items: COUNT(*), SUM(col) and plain columns, as the query operator reads them. MIN and MAX
    parse there but Set Query has none, so here they are an error (their answer over no rows is not 0)."""
    t = tokenize(text)
    i = 0
    items = []

    def fail(at, what):
        raise QueryTextError(f"at character {at.at}: {what}")

    if t[0].kind == "end":
        fail(t[0], "select names nothing (COUNT(*), SUM(col) or columns)")
    while True:
        if t[i].kind != "word" or any(is_keyword(t[i], k) for k in KEYWORDS):
            fail(t[i], f"expected COUNT(*), SUM or a column, found {describe(t[i])}")
        function = t[i].value.upper()
        if function in ("COUNT", "SUM", "MIN", "MAX") and is_symbol(t[i + 1], "("):
            if function in ("MIN", "MAX"):
                fail(t[i], f"{function} is not used by Set Query; this script answers COUNT(*), SUM(col) "
                           "and plain columns")
            i += 2
            if function == "COUNT":
                if not is_symbol(t[i], "*"):
                    fail(t[i], f"COUNT takes '*' (every matching row), found {describe(t[i])}")
                items.append(SelectItem("count", ""))
            else:
                if t[i].kind != "word" or any(is_keyword(t[i], k) for k in KEYWORDS):
                    fail(t[i], f"expected a column in SUM(...), found {describe(t[i])}")
                items.append(SelectItem("sum", t[i].value))
            i += 1
            if not is_symbol(t[i], ")"):
                fail(t[i], f"expected ')', found {describe(t[i])}")
        else:
            items.append(SelectItem("column", t[i].value))
        i += 1
        if t[i].kind == "end":
            break
        if not is_symbol(t[i], ","):
            fail(t[i], f"expected ',' or the end, found {describe(t[i])}")
        i += 1
    if len({item.kind == "column" for item in items}) > 1:
        raise QueryTextError("select mixes columns and aggregates; without group_by it takes one or the "
                             "other")
    return items


# ---- the variants --------------------------------------------------------------------------------------

# One operator a line, as xeflow-setquery-yaml writes them (apps/setquery/setquery_topology.cpp):
#   q1_k500k: {class: query, on: gpu, inputs: [bench], params: {where: "...", select: "...", result: R}}
QUERY_LINE = re.compile(r"^\s+(?P<name>[A-Za-z_][\w-]*):\s*\{\s*class:\s*query\s*,(?P<rest>.*)\}\s*$")
QUOTED_PARAM = r'\b{}:\s*"((?:[^"\\]|\\.)*)"'
RESULT_PARAM = re.compile(r"\bresult:\s*([^,}\s]+)")


@dataclass
class Variant:
    id: str  # "Q2A_K100": the result file's name
    family: str  # "Q2A"
    where: str
    select: str
    tree: object = None
    items: list = field(default_factory=list)

    def projection(self):
        return self.items[0].kind == "column"


def yaml_unquote(s):
    return re.sub(r"\\(.)", r"\1", s)


def load_variants(topologies_dir):
    """Every query operator of topologies_dir/setquery_*.yaml, families in file-name order (q1, q2a, ... q4b),
    variants in the file's order. The variant's id is its result file's name, its family what precedes the
    id's first '_'."""
    variants = []
    paths = sorted(glob.glob(os.path.join(topologies_dir, "setquery_*.yaml")))
    if not paths:
        sys.exit(f"setquery_arrow: no setquery_*.yaml in {topologies_dir}")
    for path in paths:
        with open(path) as f:
            for line_number, line in enumerate(f, 1):
                m = QUERY_LINE.match(line)
                if not m:
                    continue
                rest = m.group("rest")
                where = re.search(QUOTED_PARAM.format("where"), rest)
                select = re.search(QUOTED_PARAM.format("select"), rest)
                result = RESULT_PARAM.search(rest)
                if not select:
                    sys.exit(f"{path}:{line_number}: query operator {m.group('name')} has no select")
                vid = (os.path.splitext(os.path.basename(result.group(1)))[0] if result else
                       m.group("name").upper())
                v = Variant(vid, vid.split("_")[0], yaml_unquote(where.group(1)) if where else "",
                            yaml_unquote(select.group(1)))
                try:
                    v.tree = parse_where(v.where)
                    v.items = parse_select(v.select)
                except QueryTextError as e:
                    sys.exit(f"{path}:{line_number}: {vid}: {e}")
                variants.append(v)
    return variants


def choose_families(variants, names):
    """The variants grouped by family, in load order, limited to `names` (case-insensitive) if given."""
    families = {}
    for v in variants:
        families.setdefault(v.family, []).append(v)
    if not names:
        return families
    chosen = {}
    for name in names:
        key = name.strip().upper()
        if key not in families:
            sys.exit(f"setquery_arrow: --families: no family '{name}' (found {' '.join(families)})")
        chosen[key] = families[key]
    return {k: families[k] for k in families if k in chosen}


def check_columns(variants, table):
    """Every column a variant names must be an i32 column of the table and every constant fit i32, as
    the reference requires (apps/setquery/setquery_queries.cpp)."""
    for v in variants:
        names = where_columns(v.tree) | {item.column for item in v.items if item.kind != "count"}
        for name in sorted(names):
            values = table.columns.get(name)
            if values is None:
                sys.exit(f"setquery_arrow: {v.id}: the table has no i32 column {name}" +
                         (" (a character column)" if name in table.skipped else ""))
            if values.dtype != np.int32:
                sys.exit(f"setquery_arrow: {v.id}: column {name} is {values.dtype}, not i32")
        for value in where_constants(v.tree):
            if not I32_MIN <= value <= I32_MAX:
                sys.exit(f"setquery_arrow: {v.id}: constant {value} is outside i32")


# ---- answers as the query operator's result CSV ---------------------------------------------------------

def aggregate_csv(items, values):
    """Header line, then one line of the aggregates (COUNT and SUM of no rows are 0)."""
    return ",".join(i.header() for i in items) + "\n" + ",".join(str(int(v)) for v in values) + "\n"


def projection_csv(items, columns):
    """Header line, then one line per row of `columns` (numpy arrays in select order)."""
    lines = [",".join(i.header() for i in items) + "\n"]
    lines.extend(",".join(map(str, row)) + "\n" for row in zip(*(c.tolist() for c in columns)))
    return "".join(lines)


def compare_with_expected(answers, expected_dir):
    """The ids whose CSV differs from expected_dir/ID.csv (or is missing there), each with why."""
    problems = []
    for vid, text in answers.items():
        path = os.path.join(expected_dir, vid + ".csv")
        try:
            with open(path, "rb") as f:
                expected = f.read()
        except OSError as e:
            problems.append(f"{vid}: cannot read {path}: {e.strerror}")
            continue
        got = text.encode()
        if got == expected:
            continue
        got_lines, expected_lines = got.split(b"\n"), expected.split(b"\n")
        line = next((n for n, (a, b) in enumerate(zip(got_lines, expected_lines)) if a != b),
                    min(len(got_lines), len(expected_lines)))
        def shown(lines):
            return lines[line].decode() if line < len(lines) else "(no line)"
        problems.append(f"{vid}: differs from {path} at line {line + 1}: got '{shown(got_lines)}', "
                        f"expected '{shown(expected_lines)}' ({len(got)} vs {len(expected)} bytes)")
    return problems


# ---- numpy: the self-check ----------------------------------------------------------------------------

def numpy_answer(v, columns, rows):
    mask = (np.ones(rows, bool) if v.tree is None else
            build_predicate(v.tree, columns.__getitem__, np.int32,
                            lambda x, values: np.isin(x, np.array(values, np.int32))))
    if v.projection():
        return projection_csv(v.items, [columns[i.column][mask] for i in v.items])
    return aggregate_csv(v.items, [int(np.count_nonzero(mask)) if i.kind == "count" else
                                   int(columns[i.column][mask].sum(dtype=np.int64)) for i in v.items])


PARSER_CASES = [  # (WHERE text, the tree as where_text writes it, or None for an error)
    ("K2 = 2 AND NOT K100 = 3", "(K2 = 2 AND NOT (K100 = 3))"),
    ("a = 1 OR b = 2 AND c = 3", "(a = 1 OR (b = 2 AND c = 3))"),
    ("(a = 1 OR b = 2) AND c = 3", "((a = 1 OR b = 2) AND c = 3)"),
    ("NOT a = 1 AND b = 2", "(NOT (a = 1) AND b = 2)"),
    ("NOT NOT a <> 1", "NOT (NOT (a <> 1))"),
    ("a = 1 AND b = 2 AND c = 3", "((a = 1 AND b = 2) AND c = 3)"),
    ("x not between -5 and +7", "NOT (x BETWEEN -5 AND 7)"),
    ("x Not In (1,2 , 3)", "NOT (x IN (1, 2, 3))"),
    ("x!=4 or(y>=1 and z<=2)", "(x <> 4 OR (y >= 1 AND z <= 2))"),
    ("KSEQ BETWEEN 400000 AND 500000 AND K4 = 3", "(KSEQ BETWEEN 400000 AND 500000 AND K4 = 3)"),
    ("x<-5", "x < -5"),
    ("", ""),
    ("K2 = 2.5", None), ("K2 = 'a'", None), ("K2 =", None), ("K2 2", None), ("(K2 = 1", None),
    ("K2 NOT = 1", None), ("AND = 1", None), ("K2 = 1 K3 = 2", None), ("K2 IN ()", None),
    ("K2 BETWEEN 1 OR 2", None), ("K2 = 1 AND", None), ("K2 = - 1", None), ("K2 = 1 # x", None),
]


def run_parser_cases():
    failures = []
    for text, want in PARSER_CASES:
        try:
            got = where_text(parse_where(text))
        except QueryTextError as e:
            got = None
            why = str(e)
        if got != want:
            failures.append(f"parse_where({text!r}): got {got!r}{' (' + why + ')' if got is None else ''}, "
                            f"expected {want!r}")
    return failures


def self_check(args, table, families):
    failures = run_parser_cases()
    for f in failures:
        print(f"parser case failed: {f}", file=sys.stderr)
    print(f"parser: {len(PARSER_CASES) - len(failures)} of {len(PARSER_CASES)} cases as expected")
    checked = 0
    print(f"{'family':8}{'variants':>10}{'numpy ms':>12}  answers")
    for family, variants in families.items():
        start = time.perf_counter()
        answers = {v.id: numpy_answer(v, table.columns, table.rows) for v in variants}
        ms = (time.perf_counter() - start) * 1e3
        problems = compare_with_expected(answers, args.expected)
        for p in problems:
            print(p, file=sys.stderr)
        failures += problems
        checked += len(variants)
        print(f"{family:8}{len(variants):>10}{ms:>12.1f}  "
              f"{'equal to the reference' if not problems else f'{len(problems)} differ'}")
    if failures:
        sys.exit(f"setquery_arrow: self-check failed ({len(failures)} problems)")
    print(f"self-check: {checked} variants equal to the reference, {len(PARSER_CASES)} parser cases")


# ---- pyarrow Acero: the benchmark ----------------------------------------------------------------------

def import_arrow():
    try:
        import pyarrow as pa
        import pyarrow.compute as pc
    except ImportError:
        sys.exit("setquery_arrow: pyarrow is not installed (pip install 'pyarrow>=12'); "
                 "--self-check needs only numpy")
    try:
        import pyarrow.acero as acero
    except ImportError:
        sys.exit(f"setquery_arrow: pyarrow {pa.__version__} has no pyarrow.acero (it came with pyarrow 12); "
                 "install pyarrow >= 12")
    return pa, pc, acero


def arrow_table(pa, table, batch_rows):
    """The loaded columns as one pyarrow Table of `batch_rows`-row record batches: the table source hands
    each batch to the thread pool as a unit of work, so the batches are what the threads share."""
    whole = pa.table({name: pa.array(values) for name, values in table.columns.items()})
    return pa.Table.from_batches(whole.to_batches(max_chunksize=batch_rows), schema=whole.schema)


def arrow_plan(pa, pc, acero, source, v):
    """The variant's Acero declaration: table source -> filter -> aggregate, or -> project."""
    i32 = pa.int32()
    # The source holds only the columns the variant reads (Table.select shares their buffers), as a
    # columnar scan with column pruning would: the filter copies every column of its input for the rows it
    # keeps, and with all 13 columns Q2B (half the rows kept) took 4.7 times as long (100,000 rows, 16
    # threads), copying columns nobody reads.
    read = where_columns(v.tree) | {i.column for i in v.items if i.kind != "count"}
    read |= {"KSEQ"} if v.projection() or not read else set()
    nodes = [acero.Declaration("table_source",
                               acero.TableSourceNodeOptions(source.select(sorted(read))))]
    if v.tree is not None:
        predicate = build_predicate(v.tree, pc.field, lambda x: pc.scalar(pa.scalar(x, i32)),
                                    lambda x, values: x.isin(pa.array(values, i32)))
        nodes.append(acero.Declaration("filter", acero.FilterNodeOptions(predicate)))
    if v.projection():
        # With use_threads the batches leave the filter in whatever order the threads finish, so the rows
        # are put back in table order by KSEQ afterwards (row number + 1: checked at load).
        names = list(dict.fromkeys([i.column for i in v.items] + ["KSEQ"]))
        nodes.append(acero.Declaration("project", acero.ProjectNodeOptions([pc.field(n) for n in names],
                                                                           names)))
        return acero.Declaration.from_sequence(nodes)
    aggregates = []
    for k, item in enumerate(v.items):
        # Targets always as lists: pyarrow 12 iterates the target, so a bare name would be its letters.
        # COUNT(*) counts the rows of any column in mode "all"; SUM with min_count 0 gives 0 over no rows.
        if item.kind == "count":
            aggregates.append(([sorted(read)[0]], "count", pc.CountOptions(mode="all"), f"a{k}"))
        else:
            aggregates.append(([item.column], "sum", pc.ScalarAggregateOptions(min_count=0), f"a{k}"))
    nodes.append(acero.Declaration("aggregate", acero.AggregateNodeOptions(aggregates)))
    return acero.Declaration.from_sequence(nodes)


def arrow_result(plan, v):
    """Runs the plan; a projection's rows come back sorted by KSEQ (table order)."""
    result = plan.to_table(use_threads=True)
    return result.sort_by("KSEQ") if v.projection() else result


def arrow_csv(result, v):
    if v.projection():
        return projection_csv(v.items, [result.column(i.column).to_numpy() for i in v.items])
    values = [result.column(f"a{k}")[0].as_py() for k in range(len(v.items))]
    return aggregate_csv(v.items, [0 if x is None else x for x in values])


def benchmark(args, table, load_seconds, families):
    pa, pc, acero = import_arrow()
    pa.set_cpu_count(args.threads)
    start = time.perf_counter()
    source = arrow_table(pa, table, args.batch_rows)
    load_seconds += time.perf_counter() - start
    if any(v.projection() for vs in families.values() for v in vs):
        kseq = table.columns.get("KSEQ")
        if kseq is None or not np.array_equal(kseq, np.arange(1, table.rows + 1, dtype=kseq.dtype)):
            sys.exit("setquery_arrow: projections are put in table order by KSEQ, but the table's KSEQ is "
                     "not the row number + 1")
    print(f"pyarrow {pa.__version__}, {args.threads} threads, {table.rows} rows in batches of "
          f"{args.batch_rows}, loaded in {load_seconds:.2f} s")
    print(f"{'family':8}{'variants':>10}{'median ms':>12}{'min ms':>10}  answers")
    report = []
    for family, variants in families.items():
        plans = [arrow_plan(pa, pc, acero, source, v) for v in variants]
        # One untimed run gives the answers to check (and warms the thread pool); the reps are timed: each
        # runs every variant of the family one after the other, from plan to a table in table order (the CSV
        # text is made once, from the untimed run).
        answers = {v.id: arrow_csv(arrow_result(p, v), v) for v, p in zip(variants, plans)}
        answer_state = "not checked"
        if args.expected:
            problems = compare_with_expected(answers, args.expected)
            if problems:
                sys.exit("setquery_arrow: answers differ from the reference:\n" + "\n".join(problems))
            answer_state = "equal to the reference"
        times_ms = []
        for _ in range(args.reps):
            t0 = time.perf_counter()
            for v, p in zip(variants, plans):
                arrow_result(p, v)
            times_ms.append((time.perf_counter() - t0) * 1e3)
        median_ms, min_ms = statistics.median(times_ms), min(times_ms)
        print(f"{family:8}{len(variants):>10}{median_ms:>12.2f}{min_ms:>10.2f}  {answer_state}")
        report.append({"family": family, "variants": len(variants), "median_ms": median_ms, "min_ms": min_ms,
                       "times_ms": times_ms, "answers": answer_state})
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"benchmark": "setquery-arrow", "pyarrow": pa.__version__, "threads": args.threads,
                       "rows": table.rows, "batch_rows": args.batch_rows, "reps": args.reps,
                       "table": os.path.abspath(table.path), "load_seconds": load_seconds,
                       "families": report}, f, indent=2)
            f.write("\n")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("table", help="the BENCH table file (xeflow-setquery-gen)")
    p.add_argument("--topologies", default="topologies",
                   help="folder of setquery_*.yaml (default %(default)s)")
    p.add_argument("--families", help="comma-separated families (Q1,Q2A,...); default: every one found")
    p.add_argument("--threads", type=int, default=os.cpu_count(),
                   help="pyarrow's CPU thread pool (pa.set_cpu_count; default: the CPUs, %(default)s)")
    p.add_argument("--reps", type=int, default=5, help="timed runs of each family (default %(default)s)")
    p.add_argument("--batch-rows", type=int, default=65536,
                   help="rows of each record batch of the source table (default %(default)s)")
    p.add_argument("--expected", help="folder of the reference's ID.csv (xeflow-setquery-ref --out-dir)")
    p.add_argument("--json", help="write the results here")
    p.add_argument("--self-check", action="store_true",
                   help="numpy only: answer every variant with numpy, compare with --expected, run the "
                        "WHERE parser's cases; no pyarrow, no timing")
    args = p.parse_args()
    if args.threads < 1 or args.reps < 1 or args.batch_rows < 1:
        p.error("--threads, --reps and --batch-rows must be at least 1")
    if args.self_check and not args.expected:
        p.error("--self-check compares with the reference: give --expected DIR")

    names = args.families.split(",") if args.families else []
    families = choose_families(load_variants(args.topologies), names)
    start = time.perf_counter()
    try:
        table = read_table(args.table)
    except (OSError, TableError) as e:
        sys.exit(f"setquery_arrow: {e}")
    load_seconds = time.perf_counter() - start
    check_columns([v for vs in families.values() for v in vs], table)
    if args.self_check:
        self_check(args, table, families)
    else:
        benchmark(args, table, load_seconds, families)


if __name__ == "__main__":
    main()
