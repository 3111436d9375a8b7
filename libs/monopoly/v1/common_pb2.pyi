from monopoly.v1 import events_pb2 as _events_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class OccurredAt(_message.Message):
    __slots__ = ("game_ms", "clock_scale", "wall_unix_ms")
    GAME_MS_FIELD_NUMBER: _ClassVar[int]
    CLOCK_SCALE_FIELD_NUMBER: _ClassVar[int]
    WALL_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    game_ms: int
    clock_scale: int
    wall_unix_ms: int
    def __init__(self, game_ms: _Optional[int] = ..., clock_scale: _Optional[int] = ..., wall_unix_ms: _Optional[int] = ...) -> None: ...

class Envelope(_message.Message):
    __slots__ = ("event_id", "table_id", "seq", "type", "occurred_at", "schema_version", "payload")
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    OCCURRED_AT_FIELD_NUMBER: _ClassVar[int]
    SCHEMA_VERSION_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    event_id: str
    table_id: str
    seq: int
    type: str
    occurred_at: OccurredAt
    schema_version: int
    payload: _events_pb2.EventPayload
    def __init__(self, event_id: _Optional[str] = ..., table_id: _Optional[str] = ..., seq: _Optional[int] = ..., type: _Optional[str] = ..., occurred_at: _Optional[_Union[OccurredAt, _Mapping]] = ..., schema_version: _Optional[int] = ..., payload: _Optional[_Union[_events_pb2.EventPayload, _Mapping]] = ...) -> None: ...

class EventBatch(_message.Message):
    __slots__ = ("events",)
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[Envelope]
    def __init__(self, events: _Optional[_Iterable[_Union[Envelope, _Mapping]]] = ...) -> None: ...
