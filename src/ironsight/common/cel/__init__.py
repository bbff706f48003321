"""The Common Expression Language (CEL), compiled to Python closures: the fleet's query
language, evaluated over plain Python documents.

    program = compile('inventory.pci_devices.exists(d, d.vendor_id == "10de")')
    program.roots                      # frozenset({'inventory'})
    program.matches({"inventory": doc})  # True or False; CelEvalError if it fails

Compile once, evaluate many times: compiling parses (lark, LALR, grammar.lark written from
cel-spec's langdef.md) and turns the tree into nested closures, so that evaluating is a few
Python calls per node with no tree walk. Values are plain Python: None (null), bool, int (CEL
int and uint), float (double), str, bytes, list, dict (map), datetime.datetime (timestamp,
tz-aware UTC; a naive one is read as UTC) and datetime.timedelta (duration). Tuples are read
as lists and any Mapping as a map.

Supported:
- literals: int (decimal, hex), uint (`1u`), double (`1.5`, `.5`, `1e3`), strings ('…', "…",
  triple-quoted, raw r"…", CEL's escapes), bytes (b"…"), true, false, null, lists and maps
  (trailing commas allowed); `//` comments;
- operators: `?:`, `||` and `&&` (commutative over errors: `false && error` and
  `error && false` are false), `!`, unary `-`, `==`/`!=` (heterogeneous: numbers by value
  across int and double, bool is no number, other mixes unequal; lists and maps deeply),
  `< <= > >=` (numbers, strings, bytes, bools, timestamps, durations), `+` (numbers of one
  type, strings, bytes, lists, timestamp+duration, duration+duration), `- * / %` (int `/`
  truncates, `%` takes the dividend's sign, both fail on zero; 64-bit overflow fails;
  timestamp-timestamp, timestamp-duration), `in` (list element, map key), `[]`, `a.b` on maps;
- macros: has(a.b), e.all(x, p), e.exists(x, p), e.exists_one(x, p), e.map(x, t),
  e.map(x, p, t), e.filter(x, p), over lists or a map's keys;
- functions: size (function and method), contains, startsWith, endsWith, matches (function
  and method), lowerAscii, upperAscii, trim, split, join (the strings extension), int, uint,
  double, string, bool, bytes, dyn, timestamp (RFC 3339 string, or Unix seconds), duration
  ("720h", "1.5s", "1h30m"), and the timestamp/duration accessors getFullYear, getMonth,
  getDate, getDayOfMonth, getDayOfWeek, getDayOfYear, getHours, getMinutes, getSeconds,
  getMilliseconds (with an optional time zone).

Deliberate differences from full CEL:
- no protobuf: no messages, message literals (`M{f: 1}`), enums, wrapper types, type
  values or type(); no type checker, so a misspelt field is found at evaluation;
- uint is not a type of its own: `1u` is the int 1, so `1u == 1` and `1u + 1` work, uint
  arithmetic is checked against the signed 64-bit range, and `-1u` is refused only as a
  literal;
- arithmetic does not mix int and double (as in CEL: `1 + 1.0` fails; write `double(1)`);
- maps are dicts, so keys `1` and `true` cannot both be in one map literal;
- regular expressions are Python's `re`, not RE2: the syntax differs at the edges, and a
  pattern can backtrack; a pattern must be a string literal of at most 256 characters and is
  compiled once, when the expression is;
- timestamps and durations keep microseconds (a literal's nanoseconds are truncated);
  timestamp("…") and duration("…") of a bad literal fail at compile time;
- limits: an expression is at most 4096 characters and 64 levels deep; there is no budget
  on evaluation time (nested comprehensions over large lists are the caller's to avoid).

Python's `eval` and `exec` are never used.
"""

from __future__ import annotations

from .compiler import MAX_DEPTH, Compiler
from .errors import CelCompileError, CelError, CelEvalError, CelSyntaxError
from .parser import parse
from .program import Program

__all__ = [
    "MAX_DEPTH",
    "MAX_SOURCE_LENGTH",
    "CelCompileError",
    "CelError",
    "CelEvalError",
    "CelSyntaxError",
    "Program",
    "compile",
    "compile_expression",
]

MAX_SOURCE_LENGTH = 4096


def compile(source: str) -> Program:
    """The Program of a CEL expression. Raises CelSyntaxError for text that is not CEL,
    CelCompileError for CEL that means nothing here (unknown function, wrong argument count,
    bad literal or pattern, too long or too deep)."""
    if len(source) > MAX_SOURCE_LENGTH:
        raise CelCompileError(f"expression longer than {MAX_SOURCE_LENGTH} characters "
                              f"({len(source)})")
    compiler = Compiler(source)
    evaluator = compiler.compile(parse(source))
    return Program(source, frozenset(compiler.roots), evaluator)


compile_expression = compile
