"""Hooks between layers have one shape (docs/architecture.md, "Hooks between layers"): a module-level
`Hook` of meadhall/core/hooks.py, filled with `.add(name, fn)` from a package's `setup.py`, whose one verb
is `setup`. Pure AST walks and a read of the document: no database, no app. Each test names every
offender so one run shows all that is left to fix."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "meadhall"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
HOOK_MODULE = PACKAGE / "core" / "hooks.py"

# Ways of putting a value into a container: `box.append(fn)`, `box.setdefault(key, fn)` ...
FILLING_METHODS = {"append", "add", "insert", "extend", "setdefault", "update", "__setitem__"}
CONTAINERS = {"dict", "list", "set", "defaultdict", "OrderedDict", "WeakValueDictionary"}


def python_files() -> Iterator[Path]:
    yield from sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def module_targets(node: ast.stmt) -> list[tuple[str, ast.expr | None]]:
    """The plain names a module-level statement assigns, with the value assigned."""
    if isinstance(node, ast.Assign):
        return [(t.id, node.value) for t in node.targets if isinstance(t, ast.Name)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [(node.target.id, node.value)]
    return []


def is_container(value: ast.expr | None) -> bool:
    if isinstance(value, ast.Dict | ast.List | ast.Set):
        return True
    if isinstance(value, ast.Call) and not value.args:
        func = value.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        return name in CONTAINERS
    return False


def is_hook(value: ast.expr | None) -> bool:
    """`Hook()` or `Hook[...]()`."""
    if not isinstance(value, ast.Call):
        return False
    func = value.func.value if isinstance(value.func, ast.Subscript) else value.func
    return isinstance(func, ast.Name) and func.id == "Hook"


# An imported alias whose name says it is a callback type (`FetchRule`, `NoticeHook`, `JobFn` ...).
CALLBACK_ALIAS = re.compile(r"(Hook|Fn|Callback|Rule|Check|Lookup|Resolver|Handler|Listener)$")


def callable_aliases(tree: ast.Module) -> set[str]:
    """Module-level names bound to a `Callable[...]` type."""
    return {name for node in tree.body for name, value in module_targets(node)
            if value is not None and "Callable" in {n.id for n in ast.walk(value) if isinstance(n, ast.Name)}}


def takes_a_callback(arg: ast.arg, aliases: set[str]) -> bool:
    if arg.annotation is None:
        return False
    for node in ast.walk(arg.annotation):
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
        if name is not None and (name == "Callable" or name in aliases or CALLBACK_ALIAS.search(name)):
            return True
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and (
                "Callable" in node.value or CALLBACK_ALIAS.search(node.value)):
            return True
    return False


def bare_params(value: ast.expr | None, params: set[str]) -> bool:
    """The value is one of the parameters itself, or a list/tuple/set of them: a callback kept as given."""
    if isinstance(value, ast.Name):
        return value.id in params
    if isinstance(value, ast.List | ast.Tuple | ast.Set):
        return any(bare_params(v, params) for v in value.elts)
    return False


def filled_containers(fn: ast.FunctionDef | ast.AsyncFunctionDef, containers: set[str], aliases: set[str]
                      ) -> set[str]:
    """Module-level containers into which the function puts one of its callback parameters."""
    params = {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)
              if takes_a_callback(a, aliases)}
    filled: set[str] = set()
    if not params:
        return filled
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                box = target.value if isinstance(target, ast.Subscript) else target
                if (isinstance(box, ast.Name) and box.id in containers and box is not target
                        and bare_params(node.value, params)):
                    filled.add(box.id)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr in FILLING_METHODS and isinstance(node.func.value, ast.Name)
              and node.func.value.id in containers
              and any(bare_params(arg, params) for arg in (*node.args, *(k.value for k in node.keywords)))):
            filled.add(node.func.value.id)
    return filled


def registries_outside_the_shape(path: Path) -> Iterator[str]:
    """A module-level list, dict or set filled with a callback by a module-level function: a hook registry
    of its own making (an `on_*` / `register_*` function over a private dict), not a `Hook`."""
    tree = parse(path)
    containers = {name for node in tree.body for name, value in module_targets(node) if is_container(value)}
    aliases = callable_aliases(tree)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for box in sorted(filled_containers(node, containers, aliases)):
                yield f"{rel(path)}:{node.lineno} {node.name}() fills the module-level {box}"


def hook_instances() -> Iterator[tuple[str, str, int]]:
    """(module path under meadhall/, hook name, line) of every module-level `Hook`."""
    for path in python_files():
        for node in parse(path).body:
            for name, value in module_targets(node):
                if is_hook(value):
                    yield path.relative_to(PACKAGE).as_posix(), name, node.lineno


def hook_table() -> list[tuple[str, str]]:
    """(Offered by, Hook) cells of the table of docs/architecture.md, "Hooks between layers"."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    section = text.split("## Hooks between layers", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) >= 3 and not set(cells[0]) <= {"-", " "}:
            rows.append((cells[0], cells[1]))
    return rows


def test_no_hook_registry_outside_the_one_shape() -> None:
    offenders = [o for path in python_files() if path != HOOK_MODULE for o in registries_outside_the_shape(path)]
    assert not offenders, ("hook registries that are not a `Hook` (meadhall/core/hooks.py):\n"
                           + "\n".join(offenders))


def test_hooks_are_module_level_instances() -> None:
    """A `Hook` made inside a function or a class would be a registry nobody can find from the table."""
    offenders = []
    for path in python_files():
        tree = parse(path)
        top = {id(node) for node in tree.body}
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign | ast.AnnAssign) and id(node) not in top and is_hook(node.value):
                offenders.append(f"{rel(path)}:{node.lineno}")
    assert not offenders, "a Hook not at module level:\n" + "\n".join(offenders)


def test_every_hook_is_in_the_architecture_table() -> None:
    rows = hook_table()
    missing = [f"meadhall/{module}:{line} {name}" for module, name, line in hook_instances()
               if not any(f"`{module}`" in offered and re.search(rf"`{name}\b", hook) for offered, hook in rows)]
    assert list(hook_instances()), "no Hook found: the walk is broken"
    assert not missing, ("hooks missing from docs/architecture.md, \"Hooks between layers\" (a row with the "
                         "module in `Offered by` and the name in `Hook`):\n" + "\n".join(missing))


def test_every_setup_module_has_the_one_verb() -> None:
    """A package's `setup.py` is what `create_app` calls when the app is built: its verb is `setup`, and no
    other public function installs or registers."""
    offenders = []
    for path in python_files():
        if path.name != "setup.py":
            continue
        functions = [n.name for n in parse(path).body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
        if "setup" not in functions:
            offenders.append(f"{rel(path)}: no setup()")
        offenders += [f"{rel(path)}: {name}()" for name in functions
                      if name.startswith(("install", "register", "wire"))]
    assert not offenders, "setup modules outside the one verb:\n" + "\n".join(offenders)
