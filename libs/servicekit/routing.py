"""A table-service stub that follows the service's redirects: several instances share the tables.

An instance asked about a table it does not run answers UNAVAILABLE with the trailing metadata
`served-by: <address>` (`servicekit.errors.Elsewhere`; on `Play`, `PlayRefusal.served_by`): this stub
reconnects to that address and sends the same request again (the same `command_id`, so a command is
applied once whatever the hops), at most `MAX_HOPS` times, and remembers the table's owner for the
next calls. `served-by` empty means nobody runs the table right now (its owner died, the next one has
not taken it yet): the call waits the `retry-after-ms` hint and asks the first instance again. A
remembered owner that cannot be reached (it stopped or died) is forgotten and the first instance
asked. `WatchTable` streams survive all of it: a stream that ends on a redirect or on its owner's
death is opened again from the last seq it delivered, so the caller sees no gap and no duplicate.

With one instance every call goes to the one channel as before (only a lease that expired while
Postgres was away answers `served-by` empty for a moment: the call waits and asks again).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc

from monopoly.v1 import common_pb2, table_pb2, table_pb2_grpc

log = logging.getLogger(__name__)

#: Redirects followed for one call before its last answer is given to the caller.
MAX_HOPS = 4
#: How long a call or a stream waits in all for a table that nobody runs (its owner died, the next one is
#: taking it: a lease TTL or so), retrying every `retry-after-ms`.
FAILOVER_S = 60.0
SERVED_BY = "served-by"
UNARY = ("CreateTable", "JoinTable", "GetTable", "SubmitCommand", "ListInstances")
#: The calls asked again when the first channel's instance fails under them: the reads, and a command
#: with a `command_id` (which makes a second answer the first one). CreateTable is not: it could make two
#: tables.
RETRIED_AT_HOME = frozenset({"JoinTable", "GetTable", "SubmitCommand", "ListInstances"})


def served_by(exc: grpc.aio.AioRpcError) -> str | None:
    """The `served-by` address of a refusal (None: not a redirect; "": nobody runs the table now)."""
    for key, value in exc.trailing_metadata() or ():
        if key == SERVED_BY:
            return str(value)
    return None


def answered(exc: grpc.aio.AioRpcError) -> bool:
    """Whether an UNAVAILABLE came from a table service (it says when to come back: Postgres away, say),
    which its caller must see and honour, rather than from a connection to an instance that died."""
    return any(key == "retry-after-ms" for key, _ in exc.trailing_metadata() or ())


def retry_hint_ms(exc: grpc.aio.AioRpcError) -> int | None:
    """The server's `retry-after-ms` hint (trailing metadata; a Play refusal's `retry_after_ms`), if any."""
    for key, value in exc.trailing_metadata() or ():
        if key == "retry-after-ms":
            with contextlib.suppress(ValueError):
                return int(value)
    return None


def retry_after_s(exc: grpc.aio.AioRpcError, default_s: float = 0.25) -> float:
    """Seconds to wait before calling again: the server's hint (50 ms to 5 s), else `default_s`."""
    hint = retry_hint_ms(exc)
    return default_s if hint is None else min(5.0, max(0.05, hint / 1000))


class RoutedTableStub(table_pb2_grpc.TableServiceStub):  # type: ignore[misc]
    """`TableServiceStub` on `channel` (the first instance) whose calls follow `served-by` redirects;
    `open_channel` makes the channel to another instance (the same credentials as the first)."""

    def __init__(self, channel: grpc.aio.Channel, open_channel: Callable[[str], grpc.aio.Channel]) -> None:
        super().__init__(channel)
        self._home = table_pb2_grpc.TableServiceStub(channel)
        self._open_channel = open_channel
        self._stubs: dict[str, table_pb2_grpc.TableServiceStub] = {}
        self._channels: dict[str, grpc.aio.Channel] = {}
        #: The instance last known to run each table (its address).
        self.owners: dict[str, str] = {}
        #: Redirects followed, for tests and logs.
        self.hops = 0
        for name in UNARY:
            setattr(self, name, self._unary(name))
        self.Play = self._play
        self.WatchTable = self._watch

    def stub_at(self, address: str | None) -> table_pb2_grpc.TableServiceStub:
        if not address:
            return self._home
        if address not in self._stubs:
            self._channels[address] = self._open_channel(address)
            self._stubs[address] = table_pb2_grpc.TableServiceStub(self._channels[address])
        return self._stubs[address]

    async def close(self) -> None:
        """Close the channels this stub opened to other instances (the first one is the caller's)."""
        channels, self._channels, self._stubs = self._channels, {}, {}
        for channel in channels.values():
            with contextlib.suppress(Exception):
                await channel.close()

    def redirected(self, table_id: str, address: str) -> None:
        self.hops += 1
        if table_id:
            self.owners[table_id] = address

    def _unary(self, name: str) -> Callable[..., Any]:
        async def call(request: Any, **kwargs: Any) -> Any:
            table_id = str(getattr(request, "table_id", ""))
            target = self.owners.get(table_id)
            hops = 0
            timeout = kwargs.get("timeout")
            waited_until = asyncio.get_running_loop().time() + min(FAILOVER_S, timeout or FAILOVER_S)
            while True:
                try:
                    return await getattr(self.stub_at(target), name)(request, **kwargs)
                except grpc.aio.AioRpcError as exc:
                    if exc.code() != grpc.StatusCode.UNAVAILABLE:
                        raise
                    where = served_by(exc)
                    if where:  # another instance runs it: the same request there
                        hops += 1
                        if hops > MAX_HOPS:
                            raise
                        self.redirected(table_id, where)
                        target = where
                        continue
                    if where == "" and asyncio.get_running_loop().time() < waited_until:
                        await asyncio.sleep(retry_after_s(exc))  # between owners: ask the first instance again
                        target = None
                        continue
                    if target is not None:  # the remembered owner is gone: ask the first instance
                        self.owners.pop(table_id, None)
                        target = None
                        continue
                    retried = (
                        name in RETRIED_AT_HOME
                        and (name != "SubmitCommand" or request.command_id)
                        and not answered(exc)
                    )
                    if retried and asyncio.get_running_loop().time() < waited_until:
                        # the instance the first channel reached died under the call: another one answers
                        await asyncio.sleep(retry_after_s(exc))
                        continue
                    raise

        return call

    def _play(self, request_iterator: Any = None, **kwargs: Any) -> Any:
        """A routed `Play` (`write` and `read`); given a request iterator, the first instance's own
        stream, unrouted: requests an iterator already consumed could not be sent again elsewhere."""
        if request_iterator is not None:
            return self._home.Play(request_iterator, **kwargs)
        return RoutedPlay(self, kwargs)

    def _watch(self, request: table_pb2.WatchTableRequest, **kwargs: Any) -> RoutedWatch:
        return RoutedWatch(self, request, kwargs)


class RoutedPlay:
    """A `Play` stream that follows redirects: requests written and not yet answered are sent again, in
    order, on a stream to the table's owner (their command ids make the retry harmless)."""

    def __init__(self, routed: RoutedTableStub, kwargs: dict[str, Any]) -> None:
        self.routed = routed
        self.kwargs = kwargs
        self.call: Any = None
        self.target: str | None = None
        self.pending: collections.deque[table_pb2.SubmitCommandRequest] = collections.deque()
        self.cancelled = False

    def _open(self, table_id: str) -> Any:
        if self.call is None:
            self.target = self.routed.owners.get(table_id)
            self.call = self.routed.stub_at(self.target).Play(**self.kwargs)
        return self.call

    async def write(self, request: table_pb2.SubmitCommandRequest) -> None:
        call = self._open(request.table_id)
        self.pending.append(request)
        # The stream ended (InvalidStateError), or failed while this write waited for it (its error):
        # `read` learns which, reopens and sends the request again.
        with contextlib.suppress(asyncio.InvalidStateError, grpc.aio.AioRpcError):
            await call.write(request)

    async def read(self) -> Any:
        hops = 0
        loop = asyncio.get_running_loop()
        waited_until = loop.time() + FAILOVER_S
        while True:
            if self.call is None:
                return grpc.aio.EOF
            try:
                reply = await self.call.read()
            except grpc.aio.AioRpcError as exc:
                if (
                    exc.code() != grpc.StatusCode.UNAVAILABLE
                    or answered(exc)  # the service's own refusal: the caller waits as it says
                    or self.target is None  # the first channel's own failure: the caller retries it
                    or not self.pending
                    or loop.time() > waited_until
                ):
                    raise
                reply = None  # the instance this stream went to is gone
            if reply is None or (reply is grpc.aio.EOF and self.pending and self.target is not None):
                # The stream to a table's owner died or ended with requests unanswered (the owner
                # stopped or died): the first instance, which knows the next owner or soon will.
                hops += 1
                for request in self.pending:
                    self.routed.owners.pop(request.table_id, None)
                await self._reopen(None)
                continue
            if reply is grpc.aio.EOF or not self.pending:
                return reply
            request = self.pending[0]
            refused = reply.refused if reply.HasField("refused") else None
            if refused is not None and refused.code == "UNAVAILABLE" and refused.served_by and hops < MAX_HOPS:
                hops += 1
                self.routed.redirected(request.table_id, refused.served_by)
                await self._reopen(refused.served_by)
                continue
            self.pending.popleft()
            return reply

    async def _reopen(self, target: str | None) -> None:
        """A new stream to `target` (None: the first instance), every unanswered request written again."""
        if self.call is not None:
            self.call.cancel()
        self.target = target
        self.call = self.routed.stub_at(target).Play(**self.kwargs)
        for request in self.pending:
            try:
                await self.call.write(request)
            except (asyncio.InvalidStateError, grpc.aio.AioRpcError):  # it ended at once: `read` learns why
                break

    async def done_writing(self) -> None:
        if self.call is not None:
            await self.call.done_writing()

    def cancel(self) -> bool:
        self.cancelled = True
        if self.call is not None:
            return bool(self.call.cancel())
        return False

    def done(self) -> bool:
        return self.cancelled or (self.call is not None and bool(self.call.done()))


class RoutedWatch:
    """A `WatchTable` stream that follows redirects and its table's failover, resuming after the last
    seq it delivered (a snapshot's seq, or its last event's)."""

    def __init__(self, routed: RoutedTableStub, request: table_pb2.WatchTableRequest, kwargs: dict[str, Any]) -> None:
        self.routed = routed
        self.request = request
        self.kwargs = kwargs
        self.call: Any = None
        self.cancelled = False
        #: Streams opened again after a redirect or an owner's death.
        self.resumed = 0

    def __aiter__(self) -> AsyncIterator[table_pb2.WatchTableResponse]:
        return self._follow()

    def _close(self) -> None:
        if self.call is not None and not self.call.done():
            self.call.cancel()

    async def _follow(self) -> AsyncIterator[table_pb2.WatchTableResponse]:
        try:
            table_id = self.request.table_id
            last: int | None = None  # the last seq delivered
            hops = 0
            loop = asyncio.get_running_loop()
            waited_until = loop.time() + FAILOVER_S
            while not self.cancelled:
                target = self.routed.owners.get(table_id)
                request = table_pb2.WatchTableRequest()
                request.CopyFrom(self.request)
                if last is not None:
                    request.from_seq = last
                self.call = self.routed.stub_at(target).WatchTable(request, **self.kwargs)
                try:
                    async for item in self.call:
                        kind = item.WhichOneof("item")
                        if kind == "snapshot":
                            if last is not None:
                                continue  # never sent on a resumed stream (from_seq > 0); be sure
                            last = item.snapshot.seq
                        else:
                            events = item.batch.events if kind == "batch" else [item.event]
                            fresh = [e for e in events if last is None or e.seq > last]
                            if not fresh:
                                continue
                            if len(fresh) != len(events):
                                item = table_pb2.WatchTableResponse(batch=common_pb2.EventBatch(events=fresh))
                            last = fresh[-1].seq
                        hops = 0
                        waited_until = loop.time() + FAILOVER_S
                        yield item
                    return
                except grpc.aio.AioRpcError as exc:
                    if self.cancelled or exc.code() != grpc.StatusCode.UNAVAILABLE:
                        raise
                    where = served_by(exc)
                    if where:
                        hops += 1
                        if hops > MAX_HOPS:
                            raise
                        self.routed.redirected(table_id, where)
                    elif where == "" or target is not None:
                        # nobody runs it now, or its owner died: wait, then ask the first instance
                        if loop.time() > waited_until:
                            raise
                        self.routed.owners.pop(table_id, None)
                        await asyncio.sleep(retry_after_s(exc) if where == "" else 0.1)
                    else:
                        raise
                    self.resumed += 1
                    log.info("table %s: watching again after seq %s (%s)", table_id, last, where or "owner gone")
        finally:  # the reader left early, or the stream ended: no call left open
            self._close()

    def cancel(self) -> bool:
        self.cancelled = True
        if self.call is not None:
            return bool(self.call.cancel())
        return False


__all__ = ["MAX_HOPS", "RoutedPlay", "RoutedTableStub", "RoutedWatch", "served_by"]
