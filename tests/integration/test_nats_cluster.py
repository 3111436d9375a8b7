"""The embedded 3-node JetStream cluster: a stream of 3 replicas loses nothing when a node is SIGKILLed.

The stream's leader is the node killed: the worst case (a new leader must be elected while
publishers and a durable consumer carry on). Publishes retry (with their Nats-Msg-Id, so a retry
whose first try did land is dropped) until the cluster answers; the consumer's acks go to whichever
node leads. Then the node comes back on its store and catches up.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import nats
import pytest
from nats.js import JetStreamContext
from nats.js.api import AckPolicy, ConsumerConfig, StreamConfig

from servicekit import bus, certs, natsauth
from servicekit import tls as tlskit
from servicekit.embedded import nats_cluster
from servicekit.settings import TLSSettings

pytestmark = pytest.mark.integration

STREAM = "CLUSTER_PROBE"


async def publish(js: JetStreamContext, n: int, deadline_s: float = 45.0) -> None:
    """Message `n`, acked by the stream; retried while the cluster elects a leader."""
    deadline = time.monotonic() + deadline_s
    while True:
        try:
            await js.publish(f"probe.{n}", str(n).encode(), stream=STREAM, headers={"Nats-Msg-Id": str(n)}, timeout=2)
            return
        except Exception:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.2)


async def consume(sub: JetStreamContext.PullSubscription, got: set[int], want: int, deadline_s: float = 45.0) -> None:
    """Fetch and ack until `want` distinct messages came."""
    deadline = time.monotonic() + deadline_s
    while len(got) < want:
        assert time.monotonic() < deadline, f"only {len(got)} of {want} messages consumed"
        try:
            messages = await sub.fetch(50, timeout=1)
        except Exception:  # a timeout, or no leader for a moment
            await asyncio.sleep(0.2)
            continue
        for msg in messages:
            got.add(int(msg.data))
            await msg.ack_sync(timeout=5)


async def test_a_replicated_stream_survives_sigkill_of_its_leader(tmp_path: Path) -> None:
    with nats_cluster(tmp_path, 3) as cluster:
        url = cluster.users.url_for(natsauth.ADMIN)
        assert len(natsauth.servers(url)) == 3  # clients know every node
        nc = await nats.connect(natsauth.servers(url), max_reconnect_attempts=-1, reconnect_time_wait=0.2)
        try:
            js = nc.jetstream(timeout=5)
            probe = StreamConfig(name=STREAM, subjects=["probe.*"], num_replicas=3)
            await bus.when_jetstream_answers(lambda: js.add_stream(probe), f"stream {STREAM}")  # as a service does
            info = await js.stream_info(STREAM)
            assert info.cluster is not None and len(info.cluster.replicas or []) == 2  # a leader and two followers
            config = ConsumerConfig(durable_name="probe", ack_policy=AckPolicy.EXPLICIT, ack_wait=5)
            sub = await js.pull_subscribe("probe.*", durable="probe", stream=STREAM, config=config)
            got: set[int] = set()

            for n in range(1, 51):
                await publish(js, n)
            await consume(sub, got, 25)

            leader = info.cluster.leader
            victim = next(i for i, node in enumerate(cluster.nodes) if node.name == leader)
            cluster.nodes[victim].kill()

            for n in range(51, 101):
                await publish(js, n)
            await consume(sub, got, 100)

            cluster.restart(victim)
            for n in range(101, 151):
                await publish(js, n)
            await consume(sub, got, 150)
            assert got == set(range(1, 151))  # nothing lost, nothing invented

            info = await js.stream_info(STREAM)
            assert info.state.messages == 150  # each once: the retries were dropped by their ids
            deadline = time.monotonic() + 30
            while True:  # the restarted node caught up with the stream
                info = await js.stream_info(STREAM)
                peers = info.cluster.replicas or [] if info.cluster else []
                if len(peers) == 2 and all(p.current for p in peers):
                    break
                assert time.monotonic() < deadline, f"replicas not current: {peers}"
                await asyncio.sleep(0.5)
        finally:
            await nc.close()


async def test_services_streams_take_the_replica_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """NATS_STREAM_REPLICAS=3 (what the launcher sets on a cluster): every stream a service owns has 3 copies."""
    monkeypatch.setenv("NATS_STREAM_REPLICAS", "3")
    with nats_cluster(tmp_path, 3) as cluster:
        nc, js = await natsauth.connect(cluster.users.url_for("auction"))
        try:
            info = await js.stream_info(bus.AUCTION_EVENTS.name)
            assert info.config.num_replicas == 3
            assert info.cluster is not None and len(info.cluster.replicas or []) == 2
        finally:
            await nc.close()


async def test_a_tls_cluster_routes_over_tls_and_serves_replicated_streams(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With TLS asked, client connections and routes both use it (mTLS); the nodes still form one cluster."""
    monkeypatch.setenv("NATS_STREAM_REPLICAS", "3")
    server = certs.issue(tmp_path / "pki", "nats")
    client = certs.issue(tmp_path / "pki", "client")
    block = {"cert_file": str(server.cert), "key_file": str(server.key), "ca_file": str(server.ca), "verify": True}
    with nats_cluster(tmp_path / "data", 3, tls=block) as cluster:
        url = cluster.users.url_for("casino")
        assert all(u.startswith("tls://") for u in natsauth.servers(url))
        context = tlskit.nats_context(TLSSettings(str(client.cert), str(client.key), str(client.ca)))
        nc, js = await natsauth.connect(url, tls=context)
        try:
            info = await js.stream_info(bus.CASINO_EVENTS.name)
            assert info.config.num_replicas == 3
            assert info.cluster is not None and len(info.cluster.replicas or []) == 2
        finally:
            await nc.close()
    config = (tmp_path / "data" / "nats-cluster" / "n1" / "nats.conf").read_text()
    assert '"routes"' in config and '"verify": true' in config
