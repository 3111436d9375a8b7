from monopoly.v1 import commands_pb2 as _commands_pb2
from monopoly.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class CreateTableRequest(_message.Message):
    __slots__ = ("mode", "players", "seed", "custom_settings_json", "clock_scale", "external", "seat_tokens", "request_id")
    MODE_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    CUSTOM_SETTINGS_JSON_FIELD_NUMBER: _ClassVar[int]
    CLOCK_SCALE_FIELD_NUMBER: _ClassVar[int]
    EXTERNAL_FIELD_NUMBER: _ClassVar[int]
    SEAT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    mode: str
    players: _containers.RepeatedScalarFieldContainer[str]
    seed: int
    custom_settings_json: str
    clock_scale: int
    external: _containers.RepeatedScalarFieldContainer[str]
    seat_tokens: bool
    request_id: str
    def __init__(self, mode: _Optional[str] = ..., players: _Optional[_Iterable[str]] = ..., seed: _Optional[int] = ..., custom_settings_json: _Optional[str] = ..., clock_scale: _Optional[int] = ..., external: _Optional[_Iterable[str]] = ..., seat_tokens: _Optional[bool] = ..., request_id: _Optional[str] = ...) -> None: ...

class CreateTableResponse(_message.Message):
    __slots__ = ("table_id", "seq", "rule_card", "seat_tokens")
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    RULE_CARD_FIELD_NUMBER: _ClassVar[int]
    SEAT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    seq: int
    rule_card: str
    seat_tokens: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, table_id: _Optional[str] = ..., seq: _Optional[int] = ..., rule_card: _Optional[str] = ..., seat_tokens: _Optional[_Iterable[str]] = ...) -> None: ...

class JoinTableRequest(_message.Message):
    __slots__ = ("table_id", "seat", "service_token")
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SERVICE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    seat: int
    service_token: str
    def __init__(self, table_id: _Optional[str] = ..., seat: _Optional[int] = ..., service_token: _Optional[str] = ...) -> None: ...

class JoinTableResponse(_message.Message):
    __slots__ = ("seat_token", "seat")
    SEAT_TOKEN_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat_token: str
    seat: int
    def __init__(self, seat_token: _Optional[str] = ..., seat: _Optional[int] = ...) -> None: ...

class GetTableRequest(_message.Message):
    __slots__ = ("table_id", "without_state")
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    WITHOUT_STATE_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    without_state: bool
    def __init__(self, table_id: _Optional[str] = ..., without_state: _Optional[bool] = ...) -> None: ...

class TableView(_message.Message):
    __slots__ = ("table_id", "seq", "phase", "actor", "finished", "winner", "state_json", "mode", "game_ms")
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    ACTOR_FIELD_NUMBER: _ClassVar[int]
    FINISHED_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    STATE_JSON_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    GAME_MS_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    seq: int
    phase: str
    actor: int
    finished: bool
    winner: int
    state_json: str
    mode: str
    game_ms: int
    def __init__(self, table_id: _Optional[str] = ..., seq: _Optional[int] = ..., phase: _Optional[str] = ..., actor: _Optional[int] = ..., finished: _Optional[bool] = ..., winner: _Optional[int] = ..., state_json: _Optional[str] = ..., mode: _Optional[str] = ..., game_ms: _Optional[int] = ...) -> None: ...

class SubmitCommandRequest(_message.Message):
    __slots__ = ("table_id", "command_id", "seat_token", "command", "expected_seq")
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    COMMAND_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_TOKEN_FIELD_NUMBER: _ClassVar[int]
    COMMAND_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_SEQ_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    command_id: str
    seat_token: str
    command: _commands_pb2.CommandPayload
    expected_seq: int
    def __init__(self, table_id: _Optional[str] = ..., command_id: _Optional[str] = ..., seat_token: _Optional[str] = ..., command: _Optional[_Union[_commands_pb2.CommandPayload, _Mapping]] = ..., expected_seq: _Optional[int] = ...) -> None: ...

class SubmitCommandResponse(_message.Message):
    __slots__ = ("first_seq", "last_seq", "events")
    FIRST_SEQ_FIELD_NUMBER: _ClassVar[int]
    LAST_SEQ_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    first_seq: int
    last_seq: int
    events: _containers.RepeatedCompositeFieldContainer[_common_pb2.Envelope]
    def __init__(self, first_seq: _Optional[int] = ..., last_seq: _Optional[int] = ..., events: _Optional[_Iterable[_Union[_common_pb2.Envelope, _Mapping]]] = ...) -> None: ...

class PlayResponse(_message.Message):
    __slots__ = ("command_id", "answer", "refused")
    COMMAND_ID_FIELD_NUMBER: _ClassVar[int]
    ANSWER_FIELD_NUMBER: _ClassVar[int]
    REFUSED_FIELD_NUMBER: _ClassVar[int]
    command_id: str
    answer: SubmitCommandResponse
    refused: PlayRefusal
    def __init__(self, command_id: _Optional[str] = ..., answer: _Optional[_Union[SubmitCommandResponse, _Mapping]] = ..., refused: _Optional[_Union[PlayRefusal, _Mapping]] = ...) -> None: ...

class PlayRefusal(_message.Message):
    __slots__ = ("code", "message", "rule_id", "retry_after_ms", "served_by")
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    RULE_ID_FIELD_NUMBER: _ClassVar[int]
    RETRY_AFTER_MS_FIELD_NUMBER: _ClassVar[int]
    SERVED_BY_FIELD_NUMBER: _ClassVar[int]
    code: str
    message: str
    rule_id: str
    retry_after_ms: int
    served_by: str
    def __init__(self, code: _Optional[str] = ..., message: _Optional[str] = ..., rule_id: _Optional[str] = ..., retry_after_ms: _Optional[int] = ..., served_by: _Optional[str] = ...) -> None: ...

class WatchTableRequest(_message.Message):
    __slots__ = ("table_id", "from_seq", "seat_token", "leave_out_commands")
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    FROM_SEQ_FIELD_NUMBER: _ClassVar[int]
    SEAT_TOKEN_FIELD_NUMBER: _ClassVar[int]
    LEAVE_OUT_COMMANDS_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    from_seq: int
    seat_token: str
    leave_out_commands: str
    def __init__(self, table_id: _Optional[str] = ..., from_seq: _Optional[int] = ..., seat_token: _Optional[str] = ..., leave_out_commands: _Optional[str] = ...) -> None: ...

class WatchTableResponse(_message.Message):
    __slots__ = ("snapshot", "event", "batch")
    SNAPSHOT_FIELD_NUMBER: _ClassVar[int]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    BATCH_FIELD_NUMBER: _ClassVar[int]
    snapshot: TableView
    event: _common_pb2.Envelope
    batch: _common_pb2.EventBatch
    def __init__(self, snapshot: _Optional[_Union[TableView, _Mapping]] = ..., event: _Optional[_Union[_common_pb2.Envelope, _Mapping]] = ..., batch: _Optional[_Union[_common_pb2.EventBatch, _Mapping]] = ...) -> None: ...

class ListInstancesRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class InstanceView(_message.Message):
    __slots__ = ("instance_id", "address", "partitions", "tables", "heartbeat_age_s", "live")
    INSTANCE_ID_FIELD_NUMBER: _ClassVar[int]
    ADDRESS_FIELD_NUMBER: _ClassVar[int]
    PARTITIONS_FIELD_NUMBER: _ClassVar[int]
    TABLES_FIELD_NUMBER: _ClassVar[int]
    HEARTBEAT_AGE_S_FIELD_NUMBER: _ClassVar[int]
    LIVE_FIELD_NUMBER: _ClassVar[int]
    instance_id: str
    address: str
    partitions: int
    tables: int
    heartbeat_age_s: float
    live: bool
    def __init__(self, instance_id: _Optional[str] = ..., address: _Optional[str] = ..., partitions: _Optional[int] = ..., tables: _Optional[int] = ..., heartbeat_age_s: _Optional[float] = ..., live: _Optional[bool] = ...) -> None: ...

class ListInstancesResponse(_message.Message):
    __slots__ = ("instances", "partitions", "answered_by")
    INSTANCES_FIELD_NUMBER: _ClassVar[int]
    PARTITIONS_FIELD_NUMBER: _ClassVar[int]
    ANSWERED_BY_FIELD_NUMBER: _ClassVar[int]
    instances: _containers.RepeatedCompositeFieldContainer[InstanceView]
    partitions: int
    answered_by: str
    def __init__(self, instances: _Optional[_Iterable[_Union[InstanceView, _Mapping]]] = ..., partitions: _Optional[int] = ..., answered_by: _Optional[str] = ...) -> None: ...
