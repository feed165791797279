"""The registry of derived state (db/derived.py) is true of the tree and of a migrated database: every test it
names exists, every module it names exists, every cache is built by its module under its name, every trigger it
names exists (SQLite and PostgreSQL) and every trigger that exists is named, and no module but db/kept.py keeps
derived data in a hand-written LRU."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import re
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from meadhall.db import derived
from meadhall.db.kept import VersionedCache

ROOT = Path(__file__).resolve().parents[2]
# What only an LRU needs: a dict in use order (OrderedDict), moving a used key to the end, dropping the oldest.
LRU_MARKS = re.compile(r"\bOrderedDict\b|\.move_to_end\(|\.popitem\(\s*last\s*=\s*False")
THE_CACHE = Path("meadhall/db/kept.py")

ENTRIES = derived.entries()


def _ids(entries: list[Any]) -> list[str]:
    return [e.name for e in entries]


def test_names_are_unique_and_every_cache_is_kept_under_a_listed_column():
    assert len(set(derived.COLUMNS) | set(derived.CACHES)) == len(ENTRIES)
    for cache in derived.CACHES.values():
        assert cache.version in derived.COLUMNS, cache.name
        assert cache.bound > 0 and cache.unit.strip() and cache.holds.strip()


@pytest.mark.parametrize("entry", ENTRIES, ids=_ids(ENTRIES))
def test_the_named_test_exists(entry: Any):
    path, _, name = entry.proof.partition("::")
    source = ROOT / path
    assert source.is_file(), entry.proof
    functions = {node.name for node in ast.walk(ast.parse(source.read_text(encoding="utf-8")))
                 if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}
    assert name.startswith("test_") and name in functions, entry.proof


@pytest.mark.parametrize("entry", ENTRIES, ids=_ids(ENTRIES))
def test_the_named_modules_exist(entry: Any):
    modules = [*entry.relied_on_by, *([entry.module] if isinstance(entry, derived.Cache) else [])]
    for module in modules:
        assert importlib.util.find_spec(module) is not None, module


@pytest.mark.parametrize("cache", list(derived.CACHES.values()), ids=list(derived.CACHES))
def test_each_cache_is_built_by_its_module_under_its_name(cache: derived.Cache):
    module = importlib.import_module(cache.module)
    built = [value for value in vars(module).values() if isinstance(value, VersionedCache)]
    assert [b.name for b in built] == [cache.name]
    assert built[0].max_size == cache.bound


async def _triggers(rt: Any) -> set[str]:
    sql = ("SELECT name FROM sqlite_master WHERE type = 'trigger'" if rt.engine.dialect.name == "sqlite"
           else "SELECT tgname FROM pg_trigger WHERE NOT tgisinternal")
    async with rt.engine.connect() as conn:
        return {row[0] for row in (await conn.execute(text(sql))).all()}


async def test_the_registry_names_exactly_the_triggers_of_a_migrated_database(rt: Any, backend: str):
    named: dict[str, list[str]] = {}
    for column in derived.COLUMNS.values():
        for trigger in getattr(column.triggers, backend):
            named.setdefault(trigger, []).append(column.name)
    assert set(named) == await _triggers(rt)


def test_no_module_but_the_cache_hand_writes_an_lru():
    found = [f"{path.relative_to(ROOT)}:{number}"
             for path in sorted((ROOT / "meadhall").rglob("*.py")) if path.relative_to(ROOT) != THE_CACHE
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if LRU_MARKS.search(line)]
    assert found == []


def test_caches_are_built_only_by_the_modules_the_registry_names():
    building = {".".join(path.relative_to(ROOT).with_suffix("").parts)
                for path in (ROOT / "meadhall").rglob("*.py") if path.relative_to(ROOT) != THE_CACHE
                and "VersionedCache(" in path.read_text(encoding="utf-8")}
    assert building == {cache.module for cache in derived.CACHES.values()}


def test_every_kept_by_trigger_comment_names_a_listed_column():
    marker = re.compile(r"kept by triggers?: see derived registry ((?:\"\w+\"(?:,? (?:and )?)?)+)")
    named = {name for path in (ROOT / "meadhall").rglob("*.py")
             for found in marker.finditer(path.read_text(encoding="utf-8"))
             for name in re.findall(r"\"(\w+)\"", found.group(1))}
    assert named and named <= set(derived.COLUMNS)
