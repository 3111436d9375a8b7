"""The bus users' permissions (servicekit.natsauth) agree with what the services publish and consume."""

from __future__ import annotations

import importlib
import json
import stat
from pathlib import Path
from typing import Any

from analytics.archive import DURABLE as ARCHIVE_DURABLE
from analytics.export import DURABLE as EXPORT_DURABLE
from servicekit import bus, natsauth, settings

ROOT = Path(__file__).resolve().parents[3]
BUS_SERVICES = ("table", "auction", "trade", "casino", "matchmaking", "rating")


def consumed_by(service: str) -> set[tuple[str, str]]:
    """(stream, durable) of every consumer the service registers."""
    handlers = importlib.import_module(f"services.{service}.handlers")
    group = handlers.build_consumers(None)  # registering reads nothing of the app
    return {(c.stream.name, c.durable) for c in group.consumers}


def test_every_service_reads_exactly_the_consumers_its_user_may_read() -> None:
    for service in BUS_SERVICES:
        assert set(natsauth.ROLES[service].consumes) == consumed_by(service), service
    analytics = natsauth.ROLES[natsauth.ANALYTICS]
    assert {d for _, d in analytics.consumes} == {EXPORT_DURABLE, ARCHIVE_DURABLE}


def test_every_stream_has_one_owner_and_every_consumed_stream_an_owner() -> None:
    owners: dict[str, list[str]] = {}
    for role in natsauth.ROLES.values():
        for stream in role.owns:
            owners.setdefault(stream, []).append(role.user)
    assert {s.name for s in bus.STREAMS} == set(owners)
    assert all(len(users) == 1 for users in owners.values()), owners
    for role in natsauth.ROLES.values():
        for stream, _ in role.consumes:
            assert stream in owners, (role.user, stream)


def test_each_subject_is_published_by_its_owner_only() -> None:
    """Results (auction and casino `settled`) come only from the service that owns the subject."""
    publishers = {r.user: set(r.publishes) for r in natsauth.ROLES.values()}
    assert publishers["casino"] == {bus.casino_subject()}
    assert publishers["auction"] == {bus.auction_subject()}
    assert publishers["trade"] == {bus.trade_subject()}
    assert publishers["matchmaking"] == {"monopoly.match.*.*"}
    assert publishers["table"] == {"monopoly.table.*.events", "monopoly.signals.*.*"}
    assert publishers["rating"] == publishers[natsauth.ANALYTICS] == set()
    for stream in bus.STREAMS:  # a stream's subjects are published by the stream's owner
        (owner,) = (r for r in natsauth.ROLES.values() if stream.name in r.owns)
        assert set(stream.subjects) <= set(owner.publishes), stream.name


def test_permissions_are_narrow() -> None:
    """No wildcard over the JetStream API or over another user's inbox; no purge, no delete of a stream."""
    for role in natsauth.ROLES.values():
        perms = role.permissions()
        assert perms["subscribe"]["allow"] == [f"_INBOX.{role.user}.>"]
        published = perms["publish"]["allow"]
        assert not any(p in ("$JS.API.>", ">", "$JS.>", "_INBOX.>") for p in published), role.user
        assert not any(".PURGE." in p or ".STREAM.DELETE." in p or p.startswith("_INBOX") for p in published)
        # not even its own stream: its settings could republish onto another's subjects (docs/SECURITY.md)
        assert not any(".STREAM.UPDATE." in p for p in published), role.user
        for subject in published:
            if subject.startswith("$JS.API.CONSUMER."):
                assert any(f".{stream}" in subject for stream, _ in role.consumes) or any(
                    subject.endswith(f".{stream}") for stream in role.reads
                ), subject
    analytics = natsauth.ROLES[natsauth.ANALYTICS].permissions()["publish"]["allow"]
    assert all(s.startswith(("$JS.API.", "$JS.ACK.", "$JS.FC.")) for s in analytics)  # reads, publishes nothing
    assert all(bus.TABLE_EVENTS.name in s for s in analytics)


def test_passwords_are_random_kept_private_and_stable(tmp_path: Path) -> None:
    path = tmp_path / "users.json"
    first = natsauth.load_or_create(path)
    assert set(first) == set(natsauth.USERS) and len(set(first.values())) == len(first)
    assert all(len(p) >= 40 for p in first.values())
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert natsauth.load_or_create(path) == first  # a restart on the same data dir keeps them
    other = natsauth.load_or_create(tmp_path / "other.json")
    assert not set(other.values()) & set(first.values())


def test_the_server_config_lists_every_user_with_its_permissions(tmp_path: Path) -> None:
    passwords = natsauth.generate()
    config: dict[str, Any] = json.loads(natsauth.server_config("127.0.0.1:4222", tmp_path, passwords))
    users = {u["user"]: u for u in config["authorization"]["users"]}
    assert set(users) == set(natsauth.USERS)
    assert "permissions" not in users[natsauth.ADMIN]
    for name, role in natsauth.ROLES.items():
        assert users[name]["permissions"] == role.permissions()
        assert users[name]["password"] == passwords[name]
    assert "authorization" not in json.loads(natsauth.server_config("127.0.0.1:4222", tmp_path, None))


def test_urls_and_settings_carry_the_credentials(tmp_path: Path) -> None:
    url = natsauth.with_credentials("nats://other:x@127.0.0.1:4222", "table", "p/w")
    assert url == "nats://table:p%2Fw@127.0.0.1:4222"
    assert natsauth.user_of(url) == "table" and natsauth.user_of("nats://h:1") == ""
    assert natsauth.user_of(url, "casino", "pw") == "casino"
    assert natsauth.without_credentials(url) == "nats://127.0.0.1:4222"
    key = {"TOKEN_SECRET": "3f9a1c7e5b2d40868e1f6a2c9d3b7e05"}
    s = importlib.import_module("services.casino.settings").common({"NATS_PASSWORD": "secret", **key})
    assert (s.nats_user, s.nats_password) == ("casino", "secret")
    secret = tmp_path / "pw"
    secret.write_text("from-a-file\n")
    assert settings.secret_value({"NATS_PASSWORD_FILE": str(secret)}, "NATS_PASSWORD") == "from-a-file"
    assert natsauth.streams_owned("casino") == (bus.CASINO_EVENTS.name,)
    assert natsauth.streams_owned("") == natsauth.streams_owned(natsauth.ADMIN) == tuple(s.name for s in bus.STREAMS)
