"""The one shape of a hook between layers (meadhall/core/hooks.py; docs/architecture.md, "Hooks between
layers"): callbacks by name, in the order first added, added again without doubling."""

from __future__ import annotations

from collections.abc import Callable

from meadhall.core.hooks import Hook


def announcer(word: str) -> Callable[[list[str]], None]:
    def announce(heard: list[str]) -> None:
        heard.append(word)
    return announce


def test_callbacks_run_in_the_order_they_were_first_added() -> None:
    hook: Hook[Callable[[list[str]], None]] = Hook()
    hook.add("guilds", announcer("member update"))
    hook.add("presence", announcer("presence update"))
    heard: list[str] = []
    for callback in hook:
        callback(heard)
    assert heard == ["member update", "presence update"]


def test_adding_a_name_again_replaces_it_in_place() -> None:
    """A second app built in the same process adds the same names again: each still runs once, in its place."""
    hook: Hook[Callable[[list[str]], None]] = Hook()
    for _app in range(2):
        hook.add("guilds", announcer("member update"))
        hook.add("presence", announcer("presence update"))
    hook.add("guilds", announcer("member update, newer"))
    heard: list[str] = []
    for callback in hook:
        callback(heard)
    assert heard == ["member update, newer", "presence update"]
    assert len(hook) == 2


def test_keyed_and_single_answer_hooks() -> None:
    rules: Hook[Callable[[], str]] = Hook()
    assert not rules and rules.first() is None and rules.get("attachment") is None
    rules.add("attachment", lambda: "messages decide")
    rules.add("dm_icon", lambda: "conversations decide")
    assert rules
    attachment, first = rules.get("attachment"), rules.first()
    assert attachment is not None and attachment() == "messages decide"
    assert first is attachment
    assert [name for name, _rule in rules.items()] == ["attachment", "dm_icon"]


def test_a_callback_that_adds_while_the_hook_runs_waits_for_the_next_walk() -> None:
    hook: Hook[Callable[[], None]] = Hook()
    ran: list[str] = []

    def first() -> None:
        ran.append("first")
        hook.add("late", lambda: ran.append("late"))

    hook.add("first", first)
    for callback in hook:
        callback()
    assert ran == ["first"]
    hook.discard("late")
    hook.discard("never added")
    assert [name for name, _cb in hook.items()] == ["first"]
