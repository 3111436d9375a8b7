from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class TradeTerms(_message.Message):
    __slots__ = ("counterparty", "give_cash", "give_squares", "take_cash", "take_squares", "give_cards", "take_cards")
    COUNTERPARTY_FIELD_NUMBER: _ClassVar[int]
    GIVE_CASH_FIELD_NUMBER: _ClassVar[int]
    GIVE_SQUARES_FIELD_NUMBER: _ClassVar[int]
    TAKE_CASH_FIELD_NUMBER: _ClassVar[int]
    TAKE_SQUARES_FIELD_NUMBER: _ClassVar[int]
    GIVE_CARDS_FIELD_NUMBER: _ClassVar[int]
    TAKE_CARDS_FIELD_NUMBER: _ClassVar[int]
    counterparty: int
    give_cash: int
    give_squares: _containers.RepeatedScalarFieldContainer[int]
    take_cash: int
    take_squares: _containers.RepeatedScalarFieldContainer[int]
    give_cards: _containers.RepeatedScalarFieldContainer[int]
    take_cards: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, counterparty: _Optional[int] = ..., give_cash: _Optional[int] = ..., give_squares: _Optional[_Iterable[int]] = ..., take_cash: _Optional[int] = ..., take_squares: _Optional[_Iterable[int]] = ..., give_cards: _Optional[_Iterable[int]] = ..., take_cards: _Optional[_Iterable[int]] = ...) -> None: ...

class ProposeTradeRequest(_message.Message):
    __slots__ = ("table_id", "seat", "seat_token", "terms", "request_id")
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SEAT_TOKEN_FIELD_NUMBER: _ClassVar[int]
    TERMS_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    seat: int
    seat_token: str
    terms: TradeTerms
    request_id: str
    def __init__(self, table_id: _Optional[str] = ..., seat: _Optional[int] = ..., seat_token: _Optional[str] = ..., terms: _Optional[_Union[TradeTerms, _Mapping]] = ..., request_id: _Optional[str] = ...) -> None: ...

class TradeActionRequest(_message.Message):
    __slots__ = ("table_id", "trade_id", "seat", "seat_token")
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    TRADE_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SEAT_TOKEN_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    trade_id: int
    seat: int
    seat_token: str
    def __init__(self, table_id: _Optional[str] = ..., trade_id: _Optional[int] = ..., seat: _Optional[int] = ..., seat_token: _Optional[str] = ...) -> None: ...

class ListTradesRequest(_message.Message):
    __slots__ = ("table_id", "open_only")
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    OPEN_ONLY_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    open_only: bool
    def __init__(self, table_id: _Optional[str] = ..., open_only: _Optional[bool] = ...) -> None: ...

class TradeView(_message.Message):
    __slots__ = ("table_id", "trade_id", "proposer", "terms", "status", "turn_no", "reason", "rule", "table_seq", "mortgaged_squares")
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    TRADE_ID_FIELD_NUMBER: _ClassVar[int]
    PROPOSER_FIELD_NUMBER: _ClassVar[int]
    TERMS_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    TURN_NO_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    RULE_FIELD_NUMBER: _ClassVar[int]
    TABLE_SEQ_FIELD_NUMBER: _ClassVar[int]
    MORTGAGED_SQUARES_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    trade_id: int
    proposer: int
    terms: TradeTerms
    status: str
    turn_no: int
    reason: str
    rule: str
    table_seq: int
    mortgaged_squares: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, table_id: _Optional[str] = ..., trade_id: _Optional[int] = ..., proposer: _Optional[int] = ..., terms: _Optional[_Union[TradeTerms, _Mapping]] = ..., status: _Optional[str] = ..., turn_no: _Optional[int] = ..., reason: _Optional[str] = ..., rule: _Optional[str] = ..., table_seq: _Optional[int] = ..., mortgaged_squares: _Optional[_Iterable[int]] = ...) -> None: ...

class ListTradesResponse(_message.Message):
    __slots__ = ("trades",)
    TRADES_FIELD_NUMBER: _ClassVar[int]
    trades: _containers.RepeatedCompositeFieldContainer[TradeView]
    def __init__(self, trades: _Optional[_Iterable[_Union[TradeView, _Mapping]]] = ...) -> None: ...

class TradeEvent(_message.Message):
    __slots__ = ("event_id", "trade", "wall_unix_ms")
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    TRADE_FIELD_NUMBER: _ClassVar[int]
    WALL_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    event_id: str
    trade: TradeView
    wall_unix_ms: int
    def __init__(self, event_id: _Optional[str] = ..., trade: _Optional[_Union[TradeView, _Mapping]] = ..., wall_unix_ms: _Optional[int] = ...) -> None: ...
