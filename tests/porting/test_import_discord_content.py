"""The text of an imported Discord message (porting/discord/content.py): a long message is never cut through
a mention token, and labels are replaced once, never inside a token already written."""

from __future__ import annotations

from meadhall.porting.discord.content import MAX_CONTENT, rewrite_mentions, split_content


def test_a_cut_in_a_run_without_spaces_goes_before_a_mention_token() -> None:
    token = "<@123456789012345678>"
    text = "x" * (MAX_CONTENT - 5) + token + "y" * 100
    parts = split_content(text)
    assert "".join(parts) == text
    assert all(len(p) <= MAX_CONTENT for p in parts)
    assert parts[0] == "x" * (MAX_CONTENT - 5) and parts[1].startswith(token)


def test_a_cut_at_a_space_or_the_limit_is_unchanged() -> None:
    assert split_content("a" * MAX_CONTENT + "b") == ["a" * MAX_CONTENT, "b"]
    assert split_content("a" * 3000 + " " + "b" * 2000) == ["a" * 3000, "b" * 2000]


def test_labels_made_of_digits_are_not_read_inside_a_token_written() -> None:
    content, named = rewrite_mentions("hi @Ann @5", [("1", "Ann"), ("2", "5")], {"1": 777, "2": 55})
    assert content == "hi <@777> <@55>"
    assert named == [777, 55]
    content, named = rewrite_mentions("hi @Ann", [("1", "Ann"), ("2", "7")], {"1": 777, "2": 55})
    assert content == "hi <@777>" and named == [777]


def test_longer_labels_first_and_raw_tokens_once() -> None:
    content, named = rewrite_mentions("@Ann Lee and @Ann and <@1>", [("1", "Ann"), ("2", "Ann Lee")],
                                      {"1": 10, "2": 20})
    assert content == "<@20> and <@10> and <@10>"
    assert named == [20, 10]
    assert rewrite_mentions("<@999> @Bo", [], {}) == ("<@999> @Bo", [])
