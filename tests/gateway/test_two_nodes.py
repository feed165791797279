"""Scale-out (docs/scaling.md): two real `meadhall serve` processes on different ports share the test
PostgreSQL database and Redis, as several nodes behind a reverse proxy would.

- a message posted to node A reaches a gateway client of node B (events fan out through Redis pub/sub);
- a client of node A disconnects, events are produced through both nodes meanwhile, and it RESUMEs on
  node B: every missed dispatch, in order with contiguous `s`, then RESUMED `{replayed: n}`, then live
  events (resume buffers and sequence numbers live in Redis: no sticky sessions);
- a rate-limit bucket spent on A refuses the next request on B (429, Retry-After), and a login lockout
  earned on A holds on B (counters in Redis);
- a user's gateway connections on both nodes share the cap of ten: the eleventh, on B, closes the
  oldest, on A, with 4013.
- presence crosses nodes: a friend's coming online and status change, produced on A, reach a friend
  connected to B as PRESENCE_UPDATE, and a stranger connected to B gets none; the friends node A keeps for a
  user follow a block and a new friendship made through B at once, and so do the receivers of a profile change
  (MEMBER_UPDATE) when a member joins through B.
- voice states live in Redis: a voice room joined through B is listed by A, announced to a client of A, and
  left through A (the media server is down here, which fails no voice request).
- the link-preview cache lives in the database: an answer cached through A is B's answer too.
- a passkey ceremony (registration and sign-in) started on A is finished on B, and is then used up on A
  too (ceremonies live in Redis).
- a notification setting changed through A reaches the user's connections on both nodes
  (NOTIFICATION_SETTINGS_UPDATE), and nobody else's.

Needs TEST_DATABASE_URL and TEST_REDIS_URL (CI sets both); skipped otherwise. The database is shared
with the in-process tests (which empty it per test) and Redis with anything else using it, and the
service has no Redis key prefix setting: so every name here is unique per run, and the nodes trust
`X-Forwarded-For` (TRUST_PROXY, as behind a proxy) so that each run comes from an address of its own
(address-keyed buckets and lockouts of earlier runs do not apply)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import signal
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import connect

from tests.support.gateway import WAIT, GatewayClient
from tests.support.isolation import clean_env
from tests.support.processes import Node, serve, stop, wait_healthy
from tests.support.webauthn import Authenticator

TEST_DATABASE_URL = os.environ.get("TEST_DATABASE_URL") or None
TEST_REDIS_URL = os.environ.get("TEST_REDIS_URL") or None

pytestmark = pytest.mark.skipif(not (TEST_DATABASE_URL and TEST_REDIS_URL),
                                reason="needs TEST_DATABASE_URL and TEST_REDIS_URL (PostgreSQL and Redis)")

API = "/api/v1"
PASSWORD = "correct horse battery staple"
SECRET = "two-node-test-secret-0123456789abcdefghij"
# `typing` (1 per 3 s per user, docs/reference/limits.md) made 1 per minute for both nodes: a slow machine cannot
# refill it between the request on A and the one on B.
RATE_LIMITS = {"typing": "1/60"}
MEDIA_DOWN = "http://127.0.0.1:9"  # the discard port: no media server answers there


class User:
    def __init__(self, body: dict[str, Any]) -> None:
        self.id: str = body["user"]["id"]
        self.username: str = body["user"]["username"]
        self.token: str = body["token"]
        self.headers = {"Authorization": f"Bearer {self.token}"}


class Cluster:
    """The two nodes, and a hall the tests share: alice (registered on A) owns a guild made on A; bob
    (registered on B) joined it on B through an invitation made on A; `room` is its text room."""

    def __init__(self, a: Node, b: Node) -> None:
        self.a, self.b = a, b
        self.run = uuid.uuid4().hex[:8]
        # One client address per run (TRUST_PROXY): see the module docstring.
        address = f"10.{random.randint(0, 255)}.{random.randint(0, 255)}.{random.randint(1, 254)}"
        self.headers = {"X-Forwarded-For": address}
        self.count = 0

    def name(self, label: str) -> str:
        self.count += 1
        return f"{label}_{self.run}_{self.count}"

    def build_hall(self, http: httpx.Client) -> None:
        def register(node: Node, label: str) -> User:
            username = self.name(label)
            body = {"username": username, "email": f"{username}@example.com", "password": PASSWORD}
            r = http.post(f"{node.url}{API}/auth/register", json=body)
            assert r.status_code == 201, r.text
            return User(r.json())

        self.alice = register(self.a, "alice")
        self.bob = register(self.b, "bob")
        r = http.post(f"{self.a.url}{API}/guilds", json={"name": "Two Halls"}, headers=self.alice.headers)
        assert r.status_code == 201, r.text
        self.room: str = r.json()["guild"]["system_channel_id"]
        self.guild_id: str = r.json()["guild"]["id"]
        r = http.post(f"{self.a.url}{API}/channels/{self.room}/invites", json={}, headers=self.alice.headers)
        assert r.status_code == 201, r.text
        r = http.post(f"{self.b.url}{API}/invites/{r.json()['invite']['code']}", headers=self.bob.headers)
        assert r.status_code == 200, r.text


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    assert TEST_DATABASE_URL and TEST_REDIS_URL
    root = tmp_path_factory.mktemp("two-nodes")
    data_dir = root / "data"  # one DATA_DIR (files) for both, as a shared volume would be
    node_ids = random.sample(range(512, 1024), 2)

    def env(node_id: int) -> dict[str, str]:
        return clean_env(DATABASE_URL=TEST_DATABASE_URL, REDIS_URL=TEST_REDIS_URL, NODE_ID=str(node_id),
                         SECRET_KEY=SECRET, DATA_DIR=str(data_dir), LOG_LEVEL="warning", TRUST_PROXY="true",
                         RATE_LIMITS=json.dumps(RATE_LIMITS), MEDIA_API_KEY="two-node-media-key",
                         MEDIA_API_SECRET="two-node-media-secret-0123456789abcdef", MEDIA_API_URL=MEDIA_DOWN)

    nodes = [serve(root / "a", env(node_ids[0])), serve(root / "b", env(node_ids[1]))]
    try:
        cluster = Cluster(*nodes)
        cluster.root, cluster.env, cluster.node_ids = root, env, node_ids
        with httpx.Client(timeout=10, trust_env=False, headers=cluster.headers) as http:
            for node in nodes:
                wait_healthy(node, http)
            for node in nodes:
                r = http.get(f"{node.url}/readyz")
                assert r.status_code == 200, r.text
                assert r.json()["checks"] == {"database": "ok", "redis": "ok"}
            cluster.build_hall(http)
        yield cluster
    finally:
        codes = [stop(node) for node in nodes]
    for node, code in zip(nodes, codes, strict=True):
        output = node.stderr() + node.stdout()
        # uvicorn shuts down gracefully on SIGTERM, then re-raises the signal (exit status -SIGTERM).
        assert code in (0, -signal.SIGTERM), f"unclean exit {code}:\n{output}"
        assert "Traceback" not in output, output


@pytest.fixture
async def http(cluster: Cluster) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=10, trust_env=False, headers=cluster.headers) as client:
        yield client


@pytest.fixture
async def ws_clients() -> AsyncIterator[list[GatewayClient]]:
    clients: list[GatewayClient] = []
    yield clients
    for c in clients:
        c._reader.cancel()
        try:
            await c.ws.close()
        except Exception:
            pass


async def post_on(http: httpx.AsyncClient, node: Node, who: User, room: str, content: str) -> dict[str, Any]:
    r = await http.post(f"{node.url}{API}/channels/{room}/messages", json={"content": content, "nonce": content},
                        headers=who.headers)
    assert r.status_code == 201, r.text
    return r.json()["message"]


async def connect_gateway(node: Node, clients: list[GatewayClient]) -> GatewayClient:
    ws = await connect(f"{node.ws_url}/gateway?v=1&encoding=json", open_timeout=WAIT, max_size=None,
                       compression=None, proxy=None)
    client = GatewayClient(ws)
    clients.append(client)
    return client


async def identified(node: Node, who: User, clients: list[GatewayClient]) -> GatewayClient:
    client = await connect_gateway(node, clients)
    ready = await client.identify(who.token)
    assert ready["user"]["id"] == who.id
    return client


async def created(client: GatewayClient, message_id: str) -> dict[str, Any]:
    """Skip to the MESSAGE_CREATE of this message; returns the frame."""
    return await client.recv_until(lambda f: f["op"] == 0 and f["t"] == "MESSAGE_CREATE"
                                   and f["d"]["id"] == message_id)


# ---------------------------------------------------------------- (a) fan-out between nodes


async def test_a_message_posted_on_one_node_reaches_a_client_of_the_other(cluster, http, ws_clients):
    alice, bob, room = cluster.alice, cluster.bob, cluster.room
    bob_on_b = await identified(cluster.b, bob, ws_clients)
    alice_on_a = await identified(cluster.a, alice, ws_clients)

    sent = await post_on(http, cluster.a, alice, room, "hello from node A")
    got = (await created(bob_on_b, sent["id"]))["d"]
    assert got["content"] == "hello from node A"
    assert got["channel_id"] == room and got["author"]["id"] == alice.id

    # And back: posted on B, delivered on A, and to the author (with the nonce) on B.
    reply = await post_on(http, cluster.b, bob, room, "hello from node B")
    assert (await created(alice_on_a, reply["id"]))["d"]["content"] == "hello from node B"
    assert (await created(bob_on_b, reply["id"]))["d"]["nonce"] == "hello from node B"


# ---------------------------------------------------------------- (b) resume on another node


async def test_a_client_of_node_a_resumes_on_node_b_without_losing_an_event(cluster, http, ws_clients):
    alice, bob, room = cluster.alice, cluster.bob, cluster.room
    # A witness on node A: once it has a message, node A has numbered it for alice's gateway session
    # as well (one hub, one append for every receiver of an event).
    witness_on_a = await identified(cluster.a, bob, ws_clients)

    alice_on_a = await identified(cluster.a, alice, ws_clients)
    session_id = alice_on_a.session_id
    first = await post_on(http, cluster.b, bob, room, "before the break")
    await created(alice_on_a, first["id"])
    last_seq = alice_on_a.last_seq
    assert last_seq is not None and last_seq >= 2  # READY was 1
    await alice_on_a.close()

    # Produced while alice is away, through both nodes and by both users.
    missed = [
        await post_on(http, cluster.a, alice, room, "missed 1 (alice via A)"),
        await post_on(http, cluster.b, bob, room, "missed 2 (bob via B)"),
        await post_on(http, cluster.a, bob, room, "missed 3 (bob via A)"),
        await post_on(http, cluster.b, alice, room, "missed 4 (alice via B)"),
    ]
    await created(witness_on_a, missed[-1]["id"])

    alice_on_b = await connect_gateway(cluster.b, ws_clients)
    hello = await alice_on_b.recv()
    assert hello["op"] == 10
    await alice_on_b.send(6, {"token": alice.token, "session_id": session_id, "seq": last_seq})

    replayed: list[dict[str, Any]] = []
    while True:
        frame = await alice_on_b.recv()
        assert frame["op"] == 0, frame  # no INVALID_SESSION
        if frame["t"] == "RESUMED":
            break
        replayed.append(frame)
    resumed = frame
    assert [f["s"] for f in replayed] == list(range(last_seq + 1, last_seq + 1 + len(replayed)))
    assert [f["d"]["id"] for f in replayed if f["t"] == "MESSAGE_CREATE"] == [m["id"] for m in missed]
    assert resumed["d"] == {"replayed": len(replayed)}
    assert resumed["s"] == last_seq + len(replayed) + 1

    # Live again, on B: an event produced through A arrives once, with the next number.
    live = await post_on(http, cluster.a, bob, room, "after the resume")
    frame = await alice_on_b.recv_until(lambda f: f["op"] == 0)
    assert (frame["t"], frame["d"]["id"], frame["s"]) == ("MESSAGE_CREATE", live["id"], resumed["s"] + 1)
    await created(witness_on_a, live["id"])
    await alice_on_b.no_dispatch(settle=0.3)  # node A, which still holds the detached session, adds nothing


async def test_a_resume_on_another_node_with_an_older_seq_replays_from_there(cluster, http, ws_clients):
    """The client says it last saw READY: everything after it is replayed, on the other node."""
    alice, bob, room = cluster.alice, cluster.bob, cluster.room
    alice_on_b = await identified(cluster.b, alice, ws_clients)
    sent = [await post_on(http, cluster.a, bob, room, f"seen or not {i}") for i in range(3)]
    for message in sent:
        await created(alice_on_b, message["id"])
    await alice_on_b.close()

    alice_on_a = await connect_gateway(cluster.a, ws_clients)
    assert (await alice_on_a.recv())["op"] == 10
    await alice_on_a.send(6, {"token": alice.token, "session_id": alice_on_b.session_id, "seq": 1})
    frames = [await alice_on_a.recv() for _ in range(len(sent) + 1)]
    assert [f["t"] for f in frames] == ["MESSAGE_CREATE"] * len(sent) + ["RESUMED"]
    assert [f["s"] for f in frames] == [2, 3, 4, 5]
    assert [f["d"]["id"] for f in frames[:-1]] == [m["id"] for m in sent]
    assert frames[-1]["d"] == {"replayed": 3}


async def post_paced(http: httpx.AsyncClient, node: Node, who: User, room: str, content: str) -> dict[str, Any]:
    """`post_on`, waiting out `messages.send` when earlier tests of the module spent it (429, retry_after)."""
    for _ in range(20):
        r = await http.post(f"{node.url}{API}/channels/{room}/messages", json={"content": content, "nonce": content},
                            headers=who.headers)
        if r.status_code != 429:
            break
        await asyncio.sleep(float(r.json()["error"]["retry_after"]) + 0.05)
    assert r.status_code == 201, r.text
    return r.json()["message"]


async def test_a_client_of_a_killed_node_resumes_on_another_and_misses_nothing(cluster, http, ws_clients):
    """SIGKILL: nothing handed over, nobody numbers the session's events until its RESUME. The node it
    resumes on numbers them from the shared event log: every message, once, in order, contiguous `s`."""
    alice, bob, room = cluster.alice, cluster.bob, cluster.room
    node_id = random.choice([n for n in range(512, 1024) if n not in cluster.node_ids])
    doomed = serve(cluster.root / f"c-{uuid.uuid4().hex[:6]}", cluster.env(node_id))
    try:
        async with httpx.AsyncClient(timeout=10, trust_env=False) as probe:
            for _ in range(600):
                assert doomed.proc.poll() is None, doomed.stderr()
                with contextlib.suppress(httpx.TransportError):
                    if (await probe.get(f"{doomed.url}/readyz")).status_code == 200:
                        break
                await asyncio.sleep(0.05)
        alice_on_c = await identified(doomed, alice, ws_clients)
        tag = uuid.uuid4().hex[:6]
        seen = [await post_paced(http, cluster.b, bob, room, f"delivered by the doomed node {tag} {i}")
                for i in range(2)]
        for message in seen:
            await created(alice_on_c, message["id"])
        last_seq = alice_on_c.last_seq
        assert last_seq is not None
        doomed.proc.kill()  # SIGKILL
        doomed.proc.wait()

        missed = [await post_paced(http, node, who, room, f"missed {tag} {i}")
                  for i, (node, who) in enumerate([(cluster.a, bob), (cluster.b, alice), (cluster.b, bob),
                                                   (cluster.a, alice)])]
        alice_on_b = await connect_gateway(cluster.b, ws_clients)
        assert (await alice_on_b.recv())["op"] == 10
        await alice_on_b.send(6, {"token": alice.token, "session_id": alice_on_c.session_id, "seq": last_seq})
        replayed: list[dict[str, Any]] = []
        while True:
            frame = await alice_on_b.recv()
            assert frame["op"] == 0, frame  # no INVALID_SESSION
            if frame["t"] == "RESUMED":
                break
            replayed.append(frame)
        assert [f["s"] for f in replayed] == list(range(last_seq + 1, last_seq + 1 + len(replayed)))
        assert [f["d"]["id"] for f in replayed if f["t"] == "MESSAGE_CREATE"] == [m["id"] for m in missed]
        assert frame["d"] == {"replayed": len(replayed)} and frame["s"] == last_seq + len(replayed) + 1

        live = await post_paced(http, cluster.a, bob, room, f"after the resume {tag}")
        after = await alice_on_b.recv_until(lambda f: f["op"] == 0)
        assert (after["t"], after["d"]["id"], after["s"]) == ("MESSAGE_CREATE", live["id"], frame["s"] + 1)
    finally:
        if doomed.proc.poll() is None:
            doomed.proc.kill()
            doomed.proc.wait()


# ---------------------------------------------------------------- (c) shared rate limits and lockouts


async def test_a_rate_limit_spent_on_node_a_holds_on_node_b(cluster, http):
    alice, bob, room = cluster.alice, cluster.bob, cluster.room
    r = await http.post(f"{cluster.a.url}{API}/channels/{room}/typing", headers=alice.headers)
    assert r.status_code == 204, r.text
    r = await http.post(f"{cluster.b.url}{API}/channels/{room}/typing", headers=alice.headers)
    assert r.status_code == 429, r.text
    assert r.json()["error"]["code"] == "rate_limited"
    assert r.json()["error"]["bucket"] == "typing"
    assert 1 <= int(r.headers["Retry-After"]) <= 60
    assert r.headers["X-RateLimit-Bucket"] == "typing"
    # Per user: bob's bucket is his own, whichever node he asks.
    r = await http.post(f"{cluster.b.url}{API}/channels/{room}/typing", headers=bob.headers)
    assert r.status_code == 204, r.text


async def test_a_login_lockout_earned_on_node_a_holds_on_node_b(cluster, http):
    username = cluster.name("carol")
    r = await http.post(f"{cluster.a.url}{API}/auth/register",
                        json={"username": username, "email": f"{username}@example.com", "password": PASSWORD})
    assert r.status_code == 201, r.text
    for _ in range(5):
        r = await http.post(f"{cluster.a.url}{API}/auth/login", json={"login": username, "password": "wrong " * 3})
        assert r.status_code == 401, r.text
    # The sixth attempt, on the other node and with the right password, is refused (docs/reference/limits.md).
    r = await http.post(f"{cluster.b.url}{API}/auth/login", json={"login": username, "password": PASSWORD})
    assert r.status_code == 429, r.text
    assert r.json()["error"]["bucket"] == "auth.lockout"
    assert 890 <= int(r.headers["Retry-After"]) <= 900


# ---------------------------------------------------------------- (d) the connection cap spans the nodes


async def test_connections_on_both_nodes_share_the_cap_of_ten(cluster, http, ws_clients):
    username = cluster.name("dora")
    r = await http.post(f"{cluster.a.url}{API}/auth/register",
                        json={"username": username, "email": f"{username}@example.com", "password": PASSWORD})
    assert r.status_code == 201, r.text
    dora = User(r.json())
    on_a = [await identified(cluster.a, dora, ws_clients) for _ in range(6)]
    on_b = [await identified(cluster.b, dora, ws_clients) for _ in range(4)]

    eleventh = await identified(cluster.b, dora, ws_clients)

    # The oldest lives on node A; node B asked it through the bus to close it (docs/gateway.md).
    assert await on_a[0].wait_closed() == 4013
    for c in [*on_a[1:], *on_b, eleventh]:
        await c.send(1, c.last_seq)
        assert (await c.recv_until(lambda f: f["op"] == 11))["op"] == 11
        assert c.closed_code is None
    # A twelfth on A replaces the oldest remaining one, on A as well.
    await identified(cluster.a, dora, ws_clients)
    assert await on_a[1].wait_closed() == 4013
    assert on_b[0].closed_code is None


# ---------------------------------------------------------------- (f) presence to friends across nodes


async def register_on(http: httpx.AsyncClient, cluster: Cluster, node: Node, label: str) -> User:
    username = cluster.name(label)
    r = await http.post(f"{node.url}{API}/auth/register",
                        json={"username": username, "email": f"{username}@example.com", "password": PASSWORD})
    assert r.status_code == 201, r.text
    return User(r.json())


async def befriend_across(http: httpx.AsyncClient, cluster: Cluster, asker: User, answerer: User) -> None:
    """`asker` asks on node A, `answerer` accepts on node B."""
    r = await http.post(f"{cluster.a.url}{API}/users/@me/relationships", json={"username": answerer.username},
                        headers=asker.headers)
    assert r.status_code == 201, r.text
    r = await http.put(f"{cluster.b.url}{API}/users/@me/relationships/{asker.id}", json={"type": "friend"},
                       headers=answerer.headers)
    assert r.status_code == 200 and r.json()["relationship"]["type"] == "friend", r.text


async def presence_frames_before_marker(http: httpx.AsyncClient, node: Node, who: User,
                                        conn: GatewayClient) -> list[dict[str, Any]]:
    """The PRESENCE_UPDATE payloads `conn` got before a marker of `who`'s own (a USER_UPDATE with a fresh
    private `locale`, produced on `node`): Redis delivers one channel in publish order, so whatever was
    published before the marker would have arrived first."""
    token = "en-" + uuid.uuid4().hex[:8]
    r = await http.patch(f"{node.url}{API}/users/@me", json={"locale": token}, headers=who.headers)
    assert r.status_code == 200, r.text
    got: list[dict[str, Any]] = []
    while True:
        frame = await conn.recv_until(lambda f: f["op"] == 0)
        if frame["t"] == "USER_UPDATE" and frame["d"]["locale"] == token:
            return got
        if frame["t"] == "PRESENCE_UPDATE":
            got.append(frame["d"])


async def test_presence_produced_on_one_node_reaches_a_friend_on_the_other_and_no_one_else(
        cluster, http, ws_clients):
    erin = await register_on(http, cluster, cluster.a, "erin")
    finn = await register_on(http, cluster, cluster.b, "finn")
    stranger = await register_on(http, cluster, cluster.b, "gus")
    await befriend_across(http, cluster, erin, finn)
    finn_on_b = await identified(cluster.b, finn, ws_clients)
    stranger_on_b = await identified(cluster.b, stranger, ws_clients)

    # Coming online: erin's IDENTIFY on node A.
    await identified(cluster.a, erin, ws_clients)
    online = await finn_on_b.recv_until(lambda f: f["op"] == 0 and f["t"] == "PRESENCE_UPDATE")
    assert online["d"]["user"]["id"] == erin.id and online["d"]["user"]["status"] == "online"
    assert online["d"]["style"] is None

    # A status change made through node A.
    r = await http.patch(f"{cluster.a.url}{API}/users/@me", json={"status": "dnd"}, headers=erin.headers)
    assert r.status_code == 200, r.text
    [update] = await presence_frames_before_marker(http, cluster.b, finn, finn_on_b)
    assert (update["user"]["id"], update["user"]["status"]) == (erin.id, "dnd")
    assert await presence_frames_before_marker(http, cluster.b, stranger, stranger_on_b) == []


async def test_friends_kept_by_one_node_follow_a_block_and_a_friendship_made_on_the_other(
        cluster, http, ws_clients):
    hana = await register_on(http, cluster, cluster.a, "hana")
    ivan = await register_on(http, cluster, cluster.b, "ivan")
    jade = await register_on(http, cluster, cluster.b, "jade")
    await befriend_across(http, cluster, hana, ivan)
    ivan_on_b = await identified(cluster.b, ivan, ws_clients)
    jade_on_b = await identified(cluster.b, jade, ws_clients)

    async def change_on_a(status: str) -> None:
        r = await http.patch(f"{cluster.a.url}{API}/users/@me", json={"status": status}, headers=hana.headers)
        assert r.status_code == 200, r.text

    # Node A reads, and keeps, hana's friends.
    await change_on_a("dnd")
    [update] = await presence_frames_before_marker(http, cluster.b, ivan, ivan_on_b)
    assert (update["user"]["id"], update["user"]["status"]) == (hana.id, "dnd")

    # Node B: ivan blocks hana (the friendship ends), jade becomes her friend.
    r = await http.put(f"{cluster.b.url}{API}/users/@me/relationships/{hana.id}", json={"type": "blocked"},
                       headers=ivan.headers)
    assert r.status_code == 200, r.text
    await befriend_across(http, cluster, hana, jade)

    # Node A's next status change of hana reaches jade, and never the user who blocked her.
    await change_on_a("idle")
    assert await presence_frames_before_marker(http, cluster.b, ivan, ivan_on_b) == []
    updates = await presence_frames_before_marker(http, cluster.b, jade, jade_on_b)
    assert [(u["user"]["id"], u["user"]["status"]) for u in updates][-1:] == [(hana.id, "idle")]


async def test_a_profile_change_on_one_node_reaches_a_member_who_joined_through_the_other(
        cluster, http, ws_clients):
    """Node A keeps the audiences of kate's profile changes under her guilds' versions: a member who joined
    through node B is among the receivers of her next change made on A."""
    kate = await register_on(http, cluster, cluster.a, "kate")
    leo = await register_on(http, cluster, cluster.b, "leo")
    r = await http.post(f"{cluster.a.url}{API}/guilds", json={"name": "Kate's hall"}, headers=kate.headers)
    assert r.status_code == 201, r.text
    room = r.json()["guild"]["system_channel_id"]

    async def change_on_a(text: str) -> None:
        r = await http.patch(f"{cluster.a.url}{API}/users/@me", json={"custom_status": text}, headers=kate.headers)
        assert r.status_code == 200, r.text

    await change_on_a("first")  # node A reads, and keeps, the audience: kate alone
    r = await http.post(f"{cluster.a.url}{API}/channels/{room}/invites", json={}, headers=kate.headers)
    assert r.status_code == 201, r.text
    leo_on_b = await identified(cluster.b, leo, ws_clients)
    r = await http.post(f"{cluster.b.url}{API}/invites/{r.json()['invite']['code']}", headers=leo.headers)
    assert r.status_code == 200, r.text

    await change_on_a("second")
    update = await leo_on_b.recv_until(lambda f: f["op"] == 0 and f["t"] == "MEMBER_UPDATE"
                                       and f["d"]["user"]["id"] == kate.id)
    assert update["d"]["user"]["custom_status"] == "second"


# ---------------------------------------------------------------- (g) voice states shared through Redis


async def test_a_voice_state_made_on_one_node_is_seen_on_the_other(cluster, http, ws_clients):
    alice, bob = cluster.alice, cluster.bob
    r = await http.post(f"{cluster.a.url}{API}/guilds/{cluster.guild_id}/channels", headers=alice.headers,
                        json={"type": "voice", "name": cluster.name("lounge")})
    assert r.status_code == 201, r.text
    lounge = r.json()["channel"]["id"]
    alice_on_a = await identified(cluster.a, alice, ws_clients)

    r = await http.post(f"{cluster.b.url}{API}/channels/{lounge}/voice/join", headers=bob.headers)
    assert r.status_code == 200, r.text
    frame = await alice_on_a.recv_until(lambda f: f["op"] == 0 and f["t"] == "VOICE_STATE_UPDATE"
                                        and f["d"]["user_id"] == bob.id)
    assert frame["d"]["channel_id"] == lounge
    r = await http.get(f"{cluster.a.url}{API}/guilds/{cluster.guild_id}/voice-states", headers=alice.headers)
    assert [(s["user_id"], s["channel_id"]) for s in r.json()["voice_states"]] == [(bob.id, lounge)]

    r = await http.post(f"{cluster.a.url}{API}/channels/{lounge}/voice/leave", headers=bob.headers)
    assert r.status_code == 204, r.text
    r = await http.get(f"{cluster.b.url}{API}/guilds/{cluster.guild_id}/voice-states", headers=bob.headers)
    assert r.json()["voice_states"] == []


# ---------------------------------------------------------------- (h) the link-preview cache lives in the database


async def test_a_link_preview_cached_by_one_node_is_answered_by_the_other(cluster, http):
    # A refused address: answered `blocked` without any connection, and cached for an hour in the database.
    url = f"http://127.0.0.1:9/{uuid.uuid4().hex}"
    r = await http.get(f"{cluster.a.url}{API}/link-previews", params={"url": url}, headers=cluster.alice.headers)
    assert r.status_code == 200, r.text
    first = r.json()
    assert first["status"] == "blocked"
    await asyncio.sleep(0.01)
    r = await http.get(f"{cluster.b.url}{API}/link-previews", params={"url": url}, headers=cluster.bob.headers)
    assert r.status_code == 200, r.text
    assert r.json() == first  # the same row: fetched_at unchanged


# ---------------------------------------------------------------- passkey ceremonies


async def test_a_passkey_ceremony_started_on_one_node_finishes_on_the_other(cluster, http):
    """Ceremonies live in Redis: options from A, verification on B, and the used ceremony is refused on A.
    Each node's WebAuthn origin is its own PUBLIC_URL here (http://localhost:<port>), so the authenticator
    answers for B's."""
    alice = cluster.alice
    key = Authenticator(origin=f"http://localhost:{cluster.b.port}")
    r = await http.post(f"{cluster.a.url}{API}/auth/step-up", json={"password": PASSWORD}, headers=alice.headers)
    assert r.status_code == 200, r.text
    r = await http.post(f"{cluster.a.url}{API}/auth/passkeys/register/options", headers=alice.headers)
    assert r.status_code == 200, r.text
    ceremony = r.json()
    body = {"ceremony_id": ceremony["ceremony_id"], "credential": key.create(ceremony["options"])}
    r = await http.post(f"{cluster.b.url}{API}/auth/passkeys/register/verify", json=body, headers=alice.headers)
    assert r.status_code == 201, r.text
    r = await http.post(f"{cluster.a.url}{API}/auth/passkeys/register/verify", json=body, headers=alice.headers)
    assert (r.status_code, r.json()["error"]["code"]) == (401, "auth.ceremony_invalid")

    r = await http.post(f"{cluster.a.url}{API}/auth/passkeys/login/options", json={})
    ceremony = r.json()
    body = {"ceremony_id": ceremony["ceremony_id"], "credential": key.get(ceremony["options"])}
    r = await http.post(f"{cluster.b.url}{API}/auth/passkeys/login/verify", json=body)
    assert r.status_code == 200, r.text
    assert r.json()["user"]["id"] == alice.id and r.json()["session"]["method"] == "passkey"
    r = await http.post(f"{cluster.a.url}{API}/auth/passkeys/login/verify", json=body)
    assert (r.status_code, r.json()["error"]["code"]) == (401, "auth.ceremony_invalid")


# ---------------------------------------------------------------- notification settings


async def test_a_notification_setting_changed_on_one_node_reaches_the_users_connection_on_the_other(
        cluster, http, ws_clients):
    bob = cluster.bob
    bob_on_a, bob_on_b = await identified(cluster.a, bob, ws_clients), await identified(cluster.b, bob, ws_clients)
    alice_on_b = await identified(cluster.b, cluster.alice, ws_clients)

    r = await http.put(f"{cluster.a.url}{API}/users/@me/notification-settings/guilds/{cluster.guild_id}",
                       json={"level": "all", "suppress_everyone": True}, headers=bob.headers)
    assert r.status_code == 200, r.text
    setting = r.json()["setting"]
    assert setting == {"guild_id": cluster.guild_id, "level": "all", "muted_until": None, "suppress_everyone": True}
    assert await bob_on_b.dispatch("NOTIFICATION_SETTINGS_UPDATE") == setting
    assert await bob_on_a.dispatch("NOTIFICATION_SETTINGS_UPDATE") == setting
    await alice_on_b.no_dispatch("NOTIFICATION_SETTINGS_UPDATE")  # only the user's own connections
    r = await http.put(f"{cluster.b.url}{API}/users/@me/notification-settings/guilds/{cluster.guild_id}",
                       json={"level": "mentions"}, headers=bob.headers)  # back to the defaults for later tests
    assert r.status_code == 200, r.text


# ---------------------------------------------------------------- (e) a node stops (rolling restart)
# Stops node A for good: keep this test last in the module.


async def test_when_a_node_stops_its_clients_resume_on_another_without_losing_an_event(cluster, http, ws_clients):
    alice, bob, room = cluster.alice, cluster.bob, cluster.room
    alice_on_a = await identified(cluster.a, alice, ws_clients)
    before = await post_on(http, cluster.b, bob, room, "before the restart")
    await created(alice_on_a, before["id"])
    last_seq = alice_on_a.last_seq

    code = stop(cluster.a)  # SIGTERM: uvicorn closes the WebSocket with 1012, then the app stops
    assert code in (0, -signal.SIGTERM), cluster.a.stderr()
    assert await alice_on_a.wait_closed() == 1012
    # Node A is gone and alice has not resumed yet: nobody holds her gateway session right now.
    during = await post_on(http, cluster.b, bob, room, "while alice reconnects")

    alice_on_b = await connect_gateway(cluster.b, ws_clients)
    assert (await alice_on_b.recv())["op"] == 10
    await alice_on_b.send(6, {"token": alice.token, "session_id": alice_on_a.session_id, "seq": last_seq})
    frames = [await alice_on_b.recv(), await alice_on_b.recv()]
    assert [(f["t"], f["s"]) for f in frames] == [("MESSAGE_CREATE", last_seq + 1), ("RESUMED", last_seq + 2)]
    assert frames[0]["d"]["id"] == during["id"]
    assert frames[1]["d"] == {"replayed": 1}

