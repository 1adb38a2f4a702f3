"""The mutants of the project's checks: small AST edits that a conformance check must notice.

Each operator is one way a check can be weakened or broken without anyone seeing it in a
review: a comparison relaxed or flipped, a tolerance or limit nudged, a condition negated,
``and``/``or`` swapped, a call statement (``judge.require``, ``walk.problem``, a helper
that checks a stream) deleted, a ``require`` condition replaced by ``True``, a verdict's
outcome swapped (a fail recorded as ``unsupported``), a check's boolean result forced, a
requirement ID changed to another, a ``raise`` removed.

A mutant is an edit of the source text at one node's span, so everything else keeps its
lines and formatting. Its :attr:`Mutant.key` names the file, the enclosing function's
qualified name, the operator and the text before and after: it survives unrelated edits
(line numbers are shown, never part of the key).
"""

from __future__ import annotations

import ast
import functools
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

#: The packages whose code is mutated: the spec's logic, the judging code, the suites, the report,
#: the store checker, the adapters (the ``exec:`` client among them), the harness protocol, the zarr codec.
TARGETS = ("core", "judging", "suites", "report", "check_store", "adapters", "protocol", "zarrcodecs")

OPERATORS = {
    "compare": "comparison relaxed at its boundary (< and <=, > and >=) or flipped (== and !=, in and not in, is and is not)",
    "number": "numeric constant nudged: an int by +1 and -1, a float times 2 and divided by 2",
    "negate": "condition of an if, while, assert, conditional expression or comprehension negated",
    "and-or": "and swapped for or, and the reverse",
    "deleted": "call statement deleted (judge.require, judge.finish, walk.problem, a checking helper ...)",
    "true-condition": "condition of a require(...) call replaced by True",
    "outcome": "verdict outcome swapped (FAIL and UNSUPPORTED, WARN and PASS, ERROR to FAIL ...)",
    "forced-return": "boolean result of a check forced to True or to False",
    "requirement": "requirement ID replaced by the next one of the registry",
    "raise": "raise statement removed",
}

_COMPARE: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In,
    ast.Is: ast.IsNot, ast.IsNot: ast.Is,
}
_FLIPPED = (ast.Eq, ast.NotEq, ast.In, ast.NotIn, ast.Is, ast.IsNot)
_OUTCOMES = {"FAIL": "UNSUPPORTED", "UNSUPPORTED": "FAIL", "WARN": "PASS", "PASS": "WARN",
             "ERROR": "FAIL", "CRASH": "ERROR", "TIMEOUT": "ERROR"}
_REQUIREMENT = re.compile(r"JPEG-[A-Z0-9]+-\d+")
#: Calls whose first argument is the condition a check holds to.
_REQUIRE_CALLS = {"require"}
_KEY_TEXT = 120
#: A literal list, tuple or set holding this many numbers or more is a data table (test sizes,
#: the standard Huffman tables, zigzag order), not a check: its numbers are not mutated.
TABLE_SIZE = 8


@dataclass(frozen=True)
class Mutant:
    path: str  # relative to the package root, with forward slashes
    qualname: str  # the enclosing function or class, "<module>" at module level
    operator: str
    before: str
    after: str
    line: int
    #: Byte span of the replaced text in the UTF-8 source, and the text put there.
    start: int
    end: int
    replacement: str
    occurrence: int = 1

    @property
    def key(self) -> str:
        """Stable across unrelated edits: file, qualname, operator, the text before and after."""
        key = f"{self.path}::{self.qualname}::{self.operator}::{_short(self.before)} => {_short(self.after)}"
        return key if self.occurrence == 1 else f"{key} #{self.occurrence}"

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"

    def describe(self) -> str:
        return f"{self.where} [{self.qualname}] {self.operator}: {_short(self.before)} => {_short(self.after)}"

    def apply(self, source: bytes) -> bytes:
        return source[: self.start] + self.replacement.encode() + source[self.end :]


@functools.lru_cache(maxsize=64)
def _tree(source: bytes) -> ast.Module:
    """Parsed once per source text (read-only use)."""
    return ast.parse(source)


def _short(text: str) -> str:
    flat = " ".join(text.split())
    if len(flat) <= _KEY_TEXT:
        return flat
    return f"{flat[:_KEY_TEXT]}…{hashlib.sha1(flat.encode()).hexdigest()[:8]}"


def target_files(root: Path) -> list[Path]:
    """Every Python module of the target packages and of their subpackages (``judging/t81/``), in a fixed order.

    A subpackage is a folder with an ``__init__.py`` inside a target package: a folder of another kind there (a
    harness's ``node_modules``, a kit's sources) holds no module of the package."""
    return sorted(p for pkg in TARGETS for p in (root / pkg).rglob("*.py")
                  if p.stat().st_size and _in_package(p.parent, root / pkg))


def _in_package(folder: Path, top: Path) -> bool:
    """Whether every folder from ``top`` down to ``folder`` is a package of its own (has an ``__init__.py``)."""
    while folder != top:
        if not (folder / "__init__.py").is_file():
            return False
        folder = folder.parent
    return True


class _Offsets:
    """AST positions (line, UTF-8 byte column) to byte offsets in the source."""

    def __init__(self, source: bytes) -> None:
        self.starts = [0]
        for line in source.splitlines(keepends=True):
            self.starts.append(self.starts[-1] + len(line))

    def span(self, node: ast.AST) -> tuple[int, int]:
        start = self.starts[node.lineno - 1] + node.col_offset  # type: ignore[attr-defined]
        end = self.starts[node.end_lineno - 1] + node.end_col_offset  # type: ignore[attr-defined]
        return start, end

    def line_start(self, node: ast.stmt) -> int:
        """Where the line of a statement's first decorator, or else of the statement itself, starts."""
        return self.starts[min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))]) - 1]


class _Collector(ast.NodeVisitor):
    def __init__(self, path: str, source: bytes, requirement_ids: list[str]) -> None:
        self.path = path
        self.source = source
        self.offsets = _Offsets(source)
        self.ids = requirement_ids
        self.scope: list[str] = []
        self.returns_bool: list[bool] = []
        self.found: list[Mutant] = []

    # -- helpers ------------------------------------------------------------------
    def text(self, node: ast.AST) -> str:
        start, end = self.offsets.span(node)
        return self.source[start:end].decode()

    def add(self, operator: str, node: ast.AST, replacement: str, after: str | None = None) -> None:
        start, end = self.offsets.span(node)
        before = self.source[start:end].decode()
        self.found.append(Mutant(
            self.path, ".".join(self.scope) or "<module>", operator, before, after if after is not None else replacement,
            node.lineno, start, end, replacement,  # type: ignore[attr-defined]
        ))

    def replace_node(self, operator: str, node: ast.expr, new: ast.expr) -> None:
        text = ast.unparse(new)
        self.add(operator, node, f"({text})", text)

    # -- what is never mutated ----------------------------------------------------
    def _collection(self, node: ast.List | ast.Tuple | ast.Set) -> None:
        numbers = sum(isinstance(n, ast.Constant) and type(n.value) in (int, float) for n in ast.walk(node))
        if numbers < TABLE_SIZE:
            self.generic_visit(node)

    visit_List = _collection
    visit_Tuple = _collection
    visit_Set = _collection

    def visit_Dict(self, node: ast.Dict) -> None:
        # Keys are lookups (a nudged key only raises KeyError); the values are the limits.
        for value in node.values:
            self.visit(value)

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        return  # message text, not judgement

    def visit_Import(self, node: ast.Import) -> None:
        return

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        return

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)

    def visit_Assign(self, node: ast.Assign) -> None:
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return
        self.generic_visit(node)

    def _body(self, body: list[ast.stmt]) -> None:
        start = 1 if body and _is_docstring(body[0]) else 0
        for stmt in body[start:]:
            self.visit(stmt)

    def visit_Module(self, node: ast.Module) -> None:
        self._body(node.body)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for d in node.decorator_list:
            self.visit(d)
        self.scope.append(node.name)
        self._body(node.body)
        self.scope.pop()

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for d in node.decorator_list:
            self.visit(d)
        for default in [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]:
            self.visit(default)
        self.scope.append(node.name)
        self.returns_bool.append((isinstance(node.returns, ast.Name) and node.returns.id == "bool")
                                 or (isinstance(node.returns, ast.Constant) and node.returns.value == "bool"))
        self._body(node.body)
        self.returns_bool.pop()
        self.scope.pop()

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function

    def visit_If(self, node: ast.If) -> None:
        if _is_type_checking(node.test) or _is_main_guard(node.test):
            return
        self.negate(node.test)
        self.generic_visit(node)

    # -- operators ------------------------------------------------------------------
    def negate(self, test: ast.expr) -> None:
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in _FLIPPED:
            return  # not (a == b) is a != b, which the compare operator makes already
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            self.add("negate", test, f"({self.text(test.operand)})", self.text(test.operand))
        else:
            self.add("negate", test, f"(not ({self.text(test)}))", f"not ({self.text(test)})")

    def visit_While(self, node: ast.While) -> None:
        self.negate(node.test)
        self.generic_visit(node)

    def visit_IfExp(self, node: ast.IfExp) -> None:
        self.negate(node.test)
        self.generic_visit(node)

    def visit_Assert(self, node: ast.Assert) -> None:
        self.negate(node.test)
        self.visit(node.test)  # not the message

    def visit_comprehension(self, node: ast.comprehension) -> None:
        for cond in node.ifs:
            self.negate(cond)
        self.generic_visit(node)

    def visit_Compare(self, node: ast.Compare) -> None:
        for i, op in enumerate(node.ops):
            swapped = _COMPARE.get(type(op))
            if swapped is None:
                continue
            ops = list(node.ops)
            ops[i] = swapped()
            self.replace_node("compare", node, ast.Compare(left=node.left, ops=ops, comparators=node.comparators))
        self.generic_visit(node)

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        other = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        self.replace_node("and-or", node, ast.BoolOp(op=other, values=node.values))
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        value = node.value
        if isinstance(value, bool):
            return
        if isinstance(value, int):
            hexadecimal = self.text(node).lower().startswith("0x")
            for n in [value + 1, value - 1] if value else [1]:
                self.add("number", node, f"0x{n:02X}" if hexadecimal and n >= 0 else repr(n))
        elif isinstance(value, float):
            for x in [value * 2, value / 2] if value else [1.0]:
                self.add("number", node, repr(x))
        elif isinstance(value, str) and _REQUIREMENT.fullmatch(value) and self.ids:
            self.add("requirement", node, repr(_next_id(value, self.ids)))

    def visit_Attribute(self, node: ast.Attribute) -> None:
        base = node.value
        if ((isinstance(base, ast.Name) and base.id == "Outcome") or (isinstance(base, ast.Attribute) and base.attr == "Outcome")) \
                and node.attr in _OUTCOMES:
            self.add("outcome", node, f"{self.text(base)}.{_OUTCOMES[node.attr]}")
        self.generic_visit(node)

    def visit_Expr(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Call):
            self.add("deleted", node, "pass")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        if name in _REQUIRE_CALLS and node.args and not (isinstance(node.args[0], ast.Constant) and node.args[0].value is True):
            self.add("true-condition", node.args[0], "True")
        self.generic_visit(node)

    def visit_Raise(self, node: ast.Raise) -> None:
        self.add("raise", node, "pass")
        self.generic_visit(node)

    def visit_Return(self, node: ast.Return) -> None:
        value = node.value
        if value is not None and ((self.returns_bool and self.returns_bool[-1]) or _is_boolish(value)):
            for forced in ("True", "False"):
                if not (isinstance(value, ast.Constant) and repr(value.value) == forced):
                    self.add("forced-return", value, forced)
        self.generic_visit(node)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self.visit(node.body)


def _is_docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


def _is_boolish(node: ast.expr) -> bool:
    if isinstance(node, ast.Compare | ast.BoolOp):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return True
    return isinstance(node, ast.Constant) and isinstance(node.value, bool)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _is_main_guard(test: ast.expr) -> bool:
    return isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__"


def _next_id(value: str, ids: list[str]) -> str:
    """The registry's next ID after ``value`` (wrapping), so a check cites a real but wrong requirement."""
    if value in ids:
        return ids[(ids.index(value) + 1) % len(ids)]
    return next((i for i in ids if i > value), ids[0])


def _statements(tree: ast.Module, offsets: _Offsets) -> list[tuple[int, int]]:
    """Byte spans of the module's top-level statements, decorators included."""
    spans = []
    for node in tree.body:
        spans.append((offsets.line_start(node), offsets.span(node)[1]))
    return spans


def _units(tree: ast.Module, offsets: _Offsets, source: bytes) -> list[tuple[int, int]]:
    """Byte spans of every statement that begins its line, at any depth, from its line's start (decorators included)."""
    units = []
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt):
            (node_start, end), start = offsets.span(node), offsets.line_start(node)
            # Decorators, or nothing but indentation, before the statement on its first line.
            if getattr(node, "decorator_list", None) or not source[start:node_start].strip():
                units.append((start, end))
    return units


def _dump(text: bytes) -> str | None:
    """The AST of a statement's source, indented or not, as text (positions left out); None where it does not parse."""
    try:
        # An indented statement parses as the body of an "if" (a block may be indented by any amount); positions
        # are not dumped, so the wrapper shifts nothing that is compared.
        return ast.dump(ast.parse(b"if 1:\n" + text if text[:1] in b" \t" else text))
    except SyntaxError:
        return None


def mutants_of(source: bytes, path: str, requirement_ids: list[str]) -> list[Mutant]:
    """Every mutant of one module that parses and changes its AST, with stable keys.

    Each is parsed within the innermost statement that holds it and parses alone (an edit inside one statement
    changes no other's AST): parsing the whole module again per mutant cost minutes, dumping the whole top-level
    statement (a class) 25 of the 35 s all mutants of the package took.
    """
    tree = ast.parse(source)
    collector = _Collector(path, source, requirement_ids)
    collector.visit(tree)
    spans = _statements(tree, collector.offsets)
    # Innermost first: the smallest span that holds a mutant is tried first.
    units = sorted(_units(tree, collector.offsets, source), key=lambda u: u[1] - u[0])
    originals: dict[tuple[int, int], str | None] = {}
    seen: dict[str, int] = {}
    out: list[Mutant] = []
    for m in collector.found:
        holders = [u for u in units if u[0] <= m.start and m.end <= u[1]]
        holders.append(next(span for span in spans if span[0] <= m.start and m.end <= span[1]))
        for a, b in holders:
            if (a, b) not in originals:
                originals[(a, b)] = _dump(source[a:b])
            if originals[(a, b)] is not None:
                break
        changed = _dump(source[a : m.start] + m.replacement.encode() + source[m.end : b])
        if changed is None or changed == originals[(a, b)]:
            continue
        base = Mutant(**{**m.__dict__, "occurrence": 1}).key
        seen[base] = seen.get(base, 0) + 1
        out.append(Mutant(**{**m.__dict__, "occurrence": seen[base]}))
    return out


def all_mutants(root: Path, requirement_ids: list[str]) -> list[Mutant]:
    out: list[Mutant] = []
    for path in target_files(root):
        out.extend(mutants_of(path.read_bytes(), path.relative_to(root).as_posix(), requirement_ids))
    return out


def functions(source: bytes) -> list[tuple[int, int, str]]:
    """(first line, last line, qualname) of every function and class, outermost first."""
    out: list[tuple[int, int, str]] = []

    def walk(body: list[ast.stmt], scope: list[str]) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = [*scope, node.name]
                out.append((node.lineno, node.end_lineno or node.lineno, ".".join(name)))
                walk(node.body, name)
            else:
                for child in ast.iter_child_nodes(node):
                    if isinstance(child, ast.stmt):
                        walk([child], scope)

    walk(_tree(source).body, [])
    return out


def function_names(source: bytes) -> list[str]:
    """Qualnames of the functions (not the classes) of a module, methods and nested functions included."""
    out: list[str] = []

    def walk(body: list[ast.stmt], scope: list[str]) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                walk(node.body, [*scope, node.name])
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                out.append(".".join([*scope, node.name]))
                walk(node.body, [*scope, node.name])

    walk(_tree(source).body, [])
    return out


def names_bound(source: bytes, mutant: Mutant) -> set[str]:
    """Names bound by the statement that holds a module- or class-level mutant.

    A class attribute (``LIMIT = 3`` in a class body) binds its own name as well as the class's:
    the functions that read ``self.LIMIT`` are the ones that can notice it, not only those that
    construct the class.
    """
    offsets = _Offsets(source)

    def holding(body: list[ast.stmt]) -> set[str]:
        for node in body:
            start, end = offsets.span(node)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                start = offsets.line_start(node)
            if not (start <= mutant.start and mutant.end <= end):
                continue
            if isinstance(node, ast.Assign):
                return {n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                return {node.target.id}
            if isinstance(node, ast.ClassDef):
                return {node.name} | holding(node.body)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                return {node.name}
            return set()
        return set()

    return holding(_tree(source).body)


def names_used(source: bytes) -> dict[str, frozenset[str]]:
    """Qualname of each function of a module -> the names (and attribute names) its body uses."""
    found: dict[str, frozenset[str]] = {}

    def walk(body: list[ast.stmt], scope: list[str]) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                walk(node.body, [*scope, node.name])
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
                used |= {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}
                found[".".join([*scope, node.name])] = frozenset(used)
                walk(node.body, [*scope, node.name])

    walk(_tree(source).body, [])
    return found


def module_closure(source: bytes, names: set[str]) -> set[str]:
    """``names`` and the module-level names bound from them (``ARRAYS = {"x": spec(_420)}`` for ``_420``): a test
    that reads the table reads the mutated constant, though no function of the module runs."""
    bindings: list[tuple[set[str], set[str]]] = []  # (names bound, names read) of each module-level assignment
    for node in _tree(source).body:
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            bindings.append(({n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)},
                             {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)}))
    found = set(names)
    grew = True
    while grew:
        grew = False
        for bound, read in bindings:
            if bound - found and read & found:
                found |= bound
                grew = True
    return found
