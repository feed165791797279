"""The invitation page and the page shown while no client is built speak the reader's language (docs/client.md,
"Languages"): the signed-in account's locale, else the browser's Accept-Language by its q-values, else English;
`<html lang>` says which. The button keeps its English name in English."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.support.guilds import make_guild, make_invite

RUSSIAN_BROWSER = {"Accept-Language": "ru-RU,ru;q=0.9,en-US;q=0.8,en;q=0.7"}


@pytest.fixture
async def invited(client: Any, accounts: Any) -> dict[str, Any]:
    alice = await accounts.register("alice", display_name="Alice of the Hall")
    guild = await make_guild(client, alice, "Mead Hall")
    invite = await make_invite(client, alice, guild["system_channel_id"])
    return {"alice": alice, "guild": guild, "code": invite["code"]}


def lang_of(page: str) -> str:
    found = re.search(r'<html lang="([^"]+)">', page)
    assert found, page[:200]
    return found.group(1)


async def test_a_russian_browser_reads_the_page_in_russian_with_the_member_count_declined(client, accounts, invited):
    code = invited["code"]
    r = await client.get(f"/invite/{code}", headers=RUSSIAN_BROWSER)
    assert r.status_code == 200, r.text
    page = r.text
    assert lang_of(page) == "ru" and r.headers["content-language"] == "ru"
    assert "<title>Mead Hall · приглашение в Meadhall</title>" in page
    assert "Alice of the Hall приглашает вас на сервер" in page
    assert '<p class="member-count">1 участник</p>' in page
    assert ">Создать аккаунт</a>" in page and ">Войти и принять приглашение</a>" in page
    assert "Accept invitation" not in page and "member" not in page.replace("member-count", "")

    # 2 and 5 members: «участника», «участников».
    for n, said in ((2, "2 участника"), (5, "5 участников")):
        while True:
            joined = (await client.get(f"/invite/{code}", headers=RUSSIAN_BROWSER)).text
            count = int(re.search(r'<p class="member-count">(\d+)', joined).group(1))  # type: ignore[union-attr]
            if count == n:
                break
            newcomer = await accounts.register()
            r = await client.post(f"/api/v1/invites/{code}", headers=newcomer.headers)
            assert r.status_code in (200, 201), r.text
        assert f'<p class="member-count">{said}</p>' in joined


@pytest.mark.parametrize(("accept", "lang"), [
    (None, "en"), ("de-DE,de;q=0.9", "en"), ("de, ru;q=0.5, en;q=0.4", "ru"), ("en;q=0.3, ru;q=0.6", "ru"),
    ("ru;q=0, en-GB", "en")])
async def test_accept_language_is_read_by_its_q_values(client, invited, accept, lang):
    headers = {} if accept is None else {"Accept-Language": accept}
    page = (await client.get(f"/invite/{invited['code']}", headers=headers)).text
    assert lang_of(page) == lang
    assert ("1 member<" in page) == (lang == "en")


async def test_a_signed_in_russian_account_reads_russian_whatever_the_browser_says(client, accounts, invited):
    boris = await accounts.register("boris", locale="ru-RU")
    r = await client.get(f"/invite/{invited['code']}", headers={**boris.headers, "Accept-Language": "en-US,en"})
    page = r.text
    assert lang_of(page) == "ru"
    button = re.search(r'<button type="button" id="accept-invitation"[^>]*>([^<]*)</button>', page, re.S)
    assert button and button.group(1) == "Принять приглашение"
    # The joining script's words come with the page, in its language.
    assert 'data-joining="Присоединяемся…"' in page and 'data-refused="Не удалось принять приглашение: {reason}"' in page

    # An English account reads English in a Russian browser: the account decides.
    alice = invited["alice"]
    page = (await client.get(f"/invite/{invited['code']}", headers={**alice.headers, **RUSSIAN_BROWSER})).text
    assert lang_of(page) == "en" and "You are already a member of this server." in page


async def test_an_unknown_invitation_in_russian(client):
    r = await client.get("/invite/nosuchcode", headers=RUSSIAN_BROWSER)
    assert r.status_code == 404
    assert lang_of(r.text) == "ru"
    assert "<h1>Приглашение не найдено</h1>" in r.text and ">Перейти в Meadhall</a>" in r.text


async def test_the_page_without_a_client_in_russian(client, monkeypatch, tmp_path):
    monkeypatch.setattr("meadhall.web.client.CLIENT_DIR", tmp_path / "no-client")
    page = (await client.get("/", headers=RUSSIAN_BROWSER)).text
    assert lang_of(page) == "ru"
    assert "Это сервис Meadhall по адресу <strong>http://localhost:8000</strong>, версия" in page
    assert "Соберите его командой <code>make install</code>" in page
    assert ">Документация API</a>" in page
    page = (await client.get("/")).text
    assert lang_of(page) == "en" and "The web client is not built yet. Build it with <code>make install</code>" in page
