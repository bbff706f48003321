"""The parse tree to closures (closures.py, macros.py), checking what the grammar cannot:
reserved words, literal values, function names and argument counts, macro forms, regular
expressions, and the nesting depth. Everything that can fail before evaluation fails here."""

from __future__ import annotations

import re
from collections.abc import Callable
from types import MappingProxyType
from typing import Any, Final

from lark import Token, Tree

from .closures import (
    ORDERINGS,
    Evaluator,
    binary,
    call,
    conditional,
    constant,
    equality,
    equality_with,
    list_of,
    logical_and,
    logical_chain,
    logical_not,
    logical_or,
    map_of,
    membership_in,
    negation,
    ordering_with,
    pattern_match,
    selection,
    variable,
)
from .errors import CelCompileError, CelEvalError, CelSyntaxError, Location, locate
from .functions import FUNCTIONS
from .literals import (
    INT_MAX,
    INT_MIN,
    LiteralError,
    bytes_value,
    double_value,
    int_value,
    string_value,
    uint_value,
)
from .macros import (
    COMPREHENSIONS,
    all_of,
    exists,
    exists_one,
    filter_by,
    has,
    map_to,
)
from .values import add, contained, divide, index, modulo, multiply, subtract

MAX_DEPTH = 64
MAX_PATTERN_LENGTH = 256

RESERVED = frozenset({
    "true", "false", "null", "in", "as", "break", "const", "continue", "else", "for",
    "function", "if", "import", "let", "loop", "package", "namespace", "return", "var",
    "void", "while",
})
_ARITHMETIC: Final[MappingProxyType[str, Callable[[Any, Any], Any]]] = MappingProxyType({
    "+": add, "-": subtract, "*": multiply, "/": divide, "%": modulo,
})
_SCALAR_LITERALS = frozenset({"int_lit", "uint_lit", "float_lit", "string_lit", "bytes_lit",
                              "true_lit", "false_lit", "null_lit", "neg"})
_ORDERABLE_CONSTANTS = frozenset({int, float, str, bytes, bool})
_NO_VALUE = object()

Node = Tree[Token]
Scope = frozenset[str]


class Compiler:
    """Compiles one expression; `roots` collects the top-level names it reads."""

    def __init__(self, source: str) -> None:
        self._source = source
        self.roots: set[str] = set()
        self._rules: dict[str, Callable[[Node, Scope, int], Evaluator]] = {
            "conditional": self._conditional, "binop": self._binop, "not_": self._not,
            "neg": self._neg, "select": self._select, "index": self._index,
            "method_call": self._method_call, "call": self._call, "root_call": self._call,
            "ident": self._ident, "root_ident": self._ident, "list_lit": self._list,
            "map_lit": self._map,
        }

    def compile(self, tree: Node) -> Evaluator:
        return self._node(tree, frozenset(), 1)

    # --- dispatch and positions -------------------------------------------------------------

    def _node(self, tree: Node, scope: Scope, depth: int) -> Evaluator:
        if depth > MAX_DEPTH:
            raise CelCompileError(f"expression nested more than {MAX_DEPTH} levels deep",
                                  *self._where(tree))
        rule = self._rules.get(str(tree.data))
        if rule is not None:
            return rule(tree, scope, depth)
        return constant(self._literal(tree))

    def _where(self, node: Node | Token) -> Location:
        position = node.start_pos if isinstance(node, Token) else node.meta.start_pos
        return locate(self._source, position or 0)

    def _error(self, reason: str, node: Node | Token) -> CelCompileError:
        return CelCompileError(reason, *self._where(node))

    # --- literals ---------------------------------------------------------------------------

    def _literal(self, tree: Node) -> Any:
        kind = str(tree.data)
        if kind == "true_lit":
            return True
        if kind == "false_lit":
            return False
        if kind == "null_lit":
            return None
        token = tree.children[0]
        assert isinstance(token, Token)
        try:
            if kind == "int_lit":
                value = int_value(token.value)
                if value > INT_MAX:
                    raise LiteralError("integer literal out of range")
                return value
            if kind == "uint_lit":
                return uint_value(token.value)
            if kind == "float_lit":
                return double_value(token.value)
            if kind == "string_lit":
                return string_value(token.value)
            if kind == "bytes_lit":
                return bytes_value(token.value)
        except LiteralError as exc:
            raise CelCompileError(exc.reason, *self._where_offset(token, exc.offset)) from None
        raise self._error(f"unsupported expression {kind!r}", tree)  # pragma: no cover

    def _where_offset(self, token: Token, offset: int) -> Location:
        return locate(self._source, (token.start_pos or 0) + offset)

    def _constant(self, tree: Node) -> Any:
        """A literal's value (a negated number included), or _NO_VALUE for anything else."""
        kind = str(tree.data)
        if kind not in _SCALAR_LITERALS:
            return _NO_VALUE
        if kind == "neg":
            operand = tree.children[-1]
            assert isinstance(operand, Tree)
            if operand.data not in ("int_lit", "float_lit"):
                return _NO_VALUE
            return self._negated_literal(tree, operand)
        return self._literal(tree)

    def _negated_literal(self, tree: Node, operand: Node) -> Any:
        """`-9223372036854775808` is valid though its digits alone exceed INT_MAX, so the
        sign is applied before the range is checked."""
        count = len(tree.children) - 1
        if operand.data == "float_lit":
            value: float = self._literal(operand)
            return -value if count % 2 else value
        token = operand.children[0]
        assert isinstance(token, Token)
        number = int_value(token.value)
        signed = -number if count % 2 else number
        if not INT_MIN <= signed <= INT_MAX:
            raise self._error("integer literal out of range", operand)
        return signed

    # --- names ------------------------------------------------------------------------------

    def _name(self, token: Token) -> str:
        name = str(token.value)
        if name in RESERVED:
            raise CelSyntaxError(f"reserved word {name!r} cannot be used as a name",
                                 *self._where(token))
        return name

    def _ident(self, tree: Node, scope: Scope, depth: int) -> Evaluator:
        token = tree.children[0]
        assert isinstance(token, Token)
        name = self._name(token)
        if name in scope:
            if tree.data == "root_ident":
                raise self._error(f"'.{name}' is hidden by the comprehension variable "
                                  f"'{name}'", token)
            return variable(name, self._where(token))
        self.roots.add(name)
        return variable(name, self._where(token))

    def _select(self, tree: Node, scope: Scope, depth: int) -> Evaluator:
        """A run of selections `a.b.c` becomes one closure (selection)."""
        fields: list[str] = []
        wheres: list[Location] = []
        node = tree
        while node.data == "select":
            base, token = node.children
            assert isinstance(base, Tree) and isinstance(token, Token)
            fields.append(self._name(token))
            wheres.append(self._where(token))
            node = base
        fields.reverse()
        wheres.reverse()
        inner_depth = depth + len(fields)
        if inner_depth > MAX_DEPTH:
            raise self._error(f"expression nested more than {MAX_DEPTH} levels deep", tree)
        base_of = self._node(node, scope, inner_depth)
        root = None
        if node.data in ("ident", "root_ident"):
            root = str(node.children[0])
        return selection(base_of, tuple(fields), tuple(wheres), root)

    # --- operators --------------------------------------------------------------------------

    def _conditional(self, tree: Node, scope: Scope, depth: int) -> Evaluator:
        test, yes, no = (self._node(self._tree(child), scope, depth + 1)
                         for child in tree.children)
        return conditional(test, yes, no, self._where(tree))

    def _not(self, tree: Node, scope: Scope, depth: int) -> Evaluator:
        operand = self._node(self._tree(tree.children[-1]), scope, depth + 1)
        return logical_not(operand, len(tree.children) - 1, self._where(tree))

    def _neg(self, tree: Node, scope: Scope, depth: int) -> Evaluator:
        operand_tree = self._tree(tree.children[-1])
        if operand_tree.data == "uint_lit":
            raise self._error("no matching overload for '-_' applied to (uint)", tree)
        value = self._constant(tree)
        if value is not _NO_VALUE:
            return constant(value)
        operand = self._node(operand_tree, scope, depth + 1)
        return negation(operand, len(tree.children) - 1, self._where(tree))

    def _binop(self, tree: Node, scope: Scope, depth: int) -> Evaluator:
        left_tree, token, right_tree = tree.children
        assert isinstance(left_tree, Tree) and isinstance(right_tree, Tree)
        assert isinstance(token, Token)
        symbol = str(token.value)
        where = self._where(token)
        if symbol in ("&&", "||"):
            chain = self._chain(tree, symbol)
            if len(chain) > 2:
                return logical_chain([self._node(t, scope, depth + 1) for t in chain],
                                     symbol == "||", where)
        left = self._node(left_tree, scope, depth + 1)
        right = self._node(right_tree, scope, depth + 1)
        if symbol == "&&":
            return logical_and(left, right, where)
        if symbol == "||":
            return logical_or(left, right, where)
        left_value, right_value = self._constant(left_tree), self._constant(right_tree)
        if symbol in ("==", "!="):
            negated = symbol == "!="
            if right_value is not _NO_VALUE:
                return equality_with(left, right_value, negated)
            if left_value is not _NO_VALUE:
                return equality_with(right, left_value, negated)
            return equality(left, right, negated)
        if symbol in ORDERINGS:
            if type(right_value) in _ORDERABLE_CONSTANTS:
                return ordering_with(symbol, left, right_value, where)
            if type(left_value) in _ORDERABLE_CONSTANTS:
                return ordering_with(symbol, right, left_value, where, literal_first=True)
            return binary(ORDERINGS[symbol][1], left, right, where)
        if symbol == "in":
            members = self._constant_list(right_tree)
            if members is not None:
                return membership_in(left, members, where)
            return binary(contained, left, right, where)
        return binary(_ARITHMETIC[symbol], left, right, where)

    @staticmethod
    def _chain(tree: Node, symbol: str) -> list[Node]:
        """The operands of a left-nested run of one logical operator, in order (walked
        without recursion: a run may be as long as the source allows)."""
        operands: list[Node] = []
        node = tree
        while (node.data == "binop" and isinstance(node.children[1], Token)
               and str(node.children[1].value) == symbol):
            left, _, right = node.children
            assert isinstance(left, Tree) and isinstance(right, Tree)
            operands.append(right)
            node = left
        operands.append(node)
        operands.reverse()
        return operands

    def _constant_list(self, tree: Node) -> list[Any] | None:
        """The values of a list literal made only of literals, else None."""
        if tree.data != "list_lit":
            return None
        values = [self._constant(self._tree(item)) for item in self._items(tree)]
        return None if any(value is _NO_VALUE for value in values) else values

    def _index(self, tree: Node, scope: Scope, depth: int) -> Evaluator:
        container_tree, key_tree = (self._tree(child) for child in tree.children)
        container = self._node(container_tree, scope, depth + 1)
        key = self._node(key_tree, scope, depth + 1)
        return binary(index, container, key, self._where(key_tree))

    def _list(self, tree: Node, scope: Scope, depth: int) -> Evaluator:
        items = [self._node(self._tree(item), scope, depth + 1) for item in self._items(tree)]
        return list_of(items)

    def _map(self, tree: Node, scope: Scope, depth: int) -> Evaluator:
        entries = []
        for entry in self._items(tree):
            key_tree, value_tree = (self._tree(child) for child in self._tree(entry).children)
            entries.append((self._node(key_tree, scope, depth + 1),
                            self._node(value_tree, scope, depth + 1), self._where(key_tree)))
        return map_of(entries)

    # --- calls and macros -------------------------------------------------------------------

    def _call(self, tree: Node, scope: Scope, depth: int) -> Evaluator:
        token, arguments = tree.children
        assert isinstance(token, Token)
        args = self._arguments(arguments)
        name = str(token.value)
        if name == "has" and tree.data == "call":
            return self._has(token, args, scope, depth)
        if name == "matches":
            if len(args) != 2:
                raise self._error(f"'matches' takes 2 arguments, not {len(args)}", token)
            return self._matches(token, args[0], args[1], scope, depth)
        return self._function(token, None, args, scope, depth)

    def _method_call(self, tree: Node, scope: Scope, depth: int) -> Evaluator:
        target, token, arguments = tree.children
        assert isinstance(target, Tree) and isinstance(token, Token)
        args = self._arguments(arguments)
        name = str(token.value)
        if name in COMPREHENSIONS:
            return self._comprehension(token, target, args, scope, depth)
        if name == "matches":
            if len(args) != 1:
                raise self._error(f"'matches' takes 1 argument, not {len(args)}", token)
            return self._matches(token, target, args[0], scope, depth)
        return self._function(token, target, args, scope, depth)

    def _function(self, token: Token, target: Node | None, args: list[Node], scope: Scope,
                  depth: int) -> Evaluator:
        name = str(token.value)
        function = FUNCTIONS.get(name)
        if function is None:
            raise self._error(f"unknown function '{name}'", token)
        arities = function.global_arities if target is None else function.method_arities
        if not arities:
            style = (f"as a method, x.{name}(…)" if target is None
                     else f"as a function, {name}(x)")
            raise self._error(f"'{name}' must be called {style}", token)
        if len(args) not in arities:
            expected = " or ".join(str(n) for n in sorted(arities))
            raise self._error(f"'{name}' takes {expected} argument(s), not {len(args)}", token)
        where = self._where(token)
        if target is None and name in ("timestamp", "duration"):
            folded = self._fold(function.impl, args[0], where)
            if folded is not _NO_VALUE:
                return constant(folded)
        operands = [self._node(arg, scope, depth + 1)
                    for arg in ([target] if target is not None else []) + args]
        return call(function.impl, operands, where)

    def _fold(self, impl: Callable[[Any], Any], arg: Node, where: Location) -> Any:
        """timestamp("…") and duration("…") of a literal: parsed once, here, so that a bad one
        is a compile error rather than a failure of every evaluation."""
        if arg.data != "string_lit":
            return _NO_VALUE
        try:
            return impl(self._literal(arg))
        except CelEvalError as exc:
            raise CelCompileError(f"invalid literal: {exc.reason}", *where) from None

    def _matches(self, token: Token, target: Node, pattern_tree: Node, scope: Scope,
                 depth: int) -> Evaluator:
        if pattern_tree.data != "string_lit":
            raise self._error("the pattern of matches() must be a string literal",
                              pattern_tree)
        pattern = self._literal(pattern_tree)
        if len(pattern) > MAX_PATTERN_LENGTH:
            raise self._error(f"regular expression longer than {MAX_PATTERN_LENGTH} "
                              "characters", pattern_tree)
        try:
            compiled = re.compile(pattern)
        except re.error as exc:
            raise self._error(f"invalid regular expression: {exc}", pattern_tree) from None
        operand = self._node(target, scope, depth + 1)
        return pattern_match(operand, compiled, self._where(token))

    def _has(self, token: Token, args: list[Node], scope: Scope, depth: int) -> Evaluator:
        if len(args) != 1 or args[0].data != "select":
            raise self._error("has() takes one field selection, as in has(a.b)", token)
        base, field = args[0].children
        assert isinstance(base, Tree) and isinstance(field, Token)
        operand = self._node(base, scope, depth + 1)
        return has(operand, self._name(field), self._where(field))

    def _comprehension(self, token: Token, target_tree: Node, args: list[Node], scope: Scope,
                       depth: int) -> Evaluator:
        macro = str(token.value)
        arities = (2, 3) if macro == "map" else (2,)
        if len(args) not in arities:
            expected = " or ".join(str(n) for n in arities)
            raise self._error(f"{macro}() takes {expected} arguments, not {len(args)}", token)
        variable_tree = args[0]
        if variable_tree.data != "ident":
            raise self._error(f"the first argument of {macro}() must be a simple name",
                              variable_tree)
        name_token = variable_tree.children[0]
        assert isinstance(name_token, Token)
        name = self._name(name_token)
        target = self._node(target_tree, scope, depth + 1)
        inner = scope | {name}
        bodies = [self._node(arg, inner, depth + 1) for arg in args[1:]]
        where = self._where(token)
        if macro == "all":
            return all_of(target, name, bodies[0], where)
        if macro == "exists":
            return exists(target, name, bodies[0], where)
        if macro == "exists_one":
            return exists_one(target, name, bodies[0], where)
        if macro == "filter":
            return filter_by(target, name, bodies[0], where)
        predicate = bodies[0] if len(bodies) == 2 else None
        return map_to(target, name, bodies[-1], predicate, where)

    # --- tree plumbing ----------------------------------------------------------------------

    @staticmethod
    def _tree(child: Node | Token | None) -> Node:
        assert isinstance(child, Tree)
        return child

    def _arguments(self, arguments: Node | Token | None) -> list[Node]:
        if arguments is None:
            return []
        return [self._tree(child) for child in self._tree(arguments).children]

    def _items(self, tree: Node) -> list[Node | Token]:
        """The elements of a list literal or the entries of a map literal."""
        if not tree.children:
            return []
        return list(self._tree(tree.children[0]).children)
