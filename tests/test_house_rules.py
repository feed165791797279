"""House rules checked on the source text (docs/architecture.md, "House rules"): pure AST and token walks,
no database, no app. Each test names every offender so one run shows all that is left to fix."""

from __future__ import annotations

import ast
import io
import tokenize
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "meadhall"
TESTS = ROOT / "tests"
SUPPORT = TESTS / "support"
BENCH = ROOT / "bench"

# The contract file outside the repository that comments must no longer cite (house rule 15).
OUTSIDE_CONTRACT = "API" + ".md"

# Where a Starlette/FastAPI `Request` may appear: the HTTP edge (house rule 1 and "services take values"):
# routes modules, `deps.py` modules (the typed FastAPI dependencies that turn a request into values,
# house rule 13), meadhall/api/, the pages of meadhall/web/ and the gateway endpoint.
REQUEST_ALLOWED_DIRS = ("api", "web")
REQUEST_ALLOWED_FILES = ("gateway/endpoint.py",)
REQUEST_MODULES = {"fastapi", "fastapi.requests", "starlette", "starlette.requests"}


def python_files(*roots: Path) -> Iterator[Path]:
    for root in roots:
        yield from sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(path: Path, node: ast.Import | ast.ImportFrom) -> list[str]:
    """Absolute names of what an import statement brings in (`from a import b` counts as `a.b`, which
    is the submodule when b is one and harmlessly names an attribute of `a` otherwise)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        package = module_name(path).split(".")
        if path.name != "__init__.py":
            package = package[:-1]
        package = package[: len(package) - (node.level - 1)]
        base = ".".join(package + ([base] if base else []))
    return [f"{base}.{alias.name}" if base else alias.name for alias in node.names] + [base]


def is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def runtime_imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement, at any depth (lazy imports inside functions included), except those under
    `if TYPE_CHECKING:` (their `else:` branch does run and is kept)."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        stack.extend(ast.iter_child_nodes(node))


# --- tests import helpers, never one another (house rule 14) ------------------------------------------------

def test_no_test_module_imports_another() -> None:
    """Outside tests/support, a module of tests/ may import from `tests` only `tests.support` (fixtures
    come from conftest.py through pytest, never by import); tests/support imports no test module."""
    offenders = []
    for path in python_files(TESTS):
        for node in runtime_imports(parse(path)):
            if isinstance(node, ast.ImportFrom) and node.level:
                offenders.append(f"{rel(path)}:{node.lineno} relative import")
                continue
            names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for name in names:
                if name == "tests" and isinstance(node, ast.ImportFrom):
                    wrong = [a.name for a in node.names if a.name != "support"]
                    if wrong:
                        offenders.append(f"{rel(path)}:{node.lineno} from tests import {', '.join(wrong)}")
                elif name.startswith("tests.") and not (name == "tests.support" or name.startswith("tests.support.")):
                    offenders.append(f"{rel(path)}:{node.lineno} {name}")
    assert not offenders, "test modules importing other test modules:\n" + "\n".join(offenders)


# --- services take values, not HTTP ------------------------------------------------------------------------

def request_allowed(path: Path) -> bool:
    inside = path.relative_to(PACKAGE).as_posix()
    return (path.name in ("routes.py", "deps.py") or path.name.startswith("routes_")
            or inside.split("/")[0] in REQUEST_ALLOWED_DIRS or inside in REQUEST_ALLOWED_FILES)


def request_uses(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """Imports of a Starlette/FastAPI `Request` and annotations naming one."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in REQUEST_MODULES:
            if any(alias.name == "Request" for alias in node.names):
                yield node.lineno, f"imports Request from {node.module}"
        annotations: list[ast.expr | None] = []
        if isinstance(node, ast.arg):
            annotations.append(node.annotation)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            annotations.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            annotations.append(node.annotation)
        for annotation in annotations:
            if annotation is not None and names_request(annotation):
                yield annotation.lineno, f"annotation {ast.unparse(annotation)}"


def names_request(annotation: ast.expr) -> bool:
    for node in ast.walk(annotation):
        if isinstance(node, ast.Name) and node.id == "Request":
            return True
        if isinstance(node, ast.Attribute) and node.attr == "Request":
            return True
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                if names_request(ast.parse(node.value, mode="eval").body):
                    return True
            except SyntaxError:
                continue
    return False


def test_only_the_http_edge_takes_a_request() -> None:
    """Services take ids, bytes, streams, a content type, a file name; only the HTTP edge (see
    REQUEST_ALLOWED_DIRS) touches a `Request`."""
    offenders = [f"{rel(path)}:{line} {what}"
                 for path in python_files(PACKAGE) if not request_allowed(path)
                 for line, what in request_uses(parse(path))]
    assert not offenders, "Request outside the HTTP edge:\n" + "\n".join(offenders)


# --- comments cite the project's own documents (house rule 15) --------------------------------------------

def comments_and_docstrings(path: Path) -> Iterator[tuple[int, str]]:
    source = path.read_text(encoding="utf-8")
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)):
                yield first.lineno, first.value.value


def test_no_comment_cites_the_outside_contract() -> None:
    """Comments and docstrings cite docs/ or the OpenAPI operation (`(OpenAPI: sendMessage)`), never the
    contract file that lives outside the repository."""
    offenders = [f"{rel(path)}:{line}"
                 for path in python_files(PACKAGE, TESTS, BENCH)
                 for line, text in sorted(comments_and_docstrings(path)) if OUTSIDE_CONTRACT in text]
    assert not offenders, f"{len(offenders)} comments or docstrings cite {OUTSIDE_CONTRACT}:\n" + "\n".join(offenders)


# --- no two folders of meadhall/ import each other (house rule 9) -----------------------------------------

def top_level(module: str) -> str | None:
    """`meadhall.guilds.roles.service` -> `guilds`; None outside the package."""
    parts = module.split(".")
    if parts[0] != "meadhall" or len(parts) < 2:
        return None
    return parts[1]


def package_units() -> set[str]:
    """The top-level folders and modules of meadhall/ (app, config, runtime... count as units too)."""
    return {p.stem if p.is_file() else p.name for p in PACKAGE.iterdir()
            if (p.is_dir() and (p / "__init__.py").exists()) or (p.suffix == ".py" and p.stem != "__init__")}


def import_graph() -> dict[str, dict[str, str]]:
    """unit -> {imported unit: one place that imports it}, lazy imports included, TYPE_CHECKING ones not."""
    units = package_units()
    graph: dict[str, dict[str, str]] = {}
    for path in python_files(PACKAGE):
        source = top_level(module_name(path))
        if source is None:
            continue
        for node in runtime_imports(parse(path)):
            for name in imported_modules(path, node):
                target = top_level(name)
                if target in units and target != source:
                    graph.setdefault(source, {}).setdefault(target, f"{rel(path)}:{node.lineno}")
    return graph


def test_no_two_folders_import_each_other() -> None:
    graph = import_graph()
    pairs = sorted({tuple(sorted((a, b))) for a, targets in graph.items() for b in targets
                    if a in graph.get(b, {})})
    described = [f"{a} <-> {b}  ({graph[a][b]}; {graph[b][a]})" for a, b in pairs]
    assert not pairs, "folders of meadhall/ importing each other:\n" + "\n".join(described)
