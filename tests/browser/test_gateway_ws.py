"""The gateway's WebSocket against bad input, on a real platform: every message checked (size, schema,
rate), malformed ones answered with a clear error on that connection only, the browser never trusted
with what the table decides; and a reconnect resumes from the last seq it had."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import aiohttp
import pytest

from client.platform import Platform
from engine import preset
from services.gateway import api

pytestmark = pytest.mark.integration
TIMEOUT = 60.0


class Browser:
    """A WebSocket client speaking the gateway's protocol: requests by id, pushes kept in order."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.ws = ws
        self.next_id = 0
        self.answers: dict[Any, dict[str, Any]] = {}
        self.anonymous: list[dict[str, Any]] = []  # answers to messages too broken to have an id
        self.pushes: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for msg in self.ws:
            data = json.loads(msg.data)
            if "type" in data:
                await self.pushes.put(data)
            elif data.get("id") is None:
                self.anonymous.append(data)
            else:
                self.answers[data["id"]] = data

    async def send(self, op: str, **fields: Any) -> dict[str, Any]:
        self.next_id += 1
        await self.ws.send_str(json.dumps({"id": self.next_id, "op": op, **fields}))
        return await self.answer(self.next_id)

    async def answer(self, msg_id: Any) -> dict[str, Any]:
        async with asyncio.timeout(TIMEOUT):
            while msg_id not in self.answers:
                await asyncio.sleep(0.01)
        return self.answers.pop(msg_id)

    async def push(self, kind: str) -> dict[str, Any]:
        async with asyncio.timeout(TIMEOUT):
            while True:
                item = await self.pushes.get()
                if item["type"] == kind:
                    return item


async def open_browser(session: aiohttp.ClientSession, platform: Platform) -> Browser:
    return Browser(await session.ws_connect(platform.lobby_url + "ws"))


async def seated_player(b: Browser, name: str) -> tuple[str, str, str]:
    """A guest queued for Speed with bots filling the table: (player token, table id, seat token)."""
    me = await b.send("register", name=name)
    assert me["ok"], me
    token = me["result"]["player_token"]
    queued = await b.send("enqueue", player_token=token, mode="speed", bot_fill=True)
    assert queued["ok"], queued
    while True:
        status = (await b.push("queue"))["status"]
        if status["status"] == "matched":
            return token, status["match"]["table_id"], status["match"]["seat_token"]


async def test_malformed_messages_get_clear_errors_and_touch_no_other_session(gateway_platform: Platform) -> None:
    async with aiohttp.ClientSession() as session:
        bad, good = await open_browser(session, gateway_platform), await open_browser(session, gateway_platform)
        await bad.ws.send_str("{not json")
        await bad.ws.send_bytes(b"\x00\x01")
        await bad.ws.send_str(json.dumps({"id": 7, "op": "register", "name": "x" * (api.MAX_MESSAGE_BYTES + 1)}))
        await bad.ws.send_str(json.dumps({"id": 8, "op": "launch_missiles"}))
        await bad.ws.send_str(json.dumps({"id": 9, "op": "register", "name": "ok", "admin": True}))
        await bad.ws.send_str(json.dumps({"id": 10, "op": "enqueue", "player_token": "t", "mode": "chess"}))
        await bad.ws.send_str(json.dumps({"id": 11, "op": "watch", "table_id": "../../etc", "token": "t"}))
        for msg_id, says in ((7, "larger than"), (8, "op"), (9, "admin"), (10, "mode"), (11, "table_id")):
            answer = await bad.answer(msg_id)
            assert not answer["ok"] and answer["error"]["code"] == "INVALID_ARGUMENT", answer
            assert says in answer["error"]["message"], answer
        async with asyncio.timeout(TIMEOUT):
            while len(bad.anonymous) < 2:
                await asyncio.sleep(0.01)
        assert {a["error"]["code"] for a in bad.anonymous} == {"INVALID_ARGUMENT"}
        assert any("binary" in a["error"]["message"] for a in bad.anonymous)
        # The connection that sent all that is still served, and so is everybody else.
        assert (await bad.send("register", name="still-here"))["ok"]
        assert (await good.send("register", name="other"))["ok"]
        await bad.ws.close()
        await good.ws.close()


async def test_a_flood_is_rate_limited_and_a_persistent_abuser_alone_is_disconnected(
    gateway_platform: Platform,
) -> None:
    async with aiohttp.ClientSession() as session:
        flood, other = await open_browser(session, gateway_platform), await open_browser(session, gateway_platform)
        ids = list(range(1000, 1000 + 3 * api.BURST))
        for i in ids:
            await flood.ws.send_str(json.dumps({"id": i, "op": "lobby"}))
        answers = [await flood.answer(i) for i in ids]
        limited = [a for a in answers if not a["ok"] and a["error"]["code"] == "RESOURCE_EXHAUSTED"]
        assert limited and len(limited) <= len(ids) - api.BURST, len(limited)
        assert all(a["ok"] for a in answers[: api.BURST // 2])  # the burst itself is served
        await asyncio.sleep(1.0)  # the bucket refills: the same connection is served again
        assert (await flood.send("lobby"))["ok"]
        # Refused message after refused message: that connection is closed (1008), no other.
        for _ in range(api.MAX_STRIKES + api.BURST):
            if flood.ws.closed:
                break
            with_error = flood.ws.send_str("garbage")
            try:
                await with_error
            except ConnectionResetError:
                break
        async with asyncio.timeout(TIMEOUT):
            await flood.reader
        assert flood.ws.close_code == 1008
        assert (await other.send("lobby"))["ok"]
        await other.ws.close()


async def test_the_browser_is_never_trusted_with_what_the_table_decides(gateway_platform: Platform) -> None:
    async with aiohttp.ClientSession() as session:
        b = await open_browser(session, gateway_platform)
        player_token, table_id, seat_token = await seated_player(b, "mallory")
        watched = await b.send("watch", table_id=table_id, token=seat_token)
        assert watched["ok"] and watched["result"]["role"] == "player"
        seat = watched["result"]["seat"]

        async def command(token: str, body: dict[str, Any]) -> dict[str, Any]:
            return await b.send("command", table_id=table_id, seat_token=token, command=body)

        # Naming a seat, even one's own, is refused: the seat is the token's.
        named = await command(seat_token, {"type": "Roll", "seat": (seat + 1) % 4})
        assert named["error"]["code"] == "INVALID_ARGUMENT" and "seat token" in named["error"]["message"]
        # The platform's own commands are not a browser's to send.
        for system in ({"type": "ExecuteTrade", "trade_id": 1}, {"type": "Tick", "now": 10**9}):
            refused = await command(seat_token, system)
            assert refused["error"]["code"] == "INVALID_ARGUMENT", refused
        wrong = await command(seat_token, {"type": "Build", "square": "three"})
        assert wrong["error"]["code"] == "INVALID_ARGUMENT" and "Build" in wrong["error"]["message"]
        # Tokens: a forged one, a player token (not a seat's), another table's.
        forged = await command(seat_token[:-4] + "AAAA", {"type": "Roll"})
        assert forged["error"]["code"] == "UNAUTHENTICATED"
        assert (await command(player_token, {"type": "Roll"}))["error"]["code"] == "PERMISSION_DENIED"
        other = await b.send("command", table_id="0000000000000000", seat_token=seat_token, command={"type": "Roll"})
        assert other["error"]["code"] == "PERMISSION_DENIED"
        # A well-formed command the rules refuse: the table says no, with the rule, and nothing changes.
        # Buying with no offer open is never legal at the start (P1), whoever is to act.
        before = (await b.push("table"))["view"]["seq"]
        buy = await command(seat_token, {"type": "BuyProperty"})
        assert not buy["ok"] and buy["error"]["code"] == "FAILED_PRECONDITION", buy
        assert buy["error"]["rule_id"] in ("P1", "G2"), buy
        assert buy["error"]["rule_id"] in buy["error"]["message"]
        assert before >= 1
        await b.ws.close()


async def test_a_reconnect_resumes_from_the_last_seq(gateway_platform: Platform) -> None:
    async with aiohttp.ClientSession() as session:
        first = await open_browser(session, gateway_platform)
        _, table_id, seat_token = await seated_player(first, "resumer")
        assert (await first.send("watch", table_id=table_id, token=seat_token))["ok"]
        snapshot = await first.push("table")
        assert snapshot["snapshot"] and len(snapshot["board"]) == 40
        seen = snapshot["view"]["seq"]
        while seen < snapshot["view"]["seq"] + 20:  # the bots move on; the browser keeps up to here
            update = await first.push("table")
            seen = update["view"]["seq"]
        await first.ws.close()  # the connection drops, the table moves on meanwhile...
        lookout = await open_browser(session, gateway_platform)
        assert (await lookout.send("watch", table_id=table_id, token=seat_token))["ok"]
        while (await lookout.push("table"))["view"]["seq"] < seen + 5:
            pass
        again = await open_browser(session, gateway_platform)  # ...and the browser comes back (any replica)
        assert (await again.send("watch", table_id=table_id, token=seat_token, from_seq=seen))["ok"]
        resumed = await again.push("table")
        assert resumed["snapshot"]
        missed = [e["seq"] for e in resumed["events"]]
        assert missed and missed == list(range(seen + 1, resumed["view"]["seq"] + 1)), (seen, missed[:5])
        await again.ws.close()
        await lookout.ws.close()


async def test_a_browser_loses_no_event_when_the_gateway_or_the_table_service_restarts(
    gateway_platform: Platform,
) -> None:
    async with aiohttp.ClientSession() as session:
        b = await open_browser(session, gateway_platform)
        _, table_id, seat_token = await seated_player(b, "phoenix")
        assert (await b.send("watch", table_id=table_id, token=seat_token))["ok"]
        snapshot = await b.push("table")
        seen = snapshot["view"]["seq"]
        while seen < snapshot["view"]["seq"] + 10:
            seen = (await b.push("table"))["view"]["seq"]

        # The gateway is killed (its sessions with it) and started again: the browser reconnects from its seq.
        gateway = gateway_platform.processes["gateway"]
        await gateway.kill()
        await gateway.start(timeout=120)
        async with asyncio.timeout(TIMEOUT):
            await b.reader  # the old connection ended with the process
        b = await open_browser(session, gateway_platform)
        assert (await b.send("watch", table_id=table_id, token=seat_token, from_seq=seen))["ok"]
        resumed = await b.push("table")
        assert resumed["snapshot"]
        missed = [e["seq"] for e in resumed["events"]]
        assert missed == list(range(seen + 1, resumed["view"]["seq"] + 1)), (seen, missed[:5])
        last = resumed["view"]["seq"]

        # The table service is killed while the browser watches: the gateway follows the table again
        # from its last seq, and the browser's events go on with no gap and no repeat.
        table = gateway_platform.table
        await table.kill()
        await table.start(timeout=120)
        seqs: list[int] = []
        async with asyncio.timeout(TIMEOUT * 2):
            while not seqs or seqs[-1] < last + 10:
                update = await b.push("table")
                seqs += [e["seq"] for e in update["events"]]
                if update["view"]["finished"]:
                    break
        assert seqs and seqs == list(range(last + 1, seqs[-1] + 1)), (last, seqs[:5])
        await b.ws.close()


async def test_E6_the_turn_deadline_of_a_snapshot_is_on_the_tables_clock_scale(gateway_platform: Platform) -> None:
    """A browser that opens (or reopens) a table gets the turn's deadline in wall time at the table's
    clock scale (10 here), not at scale 1 until the next event comes."""
    async with aiohttp.ClientSession() as session:
        b = await open_browser(session, gateway_platform)
        _, table_id, seat_token = await seated_player(b, "clockwatcher")
        assert (await b.send("watch", table_id=table_id, token=seat_token))["ok"]
        snapshot = await b.push("table")
        assert snapshot["snapshot"]
        turn_ms = preset("speed").clock.turn_seconds * 1000
        left_ms = snapshot["deadline_unix_ms"] - time.time() * 1000
        assert 0 < left_ms <= turn_ms / 10 + 1000, (left_ms, turn_ms)
        await b.ws.close()


async def test_a_page_that_reconnects_while_queued_follows_its_ticket_again(gateway_platform: Platform) -> None:
    """The ticket's statuses went to the connection that queued; after a reconnect `watch_queue`
    follows it again, so the match (or, here, the player leaving the queue) reaches the new page."""
    async with aiohttp.ClientSession() as session:
        first = await open_browser(session, gateway_platform)
        me = await first.send("register", name="requeued")
        token = me["result"]["player_token"]
        assert (await first.send("enqueue", player_token=token, mode="team"))["ok"]
        assert (await first.push("queue"))["status"]["mode"] == "team"
        await first.ws.close()
        again = await open_browser(session, gateway_platform)
        assert (await again.send("watch_queue", player_token=token))["ok"]
        status = (await again.push("queue"))["status"]
        assert status["mode"] == "team" and status["status"] in ("waiting", "matched"), status
        if status["status"] == "waiting":
            assert (await again.send("cancel", player_token=token))["ok"]
            assert (await again.push("queue"))["status"]["status"] == "cancelled"
        await again.ws.close()


async def test_R4_friends_queueing_with_one_party_code_sit_on_one_team(gateway_platform: Platform) -> None:
    """Two guests queue for Team 2v2 with the same party code from their own pages: seated at one
    table as teammates (X4: seats 0+2 or 1+3), bots filling the other team."""
    code = f"pals-{time.monotonic_ns()}"
    async with aiohttp.ClientSession() as session:
        pages = [await open_browser(session, gateway_platform) for _ in range(2)]
        matches = []
        for i, page in enumerate(pages):
            token = (await page.send("register", name=f"pal-{i}"))["result"]["player_token"]
            queued = await page.send(
                "enqueue", player_token=token, mode="team", bot_fill=True, party_id=code, party_size=2
            )
            assert queued["ok"] and queued["result"]["party_id"] == code, queued
        for page in pages:
            while (status := (await page.push("queue"))["status"])["status"] != "matched":
                pass
            matches.append(status["match"])
        assert matches[0]["table_id"] == matches[1]["table_id"]
        seats = [m.get("seat", 0) for m in matches]
        assert seats[0] != seats[1] and seats[0] % 2 == seats[1] % 2, seats
        bad = await pages[0].send("enqueue", player_token="x", mode="team", party_id="p", party_size=9)
        assert not bad["ok"] and bad["error"]["code"] == "INVALID_ARGUMENT", bad
        for page in pages:
            await page.ws.close()


async def test_one_client_address_holds_a_bounded_number_of_connections(gateway_platform: Platform) -> None:
    """One machine opening hundreds of connections (each with its own message rate, spectator streams
    of its own) is refused past `GATEWAY_CONNECTIONS_PER_CLIENT` with HTTP 429; a closed one frees a place."""
    url = gateway_platform.lobby_url + "ws"
    async with aiohttp.ClientSession() as session:
        held = [await session.ws_connect(url) for _ in range(api.CONNECTIONS_PER_CLIENT)]
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await session.ws_connect(url)
        assert refused.value.status == 429
        await held.pop().close()
        for _ in range(50):  # the gateway sees the close
            try:
                held.append(await session.ws_connect(url))
                break
            except aiohttp.WSServerHandshakeError:
                await asyncio.sleep(0.05)
        assert len(held) == api.CONNECTIONS_PER_CLIENT
        for ws in held:
            await ws.close()
