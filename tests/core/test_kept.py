"""meadhall.core.kept: values under a version, the least recently used dropped once the sizes pass the bound."""

from meadhall.core.kept import Kept


def test_an_entry_is_its_version_and_value_and_a_put_replaces_it():
    kept: Kept[str, int, tuple[int, ...]] = Kept(10, len)
    assert kept.entry("a") is None
    kept.put("a", 1, (1, 2))
    assert kept.entry("a") == (1, (1, 2))
    kept.put("a", 2, (3,))
    assert kept.entry("a") == (2, (3,))


def test_the_least_recently_used_go_first_once_the_sizes_pass_the_bound():
    kept: Kept[str, int, tuple[int, ...]] = Kept(6, len)
    kept.put("a", 1, (1, 2, 3))
    kept.put("b", 1, (1, 2))
    assert kept.entry("a") is not None  # a is now the most recently used
    kept.put("c", 1, (1, 2))  # 7 > 6: b goes, not a
    assert kept.entry("b") is None
    assert kept.entry("a") is not None and kept.entry("c") is not None
    kept.put("a", 2, (1,))  # a replaced: its old size no longer counts
    kept.put("d", 1, (1, 2, 3))  # 1 + 2 + 3 = 6: all stay
    assert all(kept.entry(k) is not None for k in "acd")
    kept.put("e", 1, tuple(range(7)))  # larger than the bound alone: everything goes, itself included
    assert all(kept.entry(k) is None for k in "acde")
