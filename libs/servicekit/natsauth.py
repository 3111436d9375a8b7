"""Who may publish and read what on the bus: one NATS user per service, with permissions that follow
from the subjects it publishes, the streams it owns and the durable consumers it reads.

Why users with passwords in the server's config (not nkeys or decentralized JWT accounts): the
platform has one account and a fixed, small set of principals known when the server starts; per-user
`permissions` in the config say exactly what each may do, a config file is all the embedded server,
compose and the NATS Helm chart need (no operator/resolver to run), and a password is one more setting
like DATABASE_URL. nkeys would only replace the password by a key pair: worth it once credentials are
issued by a tool rather than a config, not before.

What the permissions enforce (the server refuses anything else with a permissions violation):

* A data subject is published only by its owner: the table service `monopoly.table.*.events` and
  `monopoly.signals.*.*`, auction `monopoly.auction.*.*`, trade `monopoly.trade.*.*`, casino
  `monopoly.casino.*.*`, matchmaking `monopoly.match.*.*`. So a result the table applies (an auction
  or casino `settled`) came from the service that owns the subject.
* A stream is created and described only by its owner (`$JS.API.STREAM.{CREATE,INFO}.<stream>`), and
  changed only by `admin`: a stream's settings are not checked by the server, and an owner allowed to
  update its stream could give it a `republish` (the server then publishes every stored message on any
  subject, another service's results included) or a `source` copying another stream (the table events,
  with their seeds). A stream that exists is never created again, so its owner cannot change it; a
  platform's starter (`client.platform`, `monopoly streams`) creates every stream as `admin` before
  the services start and brings an existing one to its spec. A service whose stream differs from its
  spec says so and goes on (`bus.ensure_stream`).
* A reader reads only through its own durable consumers (`$JS.API.CONSUMER.{CREATE,INFO,MSG.NEXT}.<stream>.<durable>`,
  acks on `$JS.ACK.<stream>.<durable>.>`): no consumer of another service, no purge, no delete.
* Replies come to a private inbox: each user subscribes only to `_INBOX.<user>.>` (the client's
  `inbox_prefix`), so nobody reads another's replies or the messages its pull consumers fetch, and no
  service user may publish to any inbox.
* `analytics` only reads the table events stream (its two durables and ordered consumers: `monopoly
  export`, `monopoly archive`, the demo's record check) and publishes nothing.
* `admin` has every right: the operator's user (tests, debugging), never given to a service.

Not enforced by permissions: a consumer's configuration. A user allowed to create its durable consumer
could make it a push consumer whose deliver subject is another stream's subject; JetStream delivers a
push consumer only to a subject with interest, and nothing in the platform holds a core subscription on
a stream's subjects (every reader is a JetStream consumer), so no message reaches that stream; an
operator debugging with `nats sub` on a results subject (as `admin`) would open that door for as long
as the subscription lives.
"""

from __future__ import annotations

import json
import os
import secrets
import ssl
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit, urlunsplit

from nats.aio.client import Client as NATS
from nats.js import JetStreamContext

from . import bus
from .settings import Settings

ADMIN = "admin"
ANALYTICS = "analytics"


@dataclass(frozen=True, slots=True)
class Role:
    """One bus user: what it publishes, which streams it owns, which consumers it reads."""

    user: str
    #: Data subjects it publishes (its outbox's subjects).
    publishes: tuple[str, ...] = ()
    #: Streams it creates when missing (`bus.ensure_stream`); only `admin` changes one that exists.
    owns: tuple[str, ...] = ()
    #: (stream, durable): the durable pull consumers it creates, fetches from and acks.
    consumes: tuple[tuple[str, str], ...] = ()
    #: Of those, the ones it also deletes (analytics recreates its consumers at a position of its own; an
    #: exclusive consumer is made again from its ack floor when another instance takes it over).
    recreates: tuple[str, ...] = ()
    #: Streams whose messages it reads by subject (`get_last_msg`).
    gets: tuple[str, ...] = ()
    #: Streams it reads whole with ordered (ephemeral push) consumers, and describes.
    reads: tuple[str, ...] = ()

    @property
    def inbox_prefix(self) -> str:
        """The prefix of this user's reply subjects (nats-py's `inbox_prefix`)."""
        return f"_INBOX.{self.user}"

    def permissions(self) -> dict[str, dict[str, list[str]]]:
        """The server config's `permissions` map for this user: allow lists, everything else refused."""
        api = "$JS.API"
        publish = list(self.publishes)
        for stream in self.owns:
            publish += [f"{api}.STREAM.CREATE.{stream}", f"{api}.STREAM.INFO.{stream}"]
        for stream, durable in self.consumes:
            publish += [
                f"{api}.CONSUMER.CREATE.{stream}.{durable}",
                f"{api}.CONSUMER.CREATE.{stream}.{durable}.>",
                f"{api}.CONSUMER.INFO.{stream}.{durable}",
                f"{api}.CONSUMER.MSG.NEXT.{stream}.{durable}",
                f"$JS.ACK.{stream}.{durable}.>",
            ]
            if durable in self.recreates:
                publish.append(f"{api}.CONSUMER.DELETE.{stream}.{durable}")
        for stream in self.gets:
            publish.append(f"{api}.STREAM.MSG.GET.{stream}")
        for stream in self.reads:
            publish += [f"{api}.CONSUMER.CREATE.{stream}", f"{api}.STREAM.INFO.{stream}", f"$JS.FC.{stream}.>"]
        return {"publish": {"allow": _unique(publish)}, "subscribe": {"allow": [f"{self.inbox_prefix}.>"]}}


def _unique(subjects: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(subjects))


SIGNALS = bus.TABLE_SIGNALS.name

#: Every user of the bus but `admin`, by name. The durables are the services' own (`services/*/handlers.py`,
#: `analytics.export`, `analytics.archive`; tests/unit/platform/test_natsauth.py checks they agree).
ROLES: dict[str, Role] = {
    r.user: r
    for r in (
        Role(
            "table",
            publishes=("monopoly.table.*.events", "monopoly.signals.*.*"),
            owns=(bus.TABLE_EVENTS.name, SIGNALS),
            consumes=(
                (bus.AUCTION_EVENTS.name, "table-auction-settled"),
                (bus.CASINO_EVENTS.name, "table-casino-settled"),
            ),
        ),
        Role(
            "auction",
            publishes=(bus.auction_subject(),),
            owns=(bus.AUCTION_EVENTS.name,),
            consumes=((SIGNALS, "auction-table-signals"),),
            recreates=("auction-table-signals",),  # exclusive: made again from its ack floor when taken over
        ),
        Role(
            "trade",
            publishes=(bus.trade_subject(),),
            owns=(bus.TRADE_EVENTS.name,),
            consumes=((SIGNALS, "trade-table-signals"),),
        ),
        Role(
            "casino",
            publishes=(bus.casino_subject(),),
            owns=(bus.CASINO_EVENTS.name,),
            consumes=((SIGNALS, "casino-table-signals"),),
            recreates=("casino-table-signals",),  # exclusive: made again from its ack floor when taken over
        ),
        Role(
            "matchmaking",
            publishes=("monopoly.match.*.*",),
            owns=(bus.MATCH_EVENTS.name,),
            consumes=((SIGNALS, "matchmaking-table-signals"),),
        ),
        Role(
            "rating",
            consumes=((SIGNALS, "rating-table-signals"), (bus.MATCH_EVENTS.name, "rating-match-events")),
            recreates=("rating-table-signals",),  # exclusive: made again from its ack floor when taken over
            gets=(bus.MATCH_EVENTS.name,),
        ),
        Role(
            ANALYTICS,
            consumes=((bus.TABLE_EVENTS.name, "analytics-export"), (bus.TABLE_EVENTS.name, "analytics-archive")),
            recreates=("analytics-export", "analytics-archive"),
            reads=(bus.TABLE_EVENTS.name,),
        ),
    )
}
#: Every user the server knows.
USERS = (*ROLES, ADMIN)


def streams_owned(user: str) -> tuple[str, ...]:
    """The streams `user` creates (every stream for a user with no role: an open server, or admin)."""
    role = ROLES.get(user)
    return role.owns if role is not None else tuple(s.name for s in bus.STREAMS)


def inbox_prefix(user: str) -> str:
    """Where `user`'s replies come (`_INBOX` for a user with no role of its own)."""
    role = ROLES.get(user)
    return role.inbox_prefix if role is not None else "_INBOX"


def generate(users: Iterable[str] = USERS) -> dict[str, str]:
    """A random password per user (256 bits, URL-safe: nothing to quote in a config or a URL)."""
    return {user: secrets.token_urlsafe(32) for user in users}


def load_or_create(path: Path, users: Iterable[str] = USERS) -> dict[str, str]:
    """The passwords of `users` kept at `path` (JSON, readable by its owner only), created the first
    time and completed when a user was added since; a data dir keeps its passwords across restarts."""
    known: dict[str, str] = json.loads(path.read_text()) if path.exists() else {}
    missing = [u for u in users if u not in known]
    if missing or not path.exists():
        known.update(generate(missing))
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump(known, f, indent=2)
    os.chmod(path, 0o600)
    return known


def authorization(passwords: Mapping[str, str]) -> dict[str, object]:
    """The server config's `authorization` block: every role with its permissions, and admin."""
    users: list[dict[str, object]] = [
        {"user": name, "password": passwords[name], "permissions": role.permissions()} for name, role in ROLES.items()
    ]
    users.append({"user": ADMIN, "password": passwords[ADMIN]})
    return {"users": users}


#: The user cluster routes log in as (`server_config`'s `cluster` block): a password of its own, kept
#: with the users' passwords, so no other process on the machine joins the cluster as a server.
ROUTE = "route"


@dataclass(frozen=True, slots=True)
class ClusterNode:
    """One server of a JetStream cluster: its name, where its routes listen, the other nodes' routes."""

    name: str
    cluster_name: str
    listen: str
    routes: tuple[str, ...]
    #: The monitoring port (`/healthz`): how a starter knows the node's JetStream is current.
    http: str = ""


def server_config(
    listen: str,
    store_dir: Path,
    passwords: Mapping[str, str] | None,
    tls: Mapping[str, object] | None = None,
    cluster: ClusterNode | None = None,
) -> str:
    """A nats-server config (JSON, which its parser reads): JetStream in `store_dir`, the users of
    `authorization` (None: an open server), and `tls` (cert_file, key_file, ca_file...) when given;
    with `cluster`, a node of a JetStream cluster whose routes log in as `ROUTE` (its password in
    `passwords`) and use the same TLS (the platform's certificates serve and verify both ends)."""
    config: dict[str, object] = {"listen": listen, "jetstream": {"store_dir": str(store_dir)}}
    if passwords is not None:
        config["authorization"] = authorization(passwords)
    if tls:
        config["tls"] = dict(tls)
    if cluster is not None:
        config["server_name"] = cluster.name
        if cluster.http:
            config["http"] = cluster.http
        block: dict[str, object] = {"name": cluster.cluster_name, "listen": cluster.listen}
        scheme = "nats-route"
        route_user = ""
        if passwords is not None and ROUTE in passwords:
            block["authorization"] = {"user": ROUTE, "password": passwords[ROUTE], "timeout": 5}
            route_user = f"{ROUTE}:{passwords[ROUTE]}@"
        if tls:
            block["tls"] = {**dict(tls), "verify": bool(tls.get("ca_file")), "timeout": 5}
        block["routes"] = [f"{scheme}://{route_user}{route}" for route in cluster.routes]
        config["cluster"] = block
    return json.dumps(config, indent=2)


def servers(url: str) -> list[str]:
    """The server URLs of NATS_URL: one URL, or several separated by commas (the nodes of a cluster,
    so a client reconnects to another node when its own goes away)."""
    return [part.strip() for part in url.split(",") if part.strip()]


def with_credentials(url: str, user: str, password: str) -> str:
    """`url` with `user:password@` in it (replacing any there); in each URL of a list."""
    out = []
    for one in servers(url):
        parts = urlsplit(one)
        host = parts.netloc.rsplit("@", 1)[-1]
        out.append(urlunsplit(parts._replace(netloc=f"{quote(user, safe='')}:{quote(password, safe='')}@{host}")))
    return ",".join(out)


def without_credentials(url: str) -> str:
    out = []
    for one in servers(url):
        parts = urlsplit(one)
        out.append(urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[-1])))
    return ",".join(out)


@dataclass(frozen=True, slots=True)
class BusUsers:
    """The passwords of an embedded server's users, and the URL of the server they log in to."""

    url: str
    passwords: Mapping[str, str]

    def url_for(self, user: str) -> str:
        return with_credentials(self.url, user, self.passwords[user])

    def env_for(self, user: str) -> dict[str, str]:
        """The settings a process logging in as `user` reads (`servicekit.settings.BusSettings`)."""
        return {"NATS_URL": self.url, "NATS_USER": user, "NATS_PASSWORD": self.passwords[user]}


def user_of(url: str, user: str = "", password: str = "") -> str:
    """Who a connection logs in as: `user` when a password goes with it, else the URL's user ("" : nobody)."""
    if password:
        return user
    name = urlsplit(servers(url)[0] if servers(url) else url).username
    return unquote(name) if name else ""


def has_credentials(settings: Settings) -> bool:
    """Whether a service logs in to NATS: a password, or a user and password in NATS_URL itself."""
    return bool(settings.nats_password) or any(urlsplit(url).password for url in servers(settings.nats_url))


async def connect(
    url: str,
    user: str = "",
    password: str = "",
    tls: ssl.SSLContext | None = None,
    give_up_after_s: float | None = None,
) -> tuple[NATS, JetStreamContext]:
    """Connect as `user` (or as the URL's user) with that user's inbox, and create the streams it owns
    if missing; a user with no role (an open server, or admin) ensures every stream and brings an
    existing one to its spec. A tool passes `give_up_after_s` (`bus.connect`)."""
    who = user_of(url, user, password)
    return await bus.connect(
        url,
        who,
        password,
        streams=streams_owned(who),
        update_streams=who not in ROLES,
        inbox_prefix=inbox_prefix(who),
        tls=tls,
        give_up_after_s=give_up_after_s,
    )
