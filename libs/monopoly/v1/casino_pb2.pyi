from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class PlaceBetRequest(_message.Message):
    __slots__ = ("table_id", "seat", "numbers", "seat_token", "bet_id")
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    NUMBERS_FIELD_NUMBER: _ClassVar[int]
    SEAT_TOKEN_FIELD_NUMBER: _ClassVar[int]
    BET_ID_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    seat: int
    numbers: _containers.RepeatedScalarFieldContainer[int]
    seat_token: str
    bet_id: str
    def __init__(self, table_id: _Optional[str] = ..., seat: _Optional[int] = ..., numbers: _Optional[_Iterable[int]] = ..., seat_token: _Optional[str] = ..., bet_id: _Optional[str] = ...) -> None: ...

class DeclineBetRequest(_message.Message):
    __slots__ = ("table_id", "seat", "seat_token", "bet_id")
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SEAT_TOKEN_FIELD_NUMBER: _ClassVar[int]
    BET_ID_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    seat: int
    seat_token: str
    bet_id: str
    def __init__(self, table_id: _Optional[str] = ..., seat: _Optional[int] = ..., seat_token: _Optional[str] = ..., bet_id: _Optional[str] = ...) -> None: ...

class GetBetRequest(_message.Message):
    __slots__ = ("table_id", "bet_id")
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    BET_ID_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    bet_id: str
    def __init__(self, table_id: _Optional[str] = ..., bet_id: _Optional[str] = ...) -> None: ...

class GetPoolRequest(_message.Message):
    __slots__ = ("table_id",)
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    def __init__(self, table_id: _Optional[str] = ...) -> None: ...

class BetView(_message.Message):
    __slots__ = ("bet_id", "table_id", "seat", "status", "numbers", "die", "jackpot_hit", "stake", "payout", "jackpot", "pool_after", "deadline_unix_ms")
    BET_ID_FIELD_NUMBER: _ClassVar[int]
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    NUMBERS_FIELD_NUMBER: _ClassVar[int]
    DIE_FIELD_NUMBER: _ClassVar[int]
    JACKPOT_HIT_FIELD_NUMBER: _ClassVar[int]
    STAKE_FIELD_NUMBER: _ClassVar[int]
    PAYOUT_FIELD_NUMBER: _ClassVar[int]
    JACKPOT_FIELD_NUMBER: _ClassVar[int]
    POOL_AFTER_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    bet_id: str
    table_id: str
    seat: int
    status: str
    numbers: _containers.RepeatedScalarFieldContainer[int]
    die: int
    jackpot_hit: bool
    stake: int
    payout: int
    jackpot: int
    pool_after: int
    deadline_unix_ms: int
    def __init__(self, bet_id: _Optional[str] = ..., table_id: _Optional[str] = ..., seat: _Optional[int] = ..., status: _Optional[str] = ..., numbers: _Optional[_Iterable[int]] = ..., die: _Optional[int] = ..., jackpot_hit: _Optional[bool] = ..., stake: _Optional[int] = ..., payout: _Optional[int] = ..., jackpot: _Optional[int] = ..., pool_after: _Optional[int] = ..., deadline_unix_ms: _Optional[int] = ...) -> None: ...

class PoolView(_message.Message):
    __slots__ = ("table_id", "pool", "bets")
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    POOL_FIELD_NUMBER: _ClassVar[int]
    BETS_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    pool: int
    bets: int
    def __init__(self, table_id: _Optional[str] = ..., pool: _Optional[int] = ..., bets: _Optional[int] = ...) -> None: ...

class CasinoEvent(_message.Message):
    __slots__ = ("event_id", "bet", "wall_unix_ms")
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    BET_FIELD_NUMBER: _ClassVar[int]
    WALL_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    event_id: str
    bet: BetView
    wall_unix_ms: int
    def __init__(self, event_id: _Optional[str] = ..., bet: _Optional[_Union[BetView, _Mapping]] = ..., wall_unix_ms: _Optional[int] = ...) -> None: ...
