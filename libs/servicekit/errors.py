"""Errors a service raises for bad requests; the gRPC layer maps each to its status."""

from __future__ import annotations


class BadRequest(ValueError):
    """Malformed input: INVALID_ARGUMENT."""


class NotFound(LookupError):
    """No such table (or other resource): NOT_FOUND."""


class Unauthenticated(PermissionError):
    """A missing, forged or expired token: UNAUTHENTICATED."""


class Forbidden(PermissionError):
    """A seat token that does not own the seat: PERMISSION_DENIED."""


class Stale(RuntimeError):
    """The request was made against a state that has moved on: ABORTED."""


class Unavailable(RuntimeError):
    """A dependency (Postgres) failed; the request changed nothing and may be retried: UNAVAILABLE."""
