"""Search in one room of a million messages of a multilingual corpus (docs/benchmarks.md, docs/search.md).

- `search_1m`: `GET /channels/{id}/messages/search?q=&limit=25`, one query at a time, a fixed mix of query kinds
  in turn (KINDS below: a common word, a rare word, two words, the prefix of a word, a substring inside a word,
  a Cyrillic word in another case, a CJK substring, a word that matches nothing, a word of under three
  characters). Per-kind p50/p95/p99 go to stderr and into the run's `figures`.

The corpus is generated, not copied: three made-up vocabularies (Latin letters, Cyrillic, CJK ideographs with
kana), each word drawn with a Zipf-like frequency so that some words are in a large part of the messages and
most are rare; messages of 1 to 30 words, a language per message (60 % Latin, 25 % Cyrillic, 15 % CJK, where
words follow each other without spaces), some capitalised. The same seed gives the same corpus and queries.

The rows are written straight into `messages` at setup, as bench/workloads.py's `search` does (through the API
this would take days at the send rate): the search index follows through its triggers (SQLite) or its GIN
index (PostgreSQL) as for sent messages. SEARCH_1M_MESSAGES sets the size (default 1,000,000; a smaller one for
a quick look).
"""

from __future__ import annotations

import os
import random
import sys
import time
from collections.abc import Iterator
from itertools import accumulate
from typing import Any

from bench.drivers import Context, OpError, Samples, expect
from bench.workloads import register, seed_search_room, seeded_message_row

DEFAULT_MESSAGES = 1_000_000
SEED = 20261206
VOCABULARY = 20_000  # words per language
ZIPF = 1.05  # the exponent of the word frequencies: rank 1 is in many messages, rank 20,000 in a handful
BATCH = 10_000

_LATIN_ONSETS = "b c d f g h j k l m n p r s t v w z br cr dr fr gr pl pr st str th sh ch tr sk".split()
_LATIN_VOWELS = "a e i o u ea ou ai io y".split()
_LATIN_CODAS = ["", "", "", "n", "r", "s", "t", "l", "nd", "st", "ng", "rk"]
_CYR_ONSETS = "б в г д ж з к л м н п р с т ф х ц ч ш щ бр вр гр др кр пр ст тр ск сл зв".split()
_CYR_VOWELS = "а е и о у ы э ю я ё".split()
_CYR_CODAS = ["", "", "", "н", "р", "с", "т", "л", "й", "ст", "нь", "ть"]
# Ideographs from the CJK Unified Ideographs block and hiragana, as a Chinese or Japanese text would mix them.
_CJK = [chr(c) for c in range(0x4E00, 0x4E00 + 3000, 3)] + [chr(c) for c in range(0x3041, 0x3097)]


def _latin_word(rng: random.Random) -> str:
    return "".join(rng.choice(_LATIN_ONSETS) + rng.choice(_LATIN_VOWELS) for _ in range(rng.randint(1, 3))) \
        + rng.choice(_LATIN_CODAS)


def _cyrillic_word(rng: random.Random) -> str:
    return "".join(rng.choice(_CYR_ONSETS) + rng.choice(_CYR_VOWELS) for _ in range(rng.randint(1, 3))) \
        + rng.choice(_CYR_CODAS)


def _cjk_word(rng: random.Random) -> str:
    return "".join(rng.choice(_CJK) for _ in range(rng.randint(1, 4)))


def _vocabulary(rng: random.Random, make: Any) -> list[str]:
    words: dict[str, None] = {}
    while len(words) < VOCABULARY:
        words[make(rng)] = None
    return list(words)


class Corpus:
    """The three vocabularies, in rank order (rank 0 the most frequent), and the message generator."""

    def __init__(self, seed: int = SEED) -> None:
        rng = random.Random(seed)
        self.latin = _vocabulary(rng, _latin_word)
        self.cyrillic = _vocabulary(rng, _cyrillic_word)
        self.cjk = _vocabulary(rng, _cjk_word)
        self.cum_weights = list(accumulate(1 / (rank + 1) ** ZIPF for rank in range(VOCABULARY)))
        self.seed = seed

    def messages(self, count: int) -> Iterator[str]:
        rng = random.Random(self.seed + 1)
        choices, cum = rng.choices, self.cum_weights
        for _ in range(count):
            k = min(30, 1 + int(rng.expovariate(1 / 8)))  # mostly short, some long
            language = rng.random()
            if language < 0.60:
                words = choices(self.latin, cum_weights=cum, k=k)
                if rng.random() < 0.3:
                    words[0] = words[0].capitalize()
                yield " ".join(words)
            elif language < 0.85:
                words = choices(self.cyrillic, cum_weights=cum, k=k)
                if rng.random() < 0.3:
                    words[0] = words[0].capitalize()
                if rng.random() < 0.05:
                    words = [w.upper() for w in words]
                yield " ".join(words)
            else:
                # CJK: words run together, with a space or an ideographic comma now and then.
                words = choices(self.cjk, cum_weights=cum, k=k)
                yield "".join(w + ("、" if rng.random() < 0.1 else " " if rng.random() < 0.1 else "")
                              for w in words)

    def queries(self) -> dict[str, tuple[str, ...]]:
        """Per kind, the queries run in turn (each a few different words, so no single plan decides a kind)."""
        latin, cyr, cjk = self.latin, self.cyrillic, self.cjk

        def long_word(words: list[str], start: int, size: int = 6) -> str:
            return next(w for w in words[start:] if len(w) >= size)

        def short_word(words: list[str], start: int) -> str:
            return next(w for w in words[start:] if len(w) == 2)

        def middle(word: str, size: int) -> str:
            at = (len(word) - size) // 2
            return word[at:at + size]

        return {
            "common": (long_word(latin, 0, 3), long_word(latin, 3, 3), long_word(cyr, 0, 3)),
            "rare": (long_word(latin, 15_000), long_word(latin, 18_000), long_word(cyr, 16_000)),
            "two_words": (f"{long_word(latin, 40, 3)} {long_word(latin, 200, 3)}",
                          f"{long_word(latin, 0, 3)} {long_word(latin, 5_000, 3)}",
                          f"{long_word(cyr, 10, 3)} {long_word(cyr, 300, 3)}"),
            "prefix": (long_word(latin, 300)[:4], long_word(latin, 2_000)[:5], long_word(cyr, 100)[:4]),
            "substring": (middle(long_word(latin, 100, 7), 4), middle(long_word(latin, 1_000, 7), 4),
                          middle(long_word(cyr, 500, 7), 4)),
            "cyrillic_case": (long_word(cyr, 30, 4).upper(), long_word(cyr, 700, 4).capitalize(),
                              long_word(cyr, 5_000, 4).upper()),
            "cjk_substring": (long_word(cjk, 20, 4)[1:4], long_word(cjk, 400, 4)[:3], long_word(cjk, 3_000, 4)[1:]),
            "no_match": ("xylophonequartz", "щъщъщъ", "zzzqqq"),
            "short": (short_word(latin, 0), short_word(cyr, 50), short_word(cjk, 10)),
        }


def _messages() -> int:
    return int(os.environ.get("SEARCH_1M_MESSAGES", DEFAULT_MESSAGES))


def _rows(corpus: Corpus, count: int, channel_id: int, guild_id: int, author_id: int) -> Iterator[list[dict[str, Any]]]:
    """`count` rows, oldest first, in batches, with snowflake ids in the past (one message a second)."""
    from meadhall.core.ids import EPOCH_MS
    from meadhall.core.text import norm

    start_ms = int(time.time() * 1000) - count * 1_000 - 86_400_000
    batch: list[dict[str, Any]] = []
    for i, content in enumerate(corpus.messages(count)):
        at = start_ms + i * 1_000
        batch.append(seeded_message_row(((at - EPOCH_MS) << 22) | (1022 << 12), channel_id, guild_id, author_id,
                                        content, norm(content), at))
        if len(batch) == BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


async def _setup(ctx: Context) -> None:
    """A guild and a room through the API, then the room's messages written straight into the database."""
    if "search_1m_channel_id" in ctx.shared:
        return
    corpus = Corpus()
    count = _messages()
    channel_id, user = await seed_search_room(
        ctx, "search_1m", "search 1m",
        lambda channel_id, guild_id, author_id: _rows(corpus, count, channel_id, guild_id, author_id))
    ctx.shared["search_1m_channel_id"] = channel_id
    ctx.shared["search_1m_token"] = user["token"]
    ctx.shared["search_1m_queries"] = corpus.queries()


class SearchSamples(Samples):
    figures: dict[str, Any]


def _figures(by_kind: dict[str, list[float]], every: list[float]) -> dict[str, Any]:
    from bench.harness import ms, percentile

    def of(values: list[float]) -> dict[str, Any]:
        lat = sorted(values)
        return {"p50_ms": ms(percentile(lat, 50)), "p95_ms": ms(percentile(lat, 95)),
                "max_ms": ms(lat[-1]) if lat else None, "ops": len(lat)}

    return {"overall": of(every), **{kind: of(values) for kind, values in by_kind.items()}}


@register("search_1m", setup=_setup, needs_users=1, max_ops=900,
          description="GET /channels/{id}/messages/search in a room of SEARCH_1M_MESSAGES (default 1,000,000) "
                      "messages in three scripts, one at a time, a fixed mix of query kinds; p50/p95 per kind")
async def search_1m(ctx: Context) -> Samples:
    channel, token = ctx.shared["search_1m_channel_id"], ctx.shared["search_1m_token"]
    kinds: dict[str, tuple[str, ...]] = ctx.shared["search_1m_queries"]
    plan = [(kind, q) for i in range(3) for kind, queries in kinds.items() for q in queries[i:i + 1]]
    by_kind: dict[str, list[float]] = {kind: [] for kind in kinds}
    found: dict[str, int] = {}
    headers = {"Authorization": f"Bearer {token}"}
    async with ctx.http_pool(1) as http:

        async def op(i: int) -> float:
            kind, q = plan[i % len(plan)]
            started = time.perf_counter()
            resp = expect(await http.get(f"/api/v1/channels/{channel}/messages/search",
                                         params={"q": q, "limit": 25}, headers=headers))
            elapsed = time.perf_counter() - started
            body = resp.json()
            if "messages" not in body:
                raise OpError("search answer without messages")
            found[q] = len(body["messages"])
            by_kind[kind].append(elapsed)
            return elapsed

        samples = await ctx.drive(op, concurrency=1)
    result = SearchSamples(latencies=samples.latencies, errors=samples.errors,
                           error_examples=samples.error_examples, wall_s=samples.wall_s)
    result.figures = _figures(by_kind, samples.latencies)
    result.figures["found"] = found
    for kind, figures in result.figures.items():
        if kind != "found":
            print(f"bench: search_1m [{kind}] p50 {figures['p50_ms']} ms, p95 {figures['p95_ms']} ms, "
                  f"max {figures['max_ms']} ms", file=sys.stderr, flush=True)
    return result
