from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class RegisterPlayerRequest(_message.Message):
    __slots__ = ("display_name", "is_bot")
    DISPLAY_NAME_FIELD_NUMBER: _ClassVar[int]
    IS_BOT_FIELD_NUMBER: _ClassVar[int]
    display_name: str
    is_bot: bool
    def __init__(self, display_name: _Optional[str] = ..., is_bot: _Optional[bool] = ...) -> None: ...

class RegisterPlayerResponse(_message.Message):
    __slots__ = ("player_id", "player_token")
    PLAYER_ID_FIELD_NUMBER: _ClassVar[int]
    PLAYER_TOKEN_FIELD_NUMBER: _ClassVar[int]
    player_id: str
    player_token: str
    def __init__(self, player_id: _Optional[str] = ..., player_token: _Optional[str] = ...) -> None: ...

class EnqueueRequest(_message.Message):
    __slots__ = ("player_token", "mode", "party_id", "party_size", "bot_fill")
    PLAYER_TOKEN_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    PARTY_ID_FIELD_NUMBER: _ClassVar[int]
    PARTY_SIZE_FIELD_NUMBER: _ClassVar[int]
    BOT_FILL_FIELD_NUMBER: _ClassVar[int]
    player_token: str
    mode: str
    party_id: str
    party_size: int
    bot_fill: bool
    def __init__(self, player_token: _Optional[str] = ..., mode: _Optional[str] = ..., party_id: _Optional[str] = ..., party_size: _Optional[int] = ..., bot_fill: _Optional[bool] = ...) -> None: ...

class CancelRequest(_message.Message):
    __slots__ = ("player_token",)
    PLAYER_TOKEN_FIELD_NUMBER: _ClassVar[int]
    player_token: str
    def __init__(self, player_token: _Optional[str] = ...) -> None: ...

class WatchQueueRequest(_message.Message):
    __slots__ = ("player_token",)
    PLAYER_TOKEN_FIELD_NUMBER: _ClassVar[int]
    player_token: str
    def __init__(self, player_token: _Optional[str] = ...) -> None: ...

class GetMyMatchRequest(_message.Message):
    __slots__ = ("player_token",)
    PLAYER_TOKEN_FIELD_NUMBER: _ClassVar[int]
    player_token: str
    def __init__(self, player_token: _Optional[str] = ...) -> None: ...

class QueueStatus(_message.Message):
    __slots__ = ("ticket_id", "status", "mode", "position", "waiting", "estimated_wait_ms", "waited_ms", "party_id", "match")
    TICKET_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    POSITION_FIELD_NUMBER: _ClassVar[int]
    WAITING_FIELD_NUMBER: _ClassVar[int]
    ESTIMATED_WAIT_MS_FIELD_NUMBER: _ClassVar[int]
    WAITED_MS_FIELD_NUMBER: _ClassVar[int]
    PARTY_ID_FIELD_NUMBER: _ClassVar[int]
    MATCH_FIELD_NUMBER: _ClassVar[int]
    ticket_id: str
    status: str
    mode: str
    position: int
    waiting: int
    estimated_wait_ms: int
    waited_ms: int
    party_id: str
    match: MatchView
    def __init__(self, ticket_id: _Optional[str] = ..., status: _Optional[str] = ..., mode: _Optional[str] = ..., position: _Optional[int] = ..., waiting: _Optional[int] = ..., estimated_wait_ms: _Optional[int] = ..., waited_ms: _Optional[int] = ..., party_id: _Optional[str] = ..., match: _Optional[_Union[MatchView, _Mapping]] = ...) -> None: ...

class Seat(_message.Message):
    __slots__ = ("seat", "player_id", "display_name", "is_bot", "team")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    PLAYER_ID_FIELD_NUMBER: _ClassVar[int]
    DISPLAY_NAME_FIELD_NUMBER: _ClassVar[int]
    IS_BOT_FIELD_NUMBER: _ClassVar[int]
    TEAM_FIELD_NUMBER: _ClassVar[int]
    seat: int
    player_id: str
    display_name: str
    is_bot: bool
    team: int
    def __init__(self, seat: _Optional[int] = ..., player_id: _Optional[str] = ..., display_name: _Optional[str] = ..., is_bot: _Optional[bool] = ..., team: _Optional[int] = ...) -> None: ...

class MatchView(_message.Message):
    __slots__ = ("table_id", "mode", "seat", "seat_token", "seats", "rated", "status", "rule_card", "kind", "formed_unix_ms")
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SEAT_TOKEN_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    RATED_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    RULE_CARD_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    FORMED_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    mode: str
    seat: int
    seat_token: str
    seats: _containers.RepeatedCompositeFieldContainer[Seat]
    rated: bool
    status: str
    rule_card: str
    kind: str
    formed_unix_ms: int
    def __init__(self, table_id: _Optional[str] = ..., mode: _Optional[str] = ..., seat: _Optional[int] = ..., seat_token: _Optional[str] = ..., seats: _Optional[_Iterable[_Union[Seat, _Mapping]]] = ..., rated: _Optional[bool] = ..., status: _Optional[str] = ..., rule_card: _Optional[str] = ..., kind: _Optional[str] = ..., formed_unix_ms: _Optional[int] = ...) -> None: ...

class CreateCustomTableRequest(_message.Message):
    __slots__ = ("host_token", "settings_json", "seats")
    HOST_TOKEN_FIELD_NUMBER: _ClassVar[int]
    SETTINGS_JSON_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    host_token: str
    settings_json: str
    seats: int
    def __init__(self, host_token: _Optional[str] = ..., settings_json: _Optional[str] = ..., seats: _Optional[int] = ...) -> None: ...

class JoinCustomTableRequest(_message.Message):
    __slots__ = ("player_token", "lobby_id")
    PLAYER_TOKEN_FIELD_NUMBER: _ClassVar[int]
    LOBBY_ID_FIELD_NUMBER: _ClassVar[int]
    player_token: str
    lobby_id: str
    def __init__(self, player_token: _Optional[str] = ..., lobby_id: _Optional[str] = ...) -> None: ...

class GetLobbyRequest(_message.Message):
    __slots__ = ("player_token", "lobby_id")
    PLAYER_TOKEN_FIELD_NUMBER: _ClassVar[int]
    LOBBY_ID_FIELD_NUMBER: _ClassVar[int]
    player_token: str
    lobby_id: str
    def __init__(self, player_token: _Optional[str] = ..., lobby_id: _Optional[str] = ...) -> None: ...

class StartCustomTableRequest(_message.Message):
    __slots__ = ("host_token", "lobby_id", "bot_fill")
    HOST_TOKEN_FIELD_NUMBER: _ClassVar[int]
    LOBBY_ID_FIELD_NUMBER: _ClassVar[int]
    BOT_FILL_FIELD_NUMBER: _ClassVar[int]
    host_token: str
    lobby_id: str
    bot_fill: bool
    def __init__(self, host_token: _Optional[str] = ..., lobby_id: _Optional[str] = ..., bot_fill: _Optional[bool] = ...) -> None: ...

class LobbyMember(_message.Message):
    __slots__ = ("player_id", "display_name", "is_host")
    PLAYER_ID_FIELD_NUMBER: _ClassVar[int]
    DISPLAY_NAME_FIELD_NUMBER: _ClassVar[int]
    IS_HOST_FIELD_NUMBER: _ClassVar[int]
    player_id: str
    display_name: str
    is_host: bool
    def __init__(self, player_id: _Optional[str] = ..., display_name: _Optional[str] = ..., is_host: _Optional[bool] = ...) -> None: ...

class LobbyView(_message.Message):
    __slots__ = ("lobby_id", "host_player_id", "settings_json", "seats", "rule_card", "status", "members", "match")
    LOBBY_ID_FIELD_NUMBER: _ClassVar[int]
    HOST_PLAYER_ID_FIELD_NUMBER: _ClassVar[int]
    SETTINGS_JSON_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    RULE_CARD_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    MEMBERS_FIELD_NUMBER: _ClassVar[int]
    MATCH_FIELD_NUMBER: _ClassVar[int]
    lobby_id: str
    host_player_id: str
    settings_json: str
    seats: int
    rule_card: str
    status: str
    members: _containers.RepeatedCompositeFieldContainer[LobbyMember]
    match: MatchView
    def __init__(self, lobby_id: _Optional[str] = ..., host_player_id: _Optional[str] = ..., settings_json: _Optional[str] = ..., seats: _Optional[int] = ..., rule_card: _Optional[str] = ..., status: _Optional[str] = ..., members: _Optional[_Iterable[_Union[LobbyMember, _Mapping]]] = ..., match: _Optional[_Union[MatchView, _Mapping]] = ...) -> None: ...

class ListTablesRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class RunningTable(_message.Message):
    __slots__ = ("table_id", "mode", "kind", "seats", "spectator_token", "rule_card", "formed_unix_ms")
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    SPECTATOR_TOKEN_FIELD_NUMBER: _ClassVar[int]
    RULE_CARD_FIELD_NUMBER: _ClassVar[int]
    FORMED_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    mode: str
    kind: str
    seats: _containers.RepeatedCompositeFieldContainer[Seat]
    spectator_token: str
    rule_card: str
    formed_unix_ms: int
    def __init__(self, table_id: _Optional[str] = ..., mode: _Optional[str] = ..., kind: _Optional[str] = ..., seats: _Optional[_Iterable[_Union[Seat, _Mapping]]] = ..., spectator_token: _Optional[str] = ..., rule_card: _Optional[str] = ..., formed_unix_ms: _Optional[int] = ...) -> None: ...

class ListTablesResponse(_message.Message):
    __slots__ = ("lobbies", "running", "waiting")
    class WaitingEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    LOBBIES_FIELD_NUMBER: _ClassVar[int]
    RUNNING_FIELD_NUMBER: _ClassVar[int]
    WAITING_FIELD_NUMBER: _ClassVar[int]
    lobbies: _containers.RepeatedCompositeFieldContainer[LobbyView]
    running: _containers.RepeatedCompositeFieldContainer[RunningTable]
    waiting: _containers.ScalarMap[str, int]
    def __init__(self, lobbies: _Optional[_Iterable[_Union[LobbyView, _Mapping]]] = ..., running: _Optional[_Iterable[_Union[RunningTable, _Mapping]]] = ..., waiting: _Optional[_Mapping[str, int]] = ...) -> None: ...

class MatchEvent(_message.Message):
    __slots__ = ("event_id", "type", "match", "winner", "places", "wall_unix_ms")
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    MATCH_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    PLACES_FIELD_NUMBER: _ClassVar[int]
    WALL_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    event_id: str
    type: str
    match: MatchView
    winner: int
    places: _containers.RepeatedScalarFieldContainer[int]
    wall_unix_ms: int
    def __init__(self, event_id: _Optional[str] = ..., type: _Optional[str] = ..., match: _Optional[_Union[MatchView, _Mapping]] = ..., winner: _Optional[int] = ..., places: _Optional[_Iterable[int]] = ..., wall_unix_ms: _Optional[int] = ...) -> None: ...
