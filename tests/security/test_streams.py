"""`monopoly streams`: the operator, as the bus's admin, sees how each stream differs from its spec and
brings it back; a service's own user only reports the difference (it may not change a stream)."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys

import pytest

from servicekit import bus, natsauth
from servicekit.natsauth import BusUsers

pytestmark = pytest.mark.integration


def streams(users: BusUsers, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **users.env_for(natsauth.ADMIN)}
    return subprocess.run(
        [sys.executable, "-m", "monopoly_cli", "streams", *args], capture_output=True, text=True, env=env, timeout=60
    )


async def test_an_operator_brings_a_stream_that_drifted_back_to_its_spec(users: BusUsers) -> None:
    spec = bus.TRADE_EVENTS
    nc, admin = await natsauth.connect(users.url_for(natsauth.ADMIN))
    try:
        info = await admin.stream_info(spec.name)
        await admin.update_stream(dataclasses.replace(info.config, duplicate_window=info.config.duplicate_window * 2))
        service_nc, own = await natsauth.connect(users.url_for("trade"))  # the trade service's start
        try:
            drift = await bus.ensure_stream(own, spec, update=False)
        finally:
            await service_nc.close()
        assert [d for d in drift if d.startswith("duplicate_window")], drift

        checked = streams(users, "--check")
        assert checked.returncode == 1, checked.stderr
        assert f"{spec.name}: duplicate_window" in checked.stdout
        assert f"{bus.TABLE_EVENTS.name}: at its spec" in checked.stdout

        applied = streams(users)
        assert applied.returncode == 0, applied.stdout + applied.stderr
        assert f"{spec.name}: brought to its spec" in applied.stdout
        assert not bus.stream_drift((await admin.stream_info(spec.name)).config, bus.stream_config(spec))
        assert streams(users, "--check").returncode == 0
    finally:
        await nc.close()


def test_out_of_reach_is_exit_code_2() -> None:
    env = {**os.environ, "NATS_URL": "nats://127.0.0.1:9", "NATS_USER": "admin", "NATS_PASSWORD": "x"}
    done = subprocess.run(
        [sys.executable, "-m", "monopoly_cli", "streams"], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 2 and "monopoly streams:" in done.stderr
