"""The security suite: each probe of an outsider against the platform, repeated until refused.

It runs on real NATS and Postgres like the integration tests, with a platform of its own (the
integration suite's fixtures, imported here, so it starts its own servers in its own xdist group).
"""

from __future__ import annotations

import pytest

from servicekit.natsauth import BusUsers
from tests.integration.conftest import bus_users, embedded, js, platform, pool, server_urls, stub

__all__ = ["bus_users", "embedded", "js", "platform", "pool", "server_urls", "stub", "users"]


@pytest.fixture(scope="module")
def users(bus_users: BusUsers | None) -> BusUsers:
    """The platform's bus users and their passwords (the probes log in as each)."""
    if bus_users is None:
        pytest.skip("NATS_URL names a server of its own: its users are not the platform's")
    return bus_users


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/security" in str(item.fspath).replace("\\", "/"):
            item.add_marker(pytest.mark.integration)
            if item.get_closest_marker("xdist_group") is None:
                item.add_marker(pytest.mark.xdist_group("security"))
