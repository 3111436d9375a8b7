"""A real Prometheus scrapes a running platform: the key series exist with the right labels, the
dashboards' SQL runs on the real schema, the outbox alert fires when JetStream goes away, and no log
line carries a token or a secret.

The platform runs on servers of its own (NATS is stopped here), in its own xdist group. Prometheus
comes from Debian's `prometheus` package (.ci/run installs it); without it this module is skipped.
The rules are the repository's (deploy/prometheus/rules) with every `for:` shortened to 1 s, so an
alert fires within seconds of its expression holding instead of minutes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import secrets
import shutil
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg
import pytest
import yaml

from client import BotTable, SubProtocolStubs, connect
from client.platform import Platform
from monopoly.v1 import table_pb2
from servicekit import auth
from servicekit.embedded import free_port, nats_server, postgres_server

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
PROMETHEUS = shutil.which("prometheus")

pytestmark = [
    pytest.mark.integration,
    pytest.mark.xdist_group("scrape"),
    pytest.mark.skipif(PROMETHEUS is None, reason="no prometheus binary (apt-get install prometheus; .ci/run does it)"),
]

SERVICES = ("table", "auction", "trade", "casino", "rating", "matchmaking", "gateway")
TOKEN_SECRET = "scrape-test-" + secrets.token_hex(16)


@dataclass
class Running:
    platform: Platform
    prometheus: str  # base URL
    db_url: str
    stop_nats: Any
    tokens: list[str]
    table_ids: list[str]


def query(base: str, promql: str) -> list[dict[str, Any]]:
    url = f"{base}/api/v1/query?" + urllib.parse.urlencode({"query": promql})
    with urllib.request.urlopen(url, timeout=10) as reply:
        body = json.load(reply)
    assert body["status"] == "success", body
    return list(body["data"]["result"])


async def until(what: str, check: Any, timeout: float = 90.0) -> Any:
    """Poll `check()` (off the event loop) until it returns something truthy."""
    return await until_async(what, lambda: asyncio.to_thread(check), timeout)


async def until_async(what: str, check: Any, timeout: float = 90.0) -> Any:
    """Await `check()` until it returns something truthy."""
    deadline = time.monotonic() + timeout
    while not (result := await check()):
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not seen within {timeout:.0f} s")
        await asyncio.sleep(0.5)
    return result


@contextlib.contextmanager
def prometheus(data: Path, targets: dict[str, int]) -> Iterator[str]:
    rules = (DEPLOY / "prometheus" / "rules" / "platform.yml").read_text()
    (data / "rules.yml").write_text(re.sub(r"^(\s+)for: \S+$", r"\1for: 1s", rules, flags=re.M))
    config = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "rule_files": [str(data / "rules.yml")],
        "scrape_configs": [
            {"job_name": name, "static_configs": [{"targets": [f"127.0.0.1:{port}"]}]} for name, port in targets.items()
        ],
    }
    (data / "prometheus.yml").write_text(yaml.safe_dump(config))
    port = free_port()
    assert PROMETHEUS is not None
    with open(data / "prometheus.log", "ab") as log:
        proc = subprocess.Popen(
            [
                PROMETHEUS,
                f"--config.file={data / 'prometheus.yml'}",
                f"--storage.tsdb.path={data / 'tsdb'}",
                f"--web.listen-address=127.0.0.1:{port}",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            with contextlib.suppress(OSError), urllib.request.urlopen(f"{base}/-/ready", timeout=2):
                break
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"prometheus did not start; see {data / 'prometheus.log'}")
            time.sleep(0.2)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


@contextlib.contextmanager
def signing_with(key: str) -> Iterator[None]:
    """This process's clients sign with `key` (this module's platform's) meanwhile; the key of a
    platform started earlier in the same worker is put back afterwards."""
    saved = {k: os.environ.pop(k) for k in ("TOKEN_SECRET", "TOKEN_SECRETS") if k in os.environ}
    os.environ["TOKEN_SECRET"] = key
    try:
        yield
    finally:
        os.environ.pop("TOKEN_SECRET", None)
        os.environ.update(saved)


@pytest.fixture(scope="module")
async def running() -> AsyncIterator[Running]:
    with contextlib.ExitStack() as stack:
        data = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="monopoly-scrape-")))
        nats_stack = contextlib.ExitStack()
        stack.callback(nats_stack.close)
        bus = nats_stack.enter_context(nats_server(data / "nats"))
        db_url = stack.enter_context(postgres_server(data / "pg"))
        env = {
            "LOG_FORMAT": "json",
            "TOKEN_SECRET": TOKEN_SECRET,
            "RATING_MIN_REAL_MINUTES": "0.005",
            "MATCHMAKING_SMALL_TABLE_WAIT_S": "600",
        }
        platform = Platform(
            bus.url, db_url, data / "services", clock_scale=60, services=SERVICES, extra_env=env, bus=bus
        )
        await platform.start()
        stack.enter_context(signing_with(TOKEN_SECRET))
        try:
            targets = {n: int(p.env[f"{n.upper()}_METRICS_PORT"]) for n, p in platform.processes.items()}
            base = stack.enter_context(prometheus(data, targets))
            service_token = auth.service_token(TOKEN_SECRET, "bots")
            channel, stub = connect(platform.table_target)
            services = SubProtocolStubs.connect({n: platform.target(n) for n in platform.external})
            games = [
                BotTable(stub, mode="classic", players=3, seed=i + 1, clock_scale=60, services=services,
                         service_token=service_token)
                for i in range(2)
            ]  # fmt: skip
            for g in games:
                await g.create()  # one call: CreateTable gives the seats' tokens
                join = table_pb2.JoinTableRequest(table_id=g.table_id, seat=0, service_token=service_token)
                assert (await stub.JoinTable(join, timeout=30)).seat_token == g.tokens[0]
            await asyncio.wait_for(asyncio.gather(*(g.play() for g in games)), 300)
            tokens = [service_token, *(t for g in games for t in g.tokens.values())]
            yield Running(platform, base, db_url, nats_stack.close, tokens, [g.table_id for g in games])
            await services.close()
            await channel.close()
        finally:
            # NATS may be gone by now, so a clean stop could wait on reconnects: the services are killed
            # (the crash they are built to survive), their logs stay for the last test.
            for process in platform.processes.values():
                await process.kill()


def _labels(results: list[dict[str, Any]], label: str) -> set[str]:
    return {r["metric"].get(label, "") for r in results}


async def test_the_key_series_are_scraped_with_their_labels(running: Running) -> None:
    base = running.prometheus
    # every service scraped and up
    up = await until("every service up", lambda: (r := query(base, "up == 1")) and len(r) == len(SERVICES) and r)
    assert _labels(up, "job") == set(SERVICES)
    # the table service: commands by type and outcome, latencies, tables by mode and status
    commands = await until("commands", lambda: query(base, 'table_commands_total{job="table", outcome="ok"}'))
    assert {"Roll", "EndTurn"} <= _labels(commands, "type")
    finished = await until("finished tables", lambda: query(base, 'table_tables{status="finished"} == 2'))
    assert _labels(finished, "mode") == {"classic"}
    for histogram in ("table_command_seconds", "table_commit_seconds"):
        (count,) = query(base, f"sum({histogram}_count)")
        assert float(count["value"][1]) > 50, histogram
    # gRPC calls by method and code; the outbox of every service; consumers' lag from JetStream
    handled = query(base, 'grpc_server_handled_total{job="table", grpc_code="OK"}')
    assert {"CreateTable", "JoinTable"} <= _labels(handled, "grpc_method")
    # the streams are counted when they end (a watch with its game, a Play stream when the bots close it)
    streams = query(base, 'grpc_server_handled_total{job="table", grpc_method=~"Play|WatchTable"}')
    assert _labels(streams, "grpc_method") == {"Play", "WatchTable"}
    assert not _labels(streams, "grpc_code") & {"INTERNAL", "UNKNOWN"}, _labels(streams, "grpc_code")
    pending = await until("outbox gauges", lambda: (r := query(base, "outbox_pending_messages")) and len(r) >= 5 and r)
    assert {"table", "auction", "trade", "casino", "matchmaking"} <= _labels(pending, "service")
    lag = await until("consumer lag", lambda: query(base, "consumer_pending_messages"))
    assert any(c.startswith("table") for c in _labels(lag, "consumer")), _labels(lag, "consumer")
    assert _labels(query(base, "consumer_ack_pending_messages"), "consumer") == _labels(lag, "consumer")
    # matchmaking's queues, the casino's pools, the rating's verdicts of the two games
    assert {"classic", "speed", "duel"} <= _labels(query(base, "matchmaking_waiting_tickets"), "mode")
    assert query(base, "casino_jackpot_pool_dollars")
    verdicts = await until("verdicts", lambda: query(base, "sum(rating_games_total) >= 2"))
    assert verdicts
    # the recorded error ratio is 0 for the table: nothing failed. A service with no call in the window has
    # no ratio, and the games may have ended before the counters' first scrape, so calls are made meanwhile.
    channel, stub = connect(running.platform.table_target)
    try:

        async def ratio() -> list[dict[str, Any]]:
            await stub.GetTable(table_pb2.GetTableRequest(table_id=running.table_ids[0], without_state=True))
            return await asyncio.to_thread(query, base, 'job:grpc_server_errors:ratio_rate5m{job="table"}')

        recorded = await until_async("error ratio", ratio)
    finally:
        await channel.close()
    assert float(recorded[0]["value"][1]) == 0.0
    assert not query(base, 'ALERTS{alertstate="firing"}')


async def test_the_table_dashboard_queries_run_on_the_real_schema(running: Running) -> None:
    dashboard = json.loads((DEPLOY / "grafana" / "dashboards" / "table.json").read_text())
    conn = await asyncpg.connect(running.db_url)
    try:
        for panel in dashboard["panels"]:
            for target in panel["targets"]:
                sql = target["rawSql"].replace("$table_id", running.table_ids[0])
                sql = re.sub(r"\$__timeFilter\((\w+)\)", r"\1 > now() - interval '1 hour'", sql)
                rows = await conn.fetch(sql)
                assert rows, panel["title"]
        variable = dashboard["templating"]["list"][0]["query"]
        assert {r[0] for r in await conn.fetch(variable)} >= set(running.table_ids)
    finally:
        await conn.close()


async def test_the_outbox_alert_fires_when_jetstream_is_gone(running: Running) -> None:
    base = running.prometheus
    running.stop_nats()  # the relay can publish nothing now; commits go on
    channel, stub = connect(running.platform.table_target)
    try:
        reply = await stub.CreateTable(table_pb2.CreateTableRequest(mode="classic", players=["a", "b"]), timeout=30)
        assert reply.table_id
    finally:
        await channel.close()

    def firing() -> list[dict[str, Any]]:
        return query(base, 'ALERTS{alertname="OutboxRelayStalled", alertstate="firing"}')

    alerts = await until("OutboxRelayStalled firing", firing, timeout=90)
    assert "table" in _labels(alerts, "service")
    (age,) = query(base, 'outbox_oldest_pending_age_seconds{service="table"}')
    assert float(age["value"][1]) > 10
    assert float(query(base, 'outbox_pending_messages{service="table"}')[0]["value"][1]) >= 1


async def test_logs_are_json_lines_with_no_token_or_secret(running: Running) -> None:
    logs = {name: p.log_path.read_text(errors="replace") for name, p in running.platform.processes.items()}
    secrets_seen = [TOKEN_SECRET, *running.tokens]
    structured = 0
    for name, text in logs.items():
        for line in text.splitlines():
            for secret in secrets_seen:
                assert secret not in line, f"{name}.log shows a secret: {line[:200]}"
            if line.startswith("{"):
                record = json.loads(line)
                assert {"ts", "level", "logger", "message", "service", "instance"} <= record.keys(), line
                assert record["service"] == name
                structured += 1
    assert structured >= len(SERVICES)
