"""The settings every service reads from the environment, with defaults that work on a laptop.

Each service adds its own in `services/<name>/settings.py` (ports' defaults, its knobs); this module
and those are the only places that read the environment, so a service's settings are found in one
file and tests build them from a plain dict.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .auth import Keyring, WeakSecret, data_dir_secret
from .quotas import QuotaSettings

Env = Mapping[str, str]


def environ(env: Env | None = None) -> Env:
    """`env`, or the process's environment when None (the one place a settings module reads it)."""
    return os.environ if env is None else env


class MissingSecret(SystemExit):
    """No usable token key: the service stops at once with this message (no traceback, exit status 1)."""


def dev_mode(env: Env | None = None) -> bool:
    """MONOPOLY_DEV=1: a laptop's explicit dev mode (a per-machine dev key when no key is set)."""
    return _flag(env, "MONOPOLY_DEV")


def nats_anonymous(env: Env | None = None) -> bool:
    """NATS_ANONYMOUS=1: connect to an open NATS without credentials (a laptop, a test server); a
    service refuses to start without its bus user's password otherwise (outside dev mode)."""
    return _flag(env, "NATS_ANONYMOUS")


def _flag(env: Env | None, name: str) -> bool:
    return environ(env).get(name, "") in ("1", "true", "yes")


def dev_secret_dir(env: Env | None = None) -> Path:
    """Where dev mode keeps its per-machine key: $XDG_STATE_HOME/monopoly (~/.local/state/monopoly)."""
    e = environ(env)
    return Path(e.get("XDG_STATE_HOME") or Path(e.get("HOME", "~")).expanduser() / ".local" / "state") / "monopoly"


def token_secret(env: Env | None = None) -> Keyring:
    """The keys of seat, service and operator tokens, shared by every service.

    TOKEN_SECRETS ("kid2:secret2,kid1:secret1", the first signs: a rotation), else TOKEN_SECRET (one
    key), else, with MONOPOLY_DEV=1 only, a random per-machine key kept in `dev_secret_dir` (mode 0600).
    Without any, or with a key too short or once public: `MissingSecret`, the service does not start.
    """
    e = environ(env)
    try:
        if e.get("TOKEN_SECRETS"):
            return Keyring.parse(e["TOKEN_SECRETS"]).checked()
        if e.get("TOKEN_SECRET"):
            return Keyring.of(e["TOKEN_SECRET"]).checked()
        if dev_mode(e):
            return Keyring.of(data_dir_secret(dev_secret_dir(e))).checked()
    except WeakSecret as exc:
        raise MissingSecret(f"TOKEN_SECRET refused: {exc}") from None
    raise MissingSecret(
        "TOKEN_SECRET is not set: every service needs the same random key to sign and verify tokens "
        "(e.g. TOKEN_SECRET=$(openssl rand -hex 32); TOKEN_SECRETS=new:...,old:... during a rotation). "
        "`make run`, `make demo` and the tests make one per data folder; MONOPOLY_DEV=1 uses a per-machine dev key."
    )


def secret_value(env: Env, name: str) -> str:
    """`name` from the environment, or the content of the file `<name>_FILE` names (a mounted secret,
    compose's generated passwords), without its trailing newline; empty when neither is set."""
    value = env.get(name, "")
    path = env.get(f"{name}_FILE", "")
    if not value and path:
        try:
            with open(path) as f:
                value = f.read().strip()
        except OSError as exc:
            raise SystemExit(f"{name}_FILE={path}: {exc.strerror}") from None
    return value


def table_target(env: Env | None = None) -> str:
    """TABLE_TARGET: where the table service answers (trade executes trades there, matchmaking opens tables)."""
    e = environ(env)
    return e.get("TABLE_TARGET", f"127.0.0.1:{e.get('TABLE_GRPC_PORT', '50051')}")


def clock_scale(env: Env | None = None) -> int:
    """CLOCK_SCALE: tables run their game clock this many times faster than real time unless created otherwise (E6)."""
    return int(environ(env).get("CLOCK_SCALE", "1"))


@dataclass(frozen=True, slots=True)
class TLSSettings:
    """TLS of gRPC (servers and clients) and of the NATS connection, from PEM files.

    TLS_CERT, TLS_KEY: this process's certificate and key. Its gRPC server serves TLS only with them
    (no plaintext port then), and it presents them as a client (mTLS: to other services, to NATS).
    TLS_CA: the CA bundle every peer is verified against; with it, the process's gRPC channels and its
    NATS connection use TLS. TLS_CLIENT_AUTH: `require` (the default when TLS_CA is set: a client
    without a certificate signed by TLS_CA is refused, mTLS) or `none`. Nothing set: plaintext, as on
    a laptop.
    """

    cert: str = ""
    key: str = ""
    ca: str = ""
    require_client_cert: bool = False

    @property
    def server(self) -> bool:
        """Whether a gRPC server serves TLS."""
        return bool(self.cert and self.key)

    @property
    def client(self) -> bool:
        """Whether channels and the NATS connection use TLS (a CA to verify the server with)."""
        return bool(self.ca)

    @staticmethod
    def from_env(env: Env | None = None) -> TLSSettings:
        e = environ(env)
        cert, key, ca = e.get("TLS_CERT", ""), e.get("TLS_KEY", ""), e.get("TLS_CA", "")
        if bool(cert) != bool(key):
            raise SystemExit("TLS_CERT and TLS_KEY go together: set both or neither")
        auth = e.get("TLS_CLIENT_AUTH", "require" if ca else "none").strip().lower()
        if auth not in ("require", "none"):
            raise SystemExit(f"TLS_CLIENT_AUTH must be require or none, not {auth!r}")
        if auth == "require" and cert and not ca:
            raise SystemExit("TLS_CLIENT_AUTH=require needs TLS_CA: the CA client certificates are checked against")
        return TLSSettings(cert=cert, key=key, ca=ca, require_client_cert=auth == "require" and bool(cert))

    def env(self) -> dict[str, str]:
        """The variables that give a child process these settings."""
        out = {"TLS_CERT": self.cert, "TLS_KEY": self.key, "TLS_CA": self.ca}
        out["TLS_CLIENT_AUTH"] = "require" if self.require_client_cert else "none"
        return out


@dataclass(frozen=True, slots=True)
class Settings:
    """What `servicekit.runner.run_service` needs of any service: where NATS and Postgres are, the
    host and ports it serves on (`<NAME>_GRPC_PORT`, `<NAME>_METRICS_PORT`; metrics port 0: none)
    the token keys (no default: `token_secret`), and who the service is on the bus: NATS_USER (its name by default) and
    NATS_PASSWORD (or NATS_PASSWORD_FILE; empty: no credentials, for an open server); and TLS
    (`TLSSettings`)."""

    service: str
    nats_url: str
    database_url: str
    host: str
    grpc_port: int
    metrics_port: int
    token_secret: Keyring
    nats_user: str = ""
    nats_password: str = ""
    tls: TLSSettings = TLSSettings()
    #: HEALTH_PORT: a plaintext port of gRPC health checks only, beside a TLS gRPC port (0: none).
    health_port: int = 0
    #: QUOTA_*: rates and caps per player and per connection (`servicekit.quotas`).
    quotas: QuotaSettings = field(default_factory=QuotaSettings)
    #: <NAME>_INSTANCE_ID (else INSTANCE_ID, else empty): which replica of the service this process is
    #: (in its ready line and logs).
    instance_id: str = ""
    #: <NAME>_REPLICAS (else 1): how many processes of the service share its schema and consumers; a
    #: shortcut only one process may take (trade's table of open proposals) is off with more.
    replicas: int = 1

    @staticmethod
    def from_env(service: str, grpc_port: int, metrics_port: int, env: Env | None = None) -> Settings:
        """The settings of `service` whose ports default to `grpc_port` and `metrics_port`."""
        e = environ(env)
        prefix = service.upper()
        return Settings(
            service=service,
            nats_url=e.get("NATS_URL", ""),
            database_url=e.get("DATABASE_URL", ""),
            host=e.get("SERVICE_HOST", "127.0.0.1"),
            grpc_port=int(e.get(f"{prefix}_GRPC_PORT", str(grpc_port))),
            metrics_port=int(e.get(f"{prefix}_METRICS_PORT", str(metrics_port))),
            token_secret=token_secret(e),
            nats_user=e.get("NATS_USER", service),
            nats_password=secret_value(e, "NATS_PASSWORD"),
            tls=TLSSettings.from_env(e),
            health_port=int(e.get("HEALTH_PORT", "0")),
            quotas=QuotaSettings.from_env(e),
            instance_id=e.get(f"{prefix}_INSTANCE_ID") or e.get("INSTANCE_ID", ""),
            replicas=max(1, int(e.get(f"{prefix}_REPLICAS") or "1")),
        )
