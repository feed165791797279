"""docs/reference/ is what the code's registries say today, and the docs cite the project's own documents."""

from __future__ import annotations

import re
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

import pytest

from meadhall import reference
from meadhall.core import errors, limits, permissions, ratelimit
from meadhall.realtime import events
from meadhall.realtime.events import EventType

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "docs" / "reference"


def test_committed_reference_matches_the_registries() -> None:
    stale = reference.stale(REFERENCE)
    assert not stale, (
        f"docs/reference is stale ({', '.join(stale)}): the registries changed; run `make docs` and commit "
        "the result"
    )


def test_generation_is_deterministic() -> None:
    assert reference.render() == reference.render()
    assert not any(re.search(r"\d{4}-\d{2}-\d{2}", text) for text in reference.render().values())


def test_write_then_check_finds_nothing_stale_and_removes_leftovers(tmp_path: Path) -> None:
    (tmp_path / "retired.md").write_text("a page no registry produces any more\n")
    written = reference.write(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(written)
    assert reference.stale(tmp_path) == []
    (tmp_path / "errors.md").write_text("edited by hand\n")
    assert reference.stale(tmp_path) == ["errors.md"]
    assert reference.main([str(tmp_path), "--check"]) == 1


def test_every_registry_entry_has_a_row() -> None:
    pages = reference.render()
    assert all(f"| `{code}` | {status} |" in pages["errors.md"] for code, (status, _) in errors.REGISTRY.items())
    assert all(f"| `{t.value}` |" in pages["events.md"] for t in EventType)
    assert all(f"| `{flag.name}` |" in pages["permissions.md"] for flag in permissions.FLAGS)
    assert all(f"| `{name}` |" in pages["limits.md"] for name in ratelimit.BUCKETS)
    assert all(f"| `{name}` | {value} |" in pages["limits.md"] for name, value in reference._content_limits().items())
    assert "| 3 | 8 | `ADMINISTRATOR` |  |" in pages["permissions.md"]
    assert "| 11 | 2048 | `SEND_MESSAGES` | yes |" in pages["permissions.md"]
    assert "| `PORT` | `8000` | listen port of `meadhall serve` (1 to 65535) |" in pages["configuration.md"]


@pytest.mark.parametrize(
    ("registry", "key"),
    [
        (limits.MEANINGS, "MESSAGE_LENGTH"),
        (limits.MEDIA_LIMIT_MEANINGS, "avatar_max_bytes"),
        (ratelimit.APPLIES_TO, "messages.send"),
        (permissions.MEANINGS, permissions.Permission.VIEW_CHANNEL),
        (events.DESCRIPTIONS, EventType.MESSAGE_CREATE),
    ],
)
def test_an_entry_without_its_meaning_stops_the_generator(
    monkeypatch: pytest.MonkeyPatch, registry: MutableMapping[Any, Any], key: object
) -> None:
    monkeypatch.delitem(registry, key)
    with pytest.raises(ValueError, match="no meaning for"):
        reference.render()


def test_a_setting_without_a_description_stops_the_generator(monkeypatch: pytest.MonkeyPatch) -> None:
    field = reference.Settings.model_fields["PORT"]
    monkeypatch.setattr(field, "description", None)
    with pytest.raises(ValueError, match="PORT"):
        reference.render()


def test_a_bar_in_a_meaning_does_not_split_the_table_cell(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(limits.MEANINGS, "PAGE_MAX", "largest `limit` | of a page")
    assert "| `PAGE_MAX` | 100 | largest `limit` \\| of a page |" in reference.render()["limits.md"]


def test_readme_docs_and_benchmarks_cite_the_project_documents_not_the_outside_contract() -> None:
    sources = [ROOT / "README.md", *(ROOT / "docs").rglob("*.md"), *(ROOT / "bench").rglob("*.py")]
    citing = sorted(str(p.relative_to(ROOT)) for p in sources if "API.md" in p.read_text(encoding="utf-8"))
    assert not citing, f"these cite API.md, a file outside the repository: {citing}"


def test_relative_links_of_the_readme_and_docs_lead_to_files() -> None:
    broken = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text(encoding="utf-8")):
            if target.startswith(("http://", "https://", "#", "mailto:")):
                continue
            if not (page.parent / target.split("#")[0]).exists():
                broken.append(f"{page.relative_to(ROOT)} -> {target}")
    assert not broken, f"links to nothing: {broken}"


def test_modules_named_by_the_readme_and_docs_exist() -> None:
    """A module that moves takes its mentions along (paths are relative to the root or to meadhall/)."""
    missing = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        for path in sorted(set(re.findall(r"`([\w./-]+/[\w.-]+\.py)`", page.read_text(encoding="utf-8")))):
            if not ((ROOT / path).exists() or (ROOT / "meadhall" / path).exists()):
                missing.append(f"{page.relative_to(ROOT)}: {path}")
    assert not missing, f"modules named but not found: {missing}"
