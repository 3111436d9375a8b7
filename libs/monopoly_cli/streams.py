"""`monopoly streams [--check]`: the bus's JetStream streams against their spec (`servicekit.bus`).

A service's own NATS user may create its streams but never change them (`servicekit.natsauth`: a
stream's settings could otherwise republish its messages on another service's subjects), so an
operator brings them to the spec as the bus's admin: before the first start of a cluster's services,
and after a change of the retention settings (NATS_STREAM_REPLICAS, NATS_MAX_AGE_DAYS...). Reads
NATS_URL, NATS_USER (default admin), NATS_PASSWORD (or NATS_PASSWORD_FILE) and the TLS settings.
Exit code 0 when every stream is at its spec (with --check: was already), 1 if not, 2 if NATS is
out of reach.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from .options import Subcommands


def add(sub: Subcommands) -> None:
    streams = sub.add_parser(
        "streams",
        help="create the bus's streams or bring them to their spec, as the bus's admin (reads NATS_URL, NATS_USER...)",
    )
    streams.set_defaults(handler=run)
    streams.add_argument("--check", action="store_true", help="only say how each stream differs; change nothing")


def run(args: argparse.Namespace) -> int:
    return asyncio.run(_streams(args.check))


async def _streams(check: bool) -> int:
    from nats.js.errors import NotFoundError

    from servicekit import bus, natsauth
    from servicekit import tls as tlskit
    from servicekit.settings import TLSSettings, environ, secret_value

    env = environ()
    url = env.get("NATS_URL", "")
    if not url:
        print("monopoly streams: NATS_URL is not set", file=sys.stderr)
        return 2
    user = env.get("NATS_USER", natsauth.ADMIN)
    try:
        nc, js = await bus.connect(
            url,
            user,
            secret_value(env, "NATS_PASSWORD"),
            streams=(),
            inbox_prefix=natsauth.inbox_prefix(user),
            tls=tlskit.nats_context(TLSSettings.from_env(env)),
            give_up_after_s=10.0,
        )
    except bus.NatsOutOfReach as exc:
        print(f"monopoly streams: {exc}", file=sys.stderr)
        return 2
    at_spec = True
    try:
        for spec in bus.STREAMS:
            wanted = bus.stream_config(spec)
            try:
                differences = bus.stream_drift((await js.stream_info(spec.name)).config, wanted)
            except NotFoundError:
                differences = ["missing"]
            if not differences:
                print(f"{spec.name}: at its spec")
                continue
            print(f"{spec.name}: {'; '.join(differences)}")
            if check:
                at_spec = False
                continue
            await bus.ensure_stream(js, spec, update=True)  # the whole config: what the spec never sets goes
            left = bus.stream_drift((await js.stream_info(spec.name)).config, wanted)
            print(f"{spec.name}: {'brought to its spec' if not left else 'still ' + '; '.join(left)}")
            at_spec = at_spec and not left
    finally:
        await nc.close()
    return 0 if at_spec else 1
