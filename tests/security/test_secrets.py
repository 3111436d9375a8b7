"""No key by default: a service without one refuses to start, the former public key is refused
wherever it is set, and a token forged with it opens nothing on a running platform."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

import grpc
import pytest

from client.platform import ROOT, Platform, use_key
from monopoly.v1 import matchmaking_pb2, matchmaking_pb2_grpc, table_pb2, table_pb2_grpc
from servicekit import auth

pytestmark = pytest.mark.integration

#: The key the platform once used when none was set: public, in its history.
FORMER_DEFAULT = "monopoly-dev-secret-change-me"


def _start(service: str, **env: str) -> subprocess.CompletedProcess[str]:
    dropped = ("TOKEN_SECRET", "TOKEN_SECRETS", "MONOPOLY_DEV", "NATS_PASSWORD", "NATS_PASSWORD_FILE", "NATS_ANONYMOUS")
    clean = {k: v for k, v in os.environ.items() if k not in dropped}
    clean.update(NATS_URL="nats://127.0.0.1:1", DATABASE_URL="postgresql://127.0.0.1:1/none", **env)
    clean["PYTHONPATH"] = os.pathsep.join([str(ROOT / "libs"), str(ROOT)])
    return subprocess.run(
        [sys.executable, "-m", f"services.{service}.main"],
        env=clean,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )


@pytest.mark.parametrize("service", ["table", "gateway"])
def test_a_service_without_a_key_refuses_to_start_and_says_why(service: str) -> None:
    run = _start(service)
    assert run.returncode != 0
    assert "TOKEN_SECRET is not set" in run.stderr, run.stderr[-2000:]
    assert "Traceback" not in run.stderr  # a message, not a crash


@pytest.mark.parametrize("service", ["table", "auction", "rating"])
def test_a_service_without_its_bus_password_refuses_to_start_and_says_why(service: str) -> None:
    """An open NATS would let any client of the bus pose as the service: said with NATS_ANONYMOUS=1."""
    run = _start(service, TOKEN_SECRET="3f9a1c7e5b2d40868e1f6a2c9d3b7e05")
    assert run.returncode != 0
    assert "set NATS_PASSWORD" in run.stderr and "NATS_ANONYMOUS=1" in run.stderr, run.stderr[-2000:]
    assert "Traceback" not in run.stderr


@pytest.mark.parametrize(("key", "why"), [(FORMER_DEFAULT, "public"), ("short", "at least 16"), ("k" * 32, "random")])
def test_the_former_default_key_a_short_one_and_a_pattern_are_refused_at_start(key: str, why: str) -> None:
    run = _start("table", TOKEN_SECRET=key)
    assert run.returncode != 0 and "TOKEN_SECRET refused" in run.stderr and why in run.stderr, run.stderr[-2000:]
    rotation = _start("table", TOKEN_SECRETS=f"new:{secrets.token_hex(16)},old:{key}")  # not in a rotation either
    assert rotation.returncode != 0 and why in rotation.stderr, rotation.stderr[-2000:]


def test_a_platform_makes_a_random_key_per_data_folder_readable_by_its_owner_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TOKEN_SECRET", raising=False)
    monkeypatch.delenv("TOKEN_SECRETS", raising=False)
    first = use_key(tmp_path / "a", {})
    assert (tmp_path / "a" / auth.SECRET_FILE).stat().st_mode & 0o777 == 0o600
    assert os.environ["TOKEN_SECRET"] == first.secrets[0]  # its services and its own clients use it
    monkeypatch.delenv("TOKEN_SECRET")
    assert use_key(tmp_path / "a", {}) == first  # the same folder again: the tokens it gave out still hold
    monkeypatch.delenv("TOKEN_SECRET")
    assert use_key(tmp_path / "b", {}) != first


async def test_tokens_forged_with_the_former_default_key_open_nothing(platform: Platform) -> None:
    forged = {
        "operator": auth.operator_token(FORMER_DEFAULT, "mallory"),
        "service": auth.service_token(FORMER_DEFAULT, "mallory"),
    }
    async with grpc.aio.insecure_channel(platform.table_target) as channel:
        table = table_pb2_grpc.TableServiceStub(channel)
        for token in forged.values():
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await table.CreateTable(
                    table_pb2.CreateTableRequest(mode="classic", players=["a", "b"]),
                    metadata=auth.metadata(token),
                    timeout=10,
                )
            assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED, caught.value.details()
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await table.JoinTable(
                table_pb2.JoinTableRequest(table_id="any", seat=0, service_token=forged["service"]), timeout=10
            )
        assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
    async with grpc.aio.insecure_channel(platform.target("matchmaking")) as channel:
        mm = matchmaking_pb2_grpc.MatchmakingServiceStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await mm.RegisterPlayer(
                matchmaking_pb2.RegisterPlayerRequest(display_name="mallory"),
                metadata=auth.metadata(forged["service"]),
                timeout=10,
            )
        assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
