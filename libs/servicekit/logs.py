"""A service's log lines: text for people, JSON for a log pipeline, never a token or a secret.

LOG_FORMAT=json|text (default text), LOG_LEVEL=DEBUG|INFO|WARNING|ERROR (default INFO). Every line
carries the service and its instance (INSTANCE, the pod's name on Kubernetes, else the host name);
what a task is working on is bound once (`bind(table_id=...)`, a context variable, so each asyncio
task has its own) and added to every line it logs: `table_id`, `seq` (the sequence number the
command being handled will commit first), `trace` (the command id or the message id being handled:
one id follows a command from the caller through the outbox to the services consuming it).

Secrets are scrubbed from every line: signed tokens (`servicekit.auth`'s `body.signature`), the
token key and database passwords given to `configure`, and the password of any URL.
"""

from __future__ import annotations

import contextvars
import json
import logging
import re
import socket
import time
from collections.abc import Iterable, Mapping
from typing import Any

from . import settings

#: What the current task is working on (table_id, seq, trace), added to each of its log lines.
_CONTEXT: contextvars.ContextVar[Mapping[str, Any] | None] = contextvars.ContextVar("log_context", default=None)
CONTEXT_FIELDS = ("table_id", "seq", "trace")

#: A signed token: base64url of a JSON object ('{"' is 'eyJ'), a dot, a base64url signature.
_TOKEN = re.compile(r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16,}")
#: A URL's password: scheme://user:password@host
_URL_PASSWORD = re.compile(r"(\w+://[^:/@\s]*:)[^@\s]+@")
REDACTED = "[redacted]"


def bind(**fields: Any) -> contextvars.Token[Mapping[str, Any] | None]:
    """Add fields to every log line of the current task (and of tasks it starts from now on)."""
    return _CONTEXT.set({**(_CONTEXT.get() or {}), **fields})


def unbind(token: contextvars.Token[Mapping[str, Any] | None]) -> None:
    _CONTEXT.reset(token)


class Scrubber:
    """Removes tokens, known secrets and URL passwords from a text."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self.secrets = sorted({s for s in secrets if s and len(s) >= 6}, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, REDACTED)
        text = _TOKEN.sub(REDACTED, text)
        return _URL_PASSWORD.sub(lambda m: m.group(1) + REDACTED + "@", text)


class _Base(logging.Formatter):
    def __init__(self, service: str, instance: str, scrub: Scrubber) -> None:
        super().__init__()
        self.service, self.instance, self.scrub = service, instance, scrub

    def fields(self, record: logging.LogRecord) -> dict[str, Any]:
        context = dict(_CONTEXT.get() or {})
        for name in CONTEXT_FIELDS:  # logger.info(..., extra={"table_id": ...}) wins over the bound value
            if name in record.__dict__:
                context[name] = record.__dict__[name]
        return context


class JsonFormatter(_Base):
    """One JSON object per line: ts, level, logger, message, service, instance, table_id, seq, trace, exc."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "service": self.service,
            "instance": self.instance,
            **self.fields(record),
        }
        if record.exc_info:
            line["exc"] = self.formatException(record.exc_info)
        return self.scrub(json.dumps(line, default=str))


class TextFormatter(_Base):
    """`time logger LEVEL message key=value...`, for a terminal."""

    def format(self, record: logging.LogRecord) -> str:
        context = " ".join(f"{k}={v}" for k, v in self.fields(record).items() if v not in (None, ""))
        text = f"{self.formatTime(record)} {record.name} {record.levelname} {record.getMessage()}"
        if context:
            text += f" [{context}]"
        if record.exc_info:
            text += "\n" + self.formatException(record.exc_info)
        return self.scrub(text)


def instance_name(env: Mapping[str, str]) -> str:
    return env.get("INSTANCE") or socket.gethostname()


def configure(service: str, secrets: Iterable[str] = (), env: Mapping[str, str] | None = None) -> logging.Handler:
    """Send the root logger's lines to stderr in LOG_FORMAT at LOG_LEVEL; returns the handler."""
    e = settings.environ(env)
    fmt = e.get("LOG_FORMAT", "text").strip().lower() or "text"
    if fmt not in ("json", "text"):
        raise SystemExit(f"LOG_FORMAT must be json or text, not {fmt!r}")
    level = e.get("LOG_LEVEL", "INFO").strip().upper() or "INFO"
    if level not in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"):
        raise SystemExit(f"LOG_LEVEL must be DEBUG, INFO, WARNING or ERROR, not {level!r}")
    kind = JsonFormatter if fmt == "json" else TextFormatter
    handler = logging.StreamHandler()
    handler.setFormatter(kind(service, instance_name(e), Scrubber(secrets)))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    return handler


def database_password(url: str) -> str:
    """The password in a database URL ('' if none): scrubbed as a secret of its own too."""
    m = re.match(r"\w+://[^:/@\s]*:([^@\s]+)@", url)
    return m.group(1) if m else ""
