from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable
from typing import ClassVar as _ClassVar, Optional as _Optional

DESCRIPTOR: _descriptor.FileDescriptor

class PlaceBidRequest(_message.Message):
    __slots__ = ("table_id", "auction_id", "seat", "amount", "seat_token")
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    AUCTION_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    AMOUNT_FIELD_NUMBER: _ClassVar[int]
    SEAT_TOKEN_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    auction_id: int
    seat: int
    amount: int
    seat_token: str
    def __init__(self, table_id: _Optional[str] = ..., auction_id: _Optional[int] = ..., seat: _Optional[int] = ..., amount: _Optional[int] = ..., seat_token: _Optional[str] = ...) -> None: ...

class PassRequest(_message.Message):
    __slots__ = ("table_id", "auction_id", "seat", "seat_token")
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    AUCTION_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SEAT_TOKEN_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    auction_id: int
    seat: int
    seat_token: str
    def __init__(self, table_id: _Optional[str] = ..., auction_id: _Optional[int] = ..., seat: _Optional[int] = ..., seat_token: _Optional[str] = ...) -> None: ...

class GetAuctionRequest(_message.Message):
    __slots__ = ("table_id", "auction_id")
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    AUCTION_ID_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    auction_id: int
    def __init__(self, table_id: _Optional[str] = ..., auction_id: _Optional[int] = ...) -> None: ...

class AuctionView(_message.Message):
    __slots__ = ("table_id", "auction_id", "square", "reason", "status", "bidders", "passed", "bidder", "min_bid", "high_bid", "high_bidder", "deadline_unix_ms", "winner", "price", "moves")
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    AUCTION_ID_FIELD_NUMBER: _ClassVar[int]
    SQUARE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    BIDDERS_FIELD_NUMBER: _ClassVar[int]
    PASSED_FIELD_NUMBER: _ClassVar[int]
    BIDDER_FIELD_NUMBER: _ClassVar[int]
    MIN_BID_FIELD_NUMBER: _ClassVar[int]
    HIGH_BID_FIELD_NUMBER: _ClassVar[int]
    HIGH_BIDDER_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    PRICE_FIELD_NUMBER: _ClassVar[int]
    MOVES_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    auction_id: int
    square: int
    reason: str
    status: str
    bidders: _containers.RepeatedScalarFieldContainer[int]
    passed: _containers.RepeatedScalarFieldContainer[bool]
    bidder: int
    min_bid: int
    high_bid: int
    high_bidder: int
    deadline_unix_ms: int
    winner: int
    price: int
    moves: int
    def __init__(self, table_id: _Optional[str] = ..., auction_id: _Optional[int] = ..., square: _Optional[int] = ..., reason: _Optional[str] = ..., status: _Optional[str] = ..., bidders: _Optional[_Iterable[int]] = ..., passed: _Optional[_Iterable[bool]] = ..., bidder: _Optional[int] = ..., min_bid: _Optional[int] = ..., high_bid: _Optional[int] = ..., high_bidder: _Optional[int] = ..., deadline_unix_ms: _Optional[int] = ..., winner: _Optional[int] = ..., price: _Optional[int] = ..., moves: _Optional[int] = ...) -> None: ...

class AuctionEvent(_message.Message):
    __slots__ = ("event_id", "table_id", "auction_id", "type", "seat", "amount", "square", "winner", "price", "wall_unix_ms")
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    AUCTION_ID_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    AMOUNT_FIELD_NUMBER: _ClassVar[int]
    SQUARE_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    PRICE_FIELD_NUMBER: _ClassVar[int]
    WALL_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    event_id: str
    table_id: str
    auction_id: int
    type: str
    seat: int
    amount: int
    square: int
    winner: int
    price: int
    wall_unix_ms: int
    def __init__(self, event_id: _Optional[str] = ..., table_id: _Optional[str] = ..., auction_id: _Optional[int] = ..., type: _Optional[str] = ..., seat: _Optional[int] = ..., amount: _Optional[int] = ..., square: _Optional[int] = ..., winner: _Optional[int] = ..., price: _Optional[int] = ..., wall_unix_ms: _Optional[int] = ...) -> None: ...
