from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class AuctionReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    AUCTION_REASON_UNSPECIFIED: _ClassVar[AuctionReason]
    AUCTION_REASON_DECLINED: _ClassVar[AuctionReason]
    AUCTION_REASON_MORTGAGE_EXPIRED: _ClassVar[AuctionReason]
    AUCTION_REASON_BANKRUPT: _ClassVar[AuctionReason]
    AUCTION_REASON_OWNER_SALE: _ClassVar[AuctionReason]
    AUCTION_REASON_HOUSE: _ClassVar[AuctionReason]
    AUCTION_REASON_HOTEL: _ClassVar[AuctionReason]

class BankPaidReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    BANK_PAID_REASON_UNSPECIFIED: _ClassVar[BankPaidReason]
    BANK_PAID_REASON_SALARY: _ClassVar[BankPaidReason]
    BANK_PAID_REASON_START_BONUS: _ClassVar[BankPaidReason]
    BANK_PAID_REASON_CARD: _ClassVar[BankPaidReason]

class BankruptCause(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    BANKRUPT_CAUSE_UNSPECIFIED: _ClassVar[BankruptCause]
    BANKRUPT_CAUSE_DEBT: _ClassVar[BankruptCause]
    BANKRUPT_CAUSE_SURRENDER: _ClassVar[BankruptCause]
    BANKRUPT_CAUSE_TIMEOUT: _ClassVar[BankruptCause]

class ChoiceKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CHOICE_KIND_UNSPECIFIED: _ClassVar[ChoiceKind]
    CHOICE_KIND_BUS: _ClassVar[ChoiceKind]
    CHOICE_KIND_TRIPLE: _ClassVar[ChoiceKind]
    CHOICE_KIND_DEMOLISH: _ClassVar[ChoiceKind]

class EndReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    END_REASON_UNSPECIFIED: _ClassVar[EndReason]
    END_REASON_LAST_PLAYER: _ClassVar[EndReason]
    END_REASON_LAST_TEAM: _ClassVar[EndReason]
    END_REASON_ROUND_CAP: _ClassVar[EndReason]
    END_REASON_SHORT_GAME: _ClassVar[EndReason]
    END_REASON_TIME_LIMIT: _ClassVar[EndReason]

class JailExit(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    JAIL_EXIT_UNSPECIFIED: _ClassVar[JailExit]
    JAIL_EXIT_FINE: _ClassVar[JailExit]
    JAIL_EXIT_CARD: _ClassVar[JailExit]
    JAIL_EXIT_DOUBLES: _ClassVar[JailExit]
    JAIL_EXIT_FORCED_FINE: _ClassVar[JailExit]

class JailReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    JAIL_REASON_UNSPECIFIED: _ClassVar[JailReason]
    JAIL_REASON_GO_TO_JAIL: _ClassVar[JailReason]
    JAIL_REASON_CARD: _ClassVar[JailReason]
    JAIL_REASON_THIRD_DOUBLES: _ClassVar[JailReason]

class PauseRejection(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PAUSE_REJECTION_UNSPECIFIED: _ClassVar[PauseRejection]
    PAUSE_REJECTION_VOTE: _ClassVar[PauseRejection]
    PAUSE_REJECTION_TIMEOUT: _ClassVar[PauseRejection]

class PaymentReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PAYMENT_REASON_UNSPECIFIED: _ClassVar[PaymentReason]
    PAYMENT_REASON_RENT: _ClassVar[PaymentReason]
    PAYMENT_REASON_TAX: _ClassVar[PaymentReason]
    PAYMENT_REASON_CARD: _ClassVar[PaymentReason]
    PAYMENT_REASON_REPAIRS: _ClassVar[PaymentReason]
    PAYMENT_REASON_JAIL_FINE: _ClassVar[PaymentReason]
    PAYMENT_REASON_AUCTION: _ClassVar[PaymentReason]
    PAYMENT_REASON_MORTGAGE_FEE: _ClassVar[PaymentReason]

class SquareKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SQUARE_KIND_UNSPECIFIED: _ClassVar[SquareKind]
    SQUARE_KIND_START: _ClassVar[SquareKind]
    SQUARE_KIND_PROPERTY: _ClassVar[SquareKind]
    SQUARE_KIND_RAILROAD: _ClassVar[SquareKind]
    SQUARE_KIND_UTILITY: _ClassVar[SquareKind]
    SQUARE_KIND_CHANCE: _ClassVar[SquareKind]
    SQUARE_KIND_CHEST: _ClassVar[SquareKind]
    SQUARE_KIND_TAX: _ClassVar[SquareKind]
    SQUARE_KIND_JAIL: _ClassVar[SquareKind]
    SQUARE_KIND_CASINO: _ClassVar[SquareKind]
    SQUARE_KIND_FREE_PARKING: _ClassVar[SquareKind]
    SQUARE_KIND_GO_TO_JAIL: _ClassVar[SquareKind]

class TimeoutKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TIMEOUT_KIND_UNSPECIFIED: _ClassVar[TimeoutKind]
    TIMEOUT_KIND_BID: _ClassVar[TimeoutKind]
    TIMEOUT_KIND_TRADE: _ClassVar[TimeoutKind]
    TIMEOUT_KIND_DEBT: _ClassVar[TimeoutKind]
AUCTION_REASON_UNSPECIFIED: AuctionReason
AUCTION_REASON_DECLINED: AuctionReason
AUCTION_REASON_MORTGAGE_EXPIRED: AuctionReason
AUCTION_REASON_BANKRUPT: AuctionReason
AUCTION_REASON_OWNER_SALE: AuctionReason
AUCTION_REASON_HOUSE: AuctionReason
AUCTION_REASON_HOTEL: AuctionReason
BANK_PAID_REASON_UNSPECIFIED: BankPaidReason
BANK_PAID_REASON_SALARY: BankPaidReason
BANK_PAID_REASON_START_BONUS: BankPaidReason
BANK_PAID_REASON_CARD: BankPaidReason
BANKRUPT_CAUSE_UNSPECIFIED: BankruptCause
BANKRUPT_CAUSE_DEBT: BankruptCause
BANKRUPT_CAUSE_SURRENDER: BankruptCause
BANKRUPT_CAUSE_TIMEOUT: BankruptCause
CHOICE_KIND_UNSPECIFIED: ChoiceKind
CHOICE_KIND_BUS: ChoiceKind
CHOICE_KIND_TRIPLE: ChoiceKind
CHOICE_KIND_DEMOLISH: ChoiceKind
END_REASON_UNSPECIFIED: EndReason
END_REASON_LAST_PLAYER: EndReason
END_REASON_LAST_TEAM: EndReason
END_REASON_ROUND_CAP: EndReason
END_REASON_SHORT_GAME: EndReason
END_REASON_TIME_LIMIT: EndReason
JAIL_EXIT_UNSPECIFIED: JailExit
JAIL_EXIT_FINE: JailExit
JAIL_EXIT_CARD: JailExit
JAIL_EXIT_DOUBLES: JailExit
JAIL_EXIT_FORCED_FINE: JailExit
JAIL_REASON_UNSPECIFIED: JailReason
JAIL_REASON_GO_TO_JAIL: JailReason
JAIL_REASON_CARD: JailReason
JAIL_REASON_THIRD_DOUBLES: JailReason
PAUSE_REJECTION_UNSPECIFIED: PauseRejection
PAUSE_REJECTION_VOTE: PauseRejection
PAUSE_REJECTION_TIMEOUT: PauseRejection
PAYMENT_REASON_UNSPECIFIED: PaymentReason
PAYMENT_REASON_RENT: PaymentReason
PAYMENT_REASON_TAX: PaymentReason
PAYMENT_REASON_CARD: PaymentReason
PAYMENT_REASON_REPAIRS: PaymentReason
PAYMENT_REASON_JAIL_FINE: PaymentReason
PAYMENT_REASON_AUCTION: PaymentReason
PAYMENT_REASON_MORTGAGE_FEE: PaymentReason
SQUARE_KIND_UNSPECIFIED: SquareKind
SQUARE_KIND_START: SquareKind
SQUARE_KIND_PROPERTY: SquareKind
SQUARE_KIND_RAILROAD: SquareKind
SQUARE_KIND_UTILITY: SquareKind
SQUARE_KIND_CHANCE: SquareKind
SQUARE_KIND_CHEST: SquareKind
SQUARE_KIND_TAX: SquareKind
SQUARE_KIND_JAIL: SquareKind
SQUARE_KIND_CASINO: SquareKind
SQUARE_KIND_FREE_PARKING: SquareKind
SQUARE_KIND_GO_TO_JAIL: SquareKind
TIMEOUT_KIND_UNSPECIFIED: TimeoutKind
TIMEOUT_KIND_BID: TimeoutKind
TIMEOUT_KIND_TRADE: TimeoutKind
TIMEOUT_KIND_DEBT: TimeoutKind

class AuctionLimitsChanged(_message.Message):
    __slots__ = ("auction_id", "limits")
    AUCTION_ID_FIELD_NUMBER: _ClassVar[int]
    LIMITS_FIELD_NUMBER: _ClassVar[int]
    auction_id: int
    limits: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, auction_id: _Optional[int] = ..., limits: _Optional[_Iterable[int]] = ...) -> None: ...

class AuctionSettled(_message.Message):
    __slots__ = ("auction_id", "square", "winner", "price")
    AUCTION_ID_FIELD_NUMBER: _ClassVar[int]
    SQUARE_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    PRICE_FIELD_NUMBER: _ClassVar[int]
    auction_id: int
    square: int
    winner: int
    price: int
    def __init__(self, auction_id: _Optional[int] = ..., square: _Optional[int] = ..., winner: _Optional[int] = ..., price: _Optional[int] = ...) -> None: ...

class AuctionStarted(_message.Message):
    __slots__ = ("auction_id", "square", "reason", "reason_code", "bidders", "start_price", "increment", "seller", "limits", "bid_ms", "bid_rule")
    AUCTION_ID_FIELD_NUMBER: _ClassVar[int]
    SQUARE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    REASON_CODE_FIELD_NUMBER: _ClassVar[int]
    BIDDERS_FIELD_NUMBER: _ClassVar[int]
    START_PRICE_FIELD_NUMBER: _ClassVar[int]
    INCREMENT_FIELD_NUMBER: _ClassVar[int]
    SELLER_FIELD_NUMBER: _ClassVar[int]
    LIMITS_FIELD_NUMBER: _ClassVar[int]
    BID_MS_FIELD_NUMBER: _ClassVar[int]
    BID_RULE_FIELD_NUMBER: _ClassVar[int]
    auction_id: int
    square: int
    reason: str
    reason_code: AuctionReason
    bidders: _containers.RepeatedScalarFieldContainer[int]
    start_price: int
    increment: int
    seller: int
    limits: _containers.RepeatedScalarFieldContainer[int]
    bid_ms: int
    bid_rule: str
    def __init__(self, auction_id: _Optional[int] = ..., square: _Optional[int] = ..., reason: _Optional[str] = ..., reason_code: _Optional[_Union[AuctionReason, str]] = ..., bidders: _Optional[_Iterable[int]] = ..., start_price: _Optional[int] = ..., increment: _Optional[int] = ..., seller: _Optional[int] = ..., limits: _Optional[_Iterable[int]] = ..., bid_ms: _Optional[int] = ..., bid_rule: _Optional[str] = ...) -> None: ...

class BackConfirmed(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class BankPaid(_message.Message):
    __slots__ = ("seat", "amount", "reason", "reason_code")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    AMOUNT_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    REASON_CODE_FIELD_NUMBER: _ClassVar[int]
    seat: int
    amount: int
    reason: str
    reason_code: BankPaidReason
    def __init__(self, seat: _Optional[int] = ..., amount: _Optional[int] = ..., reason: _Optional[str] = ..., reason_code: _Optional[_Union[BankPaidReason, str]] = ...) -> None: ...

class BetDeclined(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class BetPlaced(_message.Message):
    __slots__ = ("seat", "numbers", "stake", "pool_add")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    NUMBERS_FIELD_NUMBER: _ClassVar[int]
    STAKE_FIELD_NUMBER: _ClassVar[int]
    POOL_ADD_FIELD_NUMBER: _ClassVar[int]
    seat: int
    numbers: _containers.RepeatedScalarFieldContainer[int]
    stake: int
    pool_add: int
    def __init__(self, seat: _Optional[int] = ..., numbers: _Optional[_Iterable[int]] = ..., stake: _Optional[int] = ..., pool_add: _Optional[int] = ...) -> None: ...

class BetSettled(_message.Message):
    __slots__ = ("seat", "numbers", "die", "jackpot_hit", "payout", "jackpot", "draws")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    NUMBERS_FIELD_NUMBER: _ClassVar[int]
    DIE_FIELD_NUMBER: _ClassVar[int]
    JACKPOT_HIT_FIELD_NUMBER: _ClassVar[int]
    PAYOUT_FIELD_NUMBER: _ClassVar[int]
    JACKPOT_FIELD_NUMBER: _ClassVar[int]
    DRAWS_FIELD_NUMBER: _ClassVar[int]
    seat: int
    numbers: _containers.RepeatedScalarFieldContainer[int]
    die: int
    jackpot_hit: bool
    payout: int
    jackpot: int
    draws: int
    def __init__(self, seat: _Optional[int] = ..., numbers: _Optional[_Iterable[int]] = ..., die: _Optional[int] = ..., jackpot_hit: _Optional[bool] = ..., payout: _Optional[int] = ..., jackpot: _Optional[int] = ..., draws: _Optional[int] = ...) -> None: ...

class BidPassed(_message.Message):
    __slots__ = ("auction_id", "seat")
    AUCTION_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    auction_id: int
    seat: int
    def __init__(self, auction_id: _Optional[int] = ..., seat: _Optional[int] = ...) -> None: ...

class BidPlaced(_message.Message):
    __slots__ = ("auction_id", "seat", "amount")
    AUCTION_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    AMOUNT_FIELD_NUMBER: _ClassVar[int]
    auction_id: int
    seat: int
    amount: int
    def __init__(self, auction_id: _Optional[int] = ..., seat: _Optional[int] = ..., amount: _Optional[int] = ...) -> None: ...

class BoardDealt(_message.Message):
    __slots__ = ("squares", "owners")
    SQUARES_FIELD_NUMBER: _ClassVar[int]
    OWNERS_FIELD_NUMBER: _ClassVar[int]
    squares: _containers.RepeatedScalarFieldContainer[int]
    owners: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, squares: _Optional[_Iterable[int]] = ..., owners: _Optional[_Iterable[int]] = ...) -> None: ...

class BoardSquare(_message.Message):
    __slots__ = ("index", "kind", "kind_code", "name", "price", "rents", "house_cost", "group", "tax")
    INDEX_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    KIND_CODE_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PRICE_FIELD_NUMBER: _ClassVar[int]
    RENTS_FIELD_NUMBER: _ClassVar[int]
    HOUSE_COST_FIELD_NUMBER: _ClassVar[int]
    GROUP_FIELD_NUMBER: _ClassVar[int]
    TAX_FIELD_NUMBER: _ClassVar[int]
    index: int
    kind: str
    kind_code: SquareKind
    name: str
    price: int
    rents: _containers.RepeatedScalarFieldContainer[int]
    house_cost: int
    group: int
    tax: int
    def __init__(self, index: _Optional[int] = ..., kind: _Optional[str] = ..., kind_code: _Optional[_Union[SquareKind, str]] = ..., name: _Optional[str] = ..., price: _Optional[int] = ..., rents: _Optional[_Iterable[int]] = ..., house_cost: _Optional[int] = ..., group: _Optional[int] = ..., tax: _Optional[int] = ...) -> None: ...

class BuildingBuilt(_message.Message):
    __slots__ = ("seat", "square", "level", "cost")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SQUARE_FIELD_NUMBER: _ClassVar[int]
    LEVEL_FIELD_NUMBER: _ClassVar[int]
    COST_FIELD_NUMBER: _ClassVar[int]
    seat: int
    square: int
    level: int
    cost: int
    def __init__(self, seat: _Optional[int] = ..., square: _Optional[int] = ..., level: _Optional[int] = ..., cost: _Optional[int] = ...) -> None: ...

class BuildingDemolished(_message.Message):
    __slots__ = ("seat", "square", "level")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SQUARE_FIELD_NUMBER: _ClassVar[int]
    LEVEL_FIELD_NUMBER: _ClassVar[int]
    seat: int
    square: int
    level: int
    def __init__(self, seat: _Optional[int] = ..., square: _Optional[int] = ..., level: _Optional[int] = ...) -> None: ...

class BuildingPlaced(_message.Message):
    __slots__ = ("seat", "square", "level")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SQUARE_FIELD_NUMBER: _ClassVar[int]
    LEVEL_FIELD_NUMBER: _ClassVar[int]
    seat: int
    square: int
    level: int
    def __init__(self, seat: _Optional[int] = ..., square: _Optional[int] = ..., level: _Optional[int] = ...) -> None: ...

class BuildingSold(_message.Message):
    __slots__ = ("seat", "square", "level", "refund")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SQUARE_FIELD_NUMBER: _ClassVar[int]
    LEVEL_FIELD_NUMBER: _ClassVar[int]
    REFUND_FIELD_NUMBER: _ClassVar[int]
    seat: int
    square: int
    level: int
    refund: int
    def __init__(self, seat: _Optional[int] = ..., square: _Optional[int] = ..., level: _Optional[int] = ..., refund: _Optional[int] = ...) -> None: ...

class BuildingsSoldDown(_message.Message):
    __slots__ = ("seat", "squares", "levels", "refund")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SQUARES_FIELD_NUMBER: _ClassVar[int]
    LEVELS_FIELD_NUMBER: _ClassVar[int]
    REFUND_FIELD_NUMBER: _ClassVar[int]
    seat: int
    squares: _containers.RepeatedScalarFieldContainer[int]
    levels: _containers.RepeatedScalarFieldContainer[int]
    refund: int
    def __init__(self, seat: _Optional[int] = ..., squares: _Optional[_Iterable[int]] = ..., levels: _Optional[_Iterable[int]] = ..., refund: _Optional[int] = ...) -> None: ...

class BusMoveChosen(_message.Message):
    __slots__ = ("seat", "steps")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    STEPS_FIELD_NUMBER: _ClassVar[int]
    seat: int
    steps: int
    def __init__(self, seat: _Optional[int] = ..., steps: _Optional[int] = ...) -> None: ...

class CardDrawn(_message.Message):
    __slots__ = ("seat", "deck", "card")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    DECK_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    seat: int
    deck: str
    card: int
    def __init__(self, seat: _Optional[int] = ..., deck: _Optional[str] = ..., card: _Optional[int] = ...) -> None: ...

class CasinoOpened(_message.Message):
    __slots__ = ("seat", "cash", "deadline")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CASH_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_FIELD_NUMBER: _ClassVar[int]
    seat: int
    cash: int
    deadline: int
    def __init__(self, seat: _Optional[int] = ..., cash: _Optional[int] = ..., deadline: _Optional[int] = ...) -> None: ...

class ChoiceOffered(_message.Message):
    __slots__ = ("seat", "kind", "kind_code")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    KIND_CODE_FIELD_NUMBER: _ClassVar[int]
    seat: int
    kind: str
    kind_code: ChoiceKind
    def __init__(self, seat: _Optional[int] = ..., kind: _Optional[str] = ..., kind_code: _Optional[_Union[ChoiceKind, str]] = ...) -> None: ...

class ClockAdvanced(_message.Message):
    __slots__ = ("now",)
    NOW_FIELD_NUMBER: _ClassVar[int]
    now: int
    def __init__(self, now: _Optional[int] = ...) -> None: ...

class DeckShuffled(_message.Message):
    __slots__ = ("deck", "cards")
    DECK_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    deck: str
    cards: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, deck: _Optional[str] = ..., cards: _Optional[_Iterable[int]] = ...) -> None: ...

class DeedsDealt(_message.Message):
    __slots__ = ("squares", "owners", "prices")
    SQUARES_FIELD_NUMBER: _ClassVar[int]
    OWNERS_FIELD_NUMBER: _ClassVar[int]
    PRICES_FIELD_NUMBER: _ClassVar[int]
    squares: _containers.RepeatedScalarFieldContainer[int]
    owners: _containers.RepeatedScalarFieldContainer[int]
    prices: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, squares: _Optional[_Iterable[int]] = ..., owners: _Optional[_Iterable[int]] = ..., prices: _Optional[_Iterable[int]] = ...) -> None: ...

class DiceRolled(_message.Message):
    __slots__ = ("seat", "d1", "d2", "speed")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    D1_FIELD_NUMBER: _ClassVar[int]
    D2_FIELD_NUMBER: _ClassVar[int]
    SPEED_FIELD_NUMBER: _ClassVar[int]
    seat: int
    d1: int
    d2: int
    speed: int
    def __init__(self, seat: _Optional[int] = ..., d1: _Optional[int] = ..., d2: _Optional[int] = ..., speed: _Optional[int] = ...) -> None: ...

class DiceThrown(_message.Message):
    __slots__ = ("seat", "d1", "d2")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    D1_FIELD_NUMBER: _ClassVar[int]
    D2_FIELD_NUMBER: _ClassVar[int]
    seat: int
    d1: int
    d2: int
    def __init__(self, seat: _Optional[int] = ..., d1: _Optional[int] = ..., d2: _Optional[int] = ...) -> None: ...

class GameEnded(_message.Message):
    __slots__ = ("winner", "places", "reason", "reason_code", "game_ms", "scale")
    WINNER_FIELD_NUMBER: _ClassVar[int]
    PLACES_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    REASON_CODE_FIELD_NUMBER: _ClassVar[int]
    GAME_MS_FIELD_NUMBER: _ClassVar[int]
    SCALE_FIELD_NUMBER: _ClassVar[int]
    winner: int
    places: _containers.RepeatedScalarFieldContainer[int]
    reason: str
    reason_code: EndReason
    game_ms: int
    scale: int
    def __init__(self, winner: _Optional[int] = ..., places: _Optional[_Iterable[int]] = ..., reason: _Optional[str] = ..., reason_code: _Optional[_Union[EndReason, str]] = ..., game_ms: _Optional[int] = ..., scale: _Optional[int] = ...) -> None: ...

class GamePaused(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GameResumed(_message.Message):
    __slots__ = ("paused_ms",)
    PAUSED_MS_FIELD_NUMBER: _ClassVar[int]
    paused_ms: int
    def __init__(self, paused_ms: _Optional[int] = ...) -> None: ...

class JailCardsTraded(_message.Message):
    __slots__ = ("trade_id", "proposer", "counterparty", "give_cards", "take_cards")
    TRADE_ID_FIELD_NUMBER: _ClassVar[int]
    PROPOSER_FIELD_NUMBER: _ClassVar[int]
    COUNTERPARTY_FIELD_NUMBER: _ClassVar[int]
    GIVE_CARDS_FIELD_NUMBER: _ClassVar[int]
    TAKE_CARDS_FIELD_NUMBER: _ClassVar[int]
    trade_id: int
    proposer: int
    counterparty: int
    give_cards: _containers.RepeatedScalarFieldContainer[int]
    take_cards: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, trade_id: _Optional[int] = ..., proposer: _Optional[int] = ..., counterparty: _Optional[int] = ..., give_cards: _Optional[_Iterable[int]] = ..., take_cards: _Optional[_Iterable[int]] = ...) -> None: ...

class LeftJail(_message.Message):
    __slots__ = ("seat", "how", "how_code", "fine")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    HOW_FIELD_NUMBER: _ClassVar[int]
    HOW_CODE_FIELD_NUMBER: _ClassVar[int]
    FINE_FIELD_NUMBER: _ClassVar[int]
    seat: int
    how: str
    how_code: JailExit
    fine: int
    def __init__(self, seat: _Optional[int] = ..., how: _Optional[str] = ..., how_code: _Optional[_Union[JailExit, str]] = ..., fine: _Optional[int] = ...) -> None: ...

class MortgageExpired(_message.Message):
    __slots__ = ("seat", "square")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SQUARE_FIELD_NUMBER: _ClassVar[int]
    seat: int
    square: int
    def __init__(self, seat: _Optional[int] = ..., square: _Optional[int] = ...) -> None: ...

class MortgageFeeDue(_message.Message):
    __slots__ = ("seat", "square", "amount")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SQUARE_FIELD_NUMBER: _ClassVar[int]
    AMOUNT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    square: int
    amount: int
    def __init__(self, seat: _Optional[int] = ..., square: _Optional[int] = ..., amount: _Optional[int] = ...) -> None: ...

class MortgageLifted(_message.Message):
    __slots__ = ("seat", "square", "cost")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SQUARE_FIELD_NUMBER: _ClassVar[int]
    COST_FIELD_NUMBER: _ClassVar[int]
    seat: int
    square: int
    cost: int
    def __init__(self, seat: _Optional[int] = ..., square: _Optional[int] = ..., cost: _Optional[int] = ...) -> None: ...

class Moved(_message.Message):
    __slots__ = ("seat", "from_square", "to_square")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    FROM_SQUARE_FIELD_NUMBER: _ClassVar[int]
    TO_SQUARE_FIELD_NUMBER: _ClassVar[int]
    seat: int
    from_square: int
    to_square: int
    def __init__(self, seat: _Optional[int] = ..., from_square: _Optional[int] = ..., to_square: _Optional[int] = ...) -> None: ...

class MrMonopolyMoved(_message.Message):
    __slots__ = ("seat", "square")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SQUARE_FIELD_NUMBER: _ClassVar[int]
    seat: int
    square: int
    def __init__(self, seat: _Optional[int] = ..., square: _Optional[int] = ...) -> None: ...

class PauseRejected(_message.Message):
    __slots__ = ("reason", "reason_code")
    REASON_FIELD_NUMBER: _ClassVar[int]
    REASON_CODE_FIELD_NUMBER: _ClassVar[int]
    reason: str
    reason_code: PauseRejection
    def __init__(self, reason: _Optional[str] = ..., reason_code: _Optional[_Union[PauseRejection, str]] = ...) -> None: ...

class PauseRequested(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class PauseVoted(_message.Message):
    __slots__ = ("seat", "yes")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    YES_FIELD_NUMBER: _ClassVar[int]
    seat: int
    yes: bool
    def __init__(self, seat: _Optional[int] = ..., yes: _Optional[bool] = ...) -> None: ...

class PaymentDue(_message.Message):
    __slots__ = ("debtor", "creditor", "amount", "reason", "reason_code", "then_move", "bank_share", "square")
    DEBTOR_FIELD_NUMBER: _ClassVar[int]
    CREDITOR_FIELD_NUMBER: _ClassVar[int]
    AMOUNT_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    REASON_CODE_FIELD_NUMBER: _ClassVar[int]
    THEN_MOVE_FIELD_NUMBER: _ClassVar[int]
    BANK_SHARE_FIELD_NUMBER: _ClassVar[int]
    SQUARE_FIELD_NUMBER: _ClassVar[int]
    debtor: int
    creditor: int
    amount: int
    reason: str
    reason_code: PaymentReason
    then_move: bool
    bank_share: int
    square: int
    def __init__(self, debtor: _Optional[int] = ..., creditor: _Optional[int] = ..., amount: _Optional[int] = ..., reason: _Optional[str] = ..., reason_code: _Optional[_Union[PaymentReason, str]] = ..., then_move: _Optional[bool] = ..., bank_share: _Optional[int] = ..., square: _Optional[int] = ...) -> None: ...

class PaymentMade(_message.Message):
    __slots__ = ("debtor", "creditor", "amount", "reason", "reason_code", "bank_share", "square")
    DEBTOR_FIELD_NUMBER: _ClassVar[int]
    CREDITOR_FIELD_NUMBER: _ClassVar[int]
    AMOUNT_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    REASON_CODE_FIELD_NUMBER: _ClassVar[int]
    BANK_SHARE_FIELD_NUMBER: _ClassVar[int]
    SQUARE_FIELD_NUMBER: _ClassVar[int]
    debtor: int
    creditor: int
    amount: int
    reason: str
    reason_code: PaymentReason
    bank_share: int
    square: int
    def __init__(self, debtor: _Optional[int] = ..., creditor: _Optional[int] = ..., amount: _Optional[int] = ..., reason: _Optional[str] = ..., reason_code: _Optional[_Union[PaymentReason, str]] = ..., bank_share: _Optional[int] = ..., square: _Optional[int] = ...) -> None: ...

class PlayerBankrupt(_message.Message):
    __slots__ = ("seat", "creditor", "place", "cause", "cause_code")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CREDITOR_FIELD_NUMBER: _ClassVar[int]
    PLACE_FIELD_NUMBER: _ClassVar[int]
    CAUSE_FIELD_NUMBER: _ClassVar[int]
    CAUSE_CODE_FIELD_NUMBER: _ClassVar[int]
    seat: int
    creditor: int
    place: int
    cause: str
    cause_code: BankruptCause
    def __init__(self, seat: _Optional[int] = ..., creditor: _Optional[int] = ..., place: _Optional[int] = ..., cause: _Optional[str] = ..., cause_code: _Optional[_Union[BankruptCause, str]] = ...) -> None: ...

class PositionSet(_message.Message):
    __slots__ = ("order", "cash", "positions", "in_jail", "jail_turns", "jail_cards", "jail_card_holders", "bankrupt", "owners", "buildings", "mortgaged_round", "chance", "chest", "rng_counter", "clock", "jackpot")
    ORDER_FIELD_NUMBER: _ClassVar[int]
    CASH_FIELD_NUMBER: _ClassVar[int]
    POSITIONS_FIELD_NUMBER: _ClassVar[int]
    IN_JAIL_FIELD_NUMBER: _ClassVar[int]
    JAIL_TURNS_FIELD_NUMBER: _ClassVar[int]
    JAIL_CARDS_FIELD_NUMBER: _ClassVar[int]
    JAIL_CARD_HOLDERS_FIELD_NUMBER: _ClassVar[int]
    BANKRUPT_FIELD_NUMBER: _ClassVar[int]
    OWNERS_FIELD_NUMBER: _ClassVar[int]
    BUILDINGS_FIELD_NUMBER: _ClassVar[int]
    MORTGAGED_ROUND_FIELD_NUMBER: _ClassVar[int]
    CHANCE_FIELD_NUMBER: _ClassVar[int]
    CHEST_FIELD_NUMBER: _ClassVar[int]
    RNG_COUNTER_FIELD_NUMBER: _ClassVar[int]
    CLOCK_FIELD_NUMBER: _ClassVar[int]
    JACKPOT_FIELD_NUMBER: _ClassVar[int]
    order: _containers.RepeatedScalarFieldContainer[int]
    cash: _containers.RepeatedScalarFieldContainer[int]
    positions: _containers.RepeatedScalarFieldContainer[int]
    in_jail: _containers.RepeatedScalarFieldContainer[bool]
    jail_turns: _containers.RepeatedScalarFieldContainer[int]
    jail_cards: _containers.RepeatedScalarFieldContainer[int]
    jail_card_holders: _containers.RepeatedScalarFieldContainer[int]
    bankrupt: _containers.RepeatedScalarFieldContainer[int]
    owners: _containers.RepeatedScalarFieldContainer[int]
    buildings: _containers.RepeatedScalarFieldContainer[int]
    mortgaged_round: _containers.RepeatedScalarFieldContainer[int]
    chance: _containers.RepeatedScalarFieldContainer[int]
    chest: _containers.RepeatedScalarFieldContainer[int]
    rng_counter: int
    clock: int
    jackpot: int
    def __init__(self, order: _Optional[_Iterable[int]] = ..., cash: _Optional[_Iterable[int]] = ..., positions: _Optional[_Iterable[int]] = ..., in_jail: _Optional[_Iterable[bool]] = ..., jail_turns: _Optional[_Iterable[int]] = ..., jail_cards: _Optional[_Iterable[int]] = ..., jail_card_holders: _Optional[_Iterable[int]] = ..., bankrupt: _Optional[_Iterable[int]] = ..., owners: _Optional[_Iterable[int]] = ..., buildings: _Optional[_Iterable[int]] = ..., mortgaged_round: _Optional[_Iterable[int]] = ..., chance: _Optional[_Iterable[int]] = ..., chest: _Optional[_Iterable[int]] = ..., rng_counter: _Optional[int] = ..., clock: _Optional[int] = ..., jackpot: _Optional[int] = ...) -> None: ...

class PropertyBought(_message.Message):
    __slots__ = ("seat", "square", "price")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SQUARE_FIELD_NUMBER: _ClassVar[int]
    PRICE_FIELD_NUMBER: _ClassVar[int]
    seat: int
    square: int
    price: int
    def __init__(self, seat: _Optional[int] = ..., square: _Optional[int] = ..., price: _Optional[int] = ...) -> None: ...

class PropertyMortgaged(_message.Message):
    __slots__ = ("seat", "square", "amount")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SQUARE_FIELD_NUMBER: _ClassVar[int]
    AMOUNT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    square: int
    amount: int
    def __init__(self, seat: _Optional[int] = ..., square: _Optional[int] = ..., amount: _Optional[int] = ...) -> None: ...

class PurchaseDeclined(_message.Message):
    __slots__ = ("seat", "square")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SQUARE_FIELD_NUMBER: _ClassVar[int]
    seat: int
    square: int
    def __init__(self, seat: _Optional[int] = ..., square: _Optional[int] = ...) -> None: ...

class PurchaseOffered(_message.Message):
    __slots__ = ("seat", "square", "price")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SQUARE_FIELD_NUMBER: _ClassVar[int]
    PRICE_FIELD_NUMBER: _ClassVar[int]
    seat: int
    square: int
    price: int
    def __init__(self, seat: _Optional[int] = ..., square: _Optional[int] = ..., price: _Optional[int] = ...) -> None: ...

class RentClaimLapsed(_message.Message):
    __slots__ = ("owner",)
    OWNER_FIELD_NUMBER: _ClassVar[int]
    owner: int
    def __init__(self, owner: _Optional[int] = ...) -> None: ...

class RentClaimable(_message.Message):
    __slots__ = ("payer", "owner", "square", "amount")
    PAYER_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    SQUARE_FIELD_NUMBER: _ClassVar[int]
    AMOUNT_FIELD_NUMBER: _ClassVar[int]
    payer: int
    owner: int
    square: int
    amount: int
    def __init__(self, payer: _Optional[int] = ..., owner: _Optional[int] = ..., square: _Optional[int] = ..., amount: _Optional[int] = ...) -> None: ...

class RentClaimed(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class ResumeScheduled(_message.Message):
    __slots__ = ("at",)
    AT_FIELD_NUMBER: _ClassVar[int]
    at: int
    def __init__(self, at: _Optional[int] = ...) -> None: ...

class SentToJail(_message.Message):
    __slots__ = ("seat", "reason", "reason_code")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    REASON_CODE_FIELD_NUMBER: _ClassVar[int]
    seat: int
    reason: str
    reason_code: JailReason
    def __init__(self, seat: _Optional[int] = ..., reason: _Optional[str] = ..., reason_code: _Optional[_Union[JailReason, str]] = ...) -> None: ...

class SquareChosen(_message.Message):
    __slots__ = ("seat", "square")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SQUARE_FIELD_NUMBER: _ClassVar[int]
    seat: int
    square: int
    def __init__(self, seat: _Optional[int] = ..., square: _Optional[int] = ...) -> None: ...

class TableCreated(_message.Message):
    __slots__ = ("config_json", "seed", "players", "ruleset", "mode", "board", "group_names", "squares")
    CONFIG_JSON_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    RULESET_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    BOARD_FIELD_NUMBER: _ClassVar[int]
    GROUP_NAMES_FIELD_NUMBER: _ClassVar[int]
    SQUARES_FIELD_NUMBER: _ClassVar[int]
    config_json: str
    seed: int
    players: _containers.RepeatedScalarFieldContainer[str]
    ruleset: str
    mode: str
    board: str
    group_names: _containers.RepeatedScalarFieldContainer[str]
    squares: _containers.RepeatedCompositeFieldContainer[BoardSquare]
    def __init__(self, config_json: _Optional[str] = ..., seed: _Optional[int] = ..., players: _Optional[_Iterable[str]] = ..., ruleset: _Optional[str] = ..., mode: _Optional[str] = ..., board: _Optional[str] = ..., group_names: _Optional[_Iterable[str]] = ..., squares: _Optional[_Iterable[_Union[BoardSquare, _Mapping]]] = ...) -> None: ...

class TimedOut(_message.Message):
    __slots__ = ("seat", "what", "what_code")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    WHAT_FIELD_NUMBER: _ClassVar[int]
    WHAT_CODE_FIELD_NUMBER: _ClassVar[int]
    seat: int
    what: str
    what_code: TimeoutKind
    def __init__(self, seat: _Optional[int] = ..., what: _Optional[str] = ..., what_code: _Optional[_Union[TimeoutKind, str]] = ...) -> None: ...

class TradeCardsOffered(_message.Message):
    __slots__ = ("trade_id", "give_cards", "take_cards")
    TRADE_ID_FIELD_NUMBER: _ClassVar[int]
    GIVE_CARDS_FIELD_NUMBER: _ClassVar[int]
    TAKE_CARDS_FIELD_NUMBER: _ClassVar[int]
    trade_id: int
    give_cards: _containers.RepeatedScalarFieldContainer[int]
    take_cards: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, trade_id: _Optional[int] = ..., give_cards: _Optional[_Iterable[int]] = ..., take_cards: _Optional[_Iterable[int]] = ...) -> None: ...

class TradeDeclined(_message.Message):
    __slots__ = ("trade_id", "seat")
    TRADE_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    trade_id: int
    seat: int
    def __init__(self, trade_id: _Optional[int] = ..., seat: _Optional[int] = ...) -> None: ...

class TradeExecuted(_message.Message):
    __slots__ = ("trade_id", "proposer", "counterparty", "give_cash", "give_squares", "take_cash", "take_squares")
    TRADE_ID_FIELD_NUMBER: _ClassVar[int]
    PROPOSER_FIELD_NUMBER: _ClassVar[int]
    COUNTERPARTY_FIELD_NUMBER: _ClassVar[int]
    GIVE_CASH_FIELD_NUMBER: _ClassVar[int]
    GIVE_SQUARES_FIELD_NUMBER: _ClassVar[int]
    TAKE_CASH_FIELD_NUMBER: _ClassVar[int]
    TAKE_SQUARES_FIELD_NUMBER: _ClassVar[int]
    trade_id: int
    proposer: int
    counterparty: int
    give_cash: int
    give_squares: _containers.RepeatedScalarFieldContainer[int]
    take_cash: int
    take_squares: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, trade_id: _Optional[int] = ..., proposer: _Optional[int] = ..., counterparty: _Optional[int] = ..., give_cash: _Optional[int] = ..., give_squares: _Optional[_Iterable[int]] = ..., take_cash: _Optional[int] = ..., take_squares: _Optional[_Iterable[int]] = ...) -> None: ...

class TradeProposed(_message.Message):
    __slots__ = ("trade_id", "proposer", "counterparty", "give_cash", "give_squares", "take_cash", "take_squares")
    TRADE_ID_FIELD_NUMBER: _ClassVar[int]
    PROPOSER_FIELD_NUMBER: _ClassVar[int]
    COUNTERPARTY_FIELD_NUMBER: _ClassVar[int]
    GIVE_CASH_FIELD_NUMBER: _ClassVar[int]
    GIVE_SQUARES_FIELD_NUMBER: _ClassVar[int]
    TAKE_CASH_FIELD_NUMBER: _ClassVar[int]
    TAKE_SQUARES_FIELD_NUMBER: _ClassVar[int]
    trade_id: int
    proposer: int
    counterparty: int
    give_cash: int
    give_squares: _containers.RepeatedScalarFieldContainer[int]
    take_cash: int
    take_squares: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, trade_id: _Optional[int] = ..., proposer: _Optional[int] = ..., counterparty: _Optional[int] = ..., give_cash: _Optional[int] = ..., give_squares: _Optional[_Iterable[int]] = ..., take_cash: _Optional[int] = ..., take_squares: _Optional[_Iterable[int]] = ...) -> None: ...

class TurnEnded(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class TurnOrderSet(_message.Message):
    __slots__ = ("order",)
    ORDER_FIELD_NUMBER: _ClassVar[int]
    order: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, order: _Optional[_Iterable[int]] = ...) -> None: ...

class TurnStarted(_message.Message):
    __slots__ = ("seat", "round")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    seat: int
    round: int
    def __init__(self, seat: _Optional[int] = ..., round: _Optional[int] = ...) -> None: ...

class TurnTimedOut(_message.Message):
    __slots__ = ("seat", "missed")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    MISSED_FIELD_NUMBER: _ClassVar[int]
    seat: int
    missed: int
    def __init__(self, seat: _Optional[int] = ..., missed: _Optional[int] = ...) -> None: ...

class EventPayload(_message.Message):
    __slots__ = ("auction_settled", "auction_started", "back_confirmed", "bank_paid", "bet_declined", "bet_placed", "bet_settled", "bid_passed", "bid_placed", "board_dealt", "building_built", "building_demolished", "building_placed", "building_sold", "buildings_sold_down", "bus_move_chosen", "card_drawn", "casino_opened", "choice_offered", "clock_advanced", "deck_shuffled", "deeds_dealt", "dice_rolled", "dice_thrown", "game_ended", "game_paused", "game_resumed", "jail_cards_traded", "left_jail", "mortgage_expired", "mortgage_fee_due", "mortgage_lifted", "moved", "mr_monopoly_moved", "pause_rejected", "pause_requested", "pause_voted", "payment_due", "payment_made", "player_bankrupt", "property_bought", "property_mortgaged", "purchase_declined", "purchase_offered", "rent_claim_lapsed", "rent_claimable", "rent_claimed", "resume_scheduled", "sent_to_jail", "square_chosen", "table_created", "timed_out", "trade_cards_offered", "trade_declined", "trade_executed", "trade_proposed", "turn_ended", "turn_order_set", "turn_started", "turn_timed_out", "position_set", "auction_limits_changed")
    AUCTION_SETTLED_FIELD_NUMBER: _ClassVar[int]
    AUCTION_STARTED_FIELD_NUMBER: _ClassVar[int]
    BACK_CONFIRMED_FIELD_NUMBER: _ClassVar[int]
    BANK_PAID_FIELD_NUMBER: _ClassVar[int]
    BET_DECLINED_FIELD_NUMBER: _ClassVar[int]
    BET_PLACED_FIELD_NUMBER: _ClassVar[int]
    BET_SETTLED_FIELD_NUMBER: _ClassVar[int]
    BID_PASSED_FIELD_NUMBER: _ClassVar[int]
    BID_PLACED_FIELD_NUMBER: _ClassVar[int]
    BOARD_DEALT_FIELD_NUMBER: _ClassVar[int]
    BUILDING_BUILT_FIELD_NUMBER: _ClassVar[int]
    BUILDING_DEMOLISHED_FIELD_NUMBER: _ClassVar[int]
    BUILDING_PLACED_FIELD_NUMBER: _ClassVar[int]
    BUILDING_SOLD_FIELD_NUMBER: _ClassVar[int]
    BUILDINGS_SOLD_DOWN_FIELD_NUMBER: _ClassVar[int]
    BUS_MOVE_CHOSEN_FIELD_NUMBER: _ClassVar[int]
    CARD_DRAWN_FIELD_NUMBER: _ClassVar[int]
    CASINO_OPENED_FIELD_NUMBER: _ClassVar[int]
    CHOICE_OFFERED_FIELD_NUMBER: _ClassVar[int]
    CLOCK_ADVANCED_FIELD_NUMBER: _ClassVar[int]
    DECK_SHUFFLED_FIELD_NUMBER: _ClassVar[int]
    DEEDS_DEALT_FIELD_NUMBER: _ClassVar[int]
    DICE_ROLLED_FIELD_NUMBER: _ClassVar[int]
    DICE_THROWN_FIELD_NUMBER: _ClassVar[int]
    GAME_ENDED_FIELD_NUMBER: _ClassVar[int]
    GAME_PAUSED_FIELD_NUMBER: _ClassVar[int]
    GAME_RESUMED_FIELD_NUMBER: _ClassVar[int]
    JAIL_CARDS_TRADED_FIELD_NUMBER: _ClassVar[int]
    LEFT_JAIL_FIELD_NUMBER: _ClassVar[int]
    MORTGAGE_EXPIRED_FIELD_NUMBER: _ClassVar[int]
    MORTGAGE_FEE_DUE_FIELD_NUMBER: _ClassVar[int]
    MORTGAGE_LIFTED_FIELD_NUMBER: _ClassVar[int]
    MOVED_FIELD_NUMBER: _ClassVar[int]
    MR_MONOPOLY_MOVED_FIELD_NUMBER: _ClassVar[int]
    PAUSE_REJECTED_FIELD_NUMBER: _ClassVar[int]
    PAUSE_REQUESTED_FIELD_NUMBER: _ClassVar[int]
    PAUSE_VOTED_FIELD_NUMBER: _ClassVar[int]
    PAYMENT_DUE_FIELD_NUMBER: _ClassVar[int]
    PAYMENT_MADE_FIELD_NUMBER: _ClassVar[int]
    PLAYER_BANKRUPT_FIELD_NUMBER: _ClassVar[int]
    PROPERTY_BOUGHT_FIELD_NUMBER: _ClassVar[int]
    PROPERTY_MORTGAGED_FIELD_NUMBER: _ClassVar[int]
    PURCHASE_DECLINED_FIELD_NUMBER: _ClassVar[int]
    PURCHASE_OFFERED_FIELD_NUMBER: _ClassVar[int]
    RENT_CLAIM_LAPSED_FIELD_NUMBER: _ClassVar[int]
    RENT_CLAIMABLE_FIELD_NUMBER: _ClassVar[int]
    RENT_CLAIMED_FIELD_NUMBER: _ClassVar[int]
    RESUME_SCHEDULED_FIELD_NUMBER: _ClassVar[int]
    SENT_TO_JAIL_FIELD_NUMBER: _ClassVar[int]
    SQUARE_CHOSEN_FIELD_NUMBER: _ClassVar[int]
    TABLE_CREATED_FIELD_NUMBER: _ClassVar[int]
    TIMED_OUT_FIELD_NUMBER: _ClassVar[int]
    TRADE_CARDS_OFFERED_FIELD_NUMBER: _ClassVar[int]
    TRADE_DECLINED_FIELD_NUMBER: _ClassVar[int]
    TRADE_EXECUTED_FIELD_NUMBER: _ClassVar[int]
    TRADE_PROPOSED_FIELD_NUMBER: _ClassVar[int]
    TURN_ENDED_FIELD_NUMBER: _ClassVar[int]
    TURN_ORDER_SET_FIELD_NUMBER: _ClassVar[int]
    TURN_STARTED_FIELD_NUMBER: _ClassVar[int]
    TURN_TIMED_OUT_FIELD_NUMBER: _ClassVar[int]
    POSITION_SET_FIELD_NUMBER: _ClassVar[int]
    AUCTION_LIMITS_CHANGED_FIELD_NUMBER: _ClassVar[int]
    auction_settled: AuctionSettled
    auction_started: AuctionStarted
    back_confirmed: BackConfirmed
    bank_paid: BankPaid
    bet_declined: BetDeclined
    bet_placed: BetPlaced
    bet_settled: BetSettled
    bid_passed: BidPassed
    bid_placed: BidPlaced
    board_dealt: BoardDealt
    building_built: BuildingBuilt
    building_demolished: BuildingDemolished
    building_placed: BuildingPlaced
    building_sold: BuildingSold
    buildings_sold_down: BuildingsSoldDown
    bus_move_chosen: BusMoveChosen
    card_drawn: CardDrawn
    casino_opened: CasinoOpened
    choice_offered: ChoiceOffered
    clock_advanced: ClockAdvanced
    deck_shuffled: DeckShuffled
    deeds_dealt: DeedsDealt
    dice_rolled: DiceRolled
    dice_thrown: DiceThrown
    game_ended: GameEnded
    game_paused: GamePaused
    game_resumed: GameResumed
    jail_cards_traded: JailCardsTraded
    left_jail: LeftJail
    mortgage_expired: MortgageExpired
    mortgage_fee_due: MortgageFeeDue
    mortgage_lifted: MortgageLifted
    moved: Moved
    mr_monopoly_moved: MrMonopolyMoved
    pause_rejected: PauseRejected
    pause_requested: PauseRequested
    pause_voted: PauseVoted
    payment_due: PaymentDue
    payment_made: PaymentMade
    player_bankrupt: PlayerBankrupt
    property_bought: PropertyBought
    property_mortgaged: PropertyMortgaged
    purchase_declined: PurchaseDeclined
    purchase_offered: PurchaseOffered
    rent_claim_lapsed: RentClaimLapsed
    rent_claimable: RentClaimable
    rent_claimed: RentClaimed
    resume_scheduled: ResumeScheduled
    sent_to_jail: SentToJail
    square_chosen: SquareChosen
    table_created: TableCreated
    timed_out: TimedOut
    trade_cards_offered: TradeCardsOffered
    trade_declined: TradeDeclined
    trade_executed: TradeExecuted
    trade_proposed: TradeProposed
    turn_ended: TurnEnded
    turn_order_set: TurnOrderSet
    turn_started: TurnStarted
    turn_timed_out: TurnTimedOut
    position_set: PositionSet
    auction_limits_changed: AuctionLimitsChanged
    def __init__(self, auction_settled: _Optional[_Union[AuctionSettled, _Mapping]] = ..., auction_started: _Optional[_Union[AuctionStarted, _Mapping]] = ..., back_confirmed: _Optional[_Union[BackConfirmed, _Mapping]] = ..., bank_paid: _Optional[_Union[BankPaid, _Mapping]] = ..., bet_declined: _Optional[_Union[BetDeclined, _Mapping]] = ..., bet_placed: _Optional[_Union[BetPlaced, _Mapping]] = ..., bet_settled: _Optional[_Union[BetSettled, _Mapping]] = ..., bid_passed: _Optional[_Union[BidPassed, _Mapping]] = ..., bid_placed: _Optional[_Union[BidPlaced, _Mapping]] = ..., board_dealt: _Optional[_Union[BoardDealt, _Mapping]] = ..., building_built: _Optional[_Union[BuildingBuilt, _Mapping]] = ..., building_demolished: _Optional[_Union[BuildingDemolished, _Mapping]] = ..., building_placed: _Optional[_Union[BuildingPlaced, _Mapping]] = ..., building_sold: _Optional[_Union[BuildingSold, _Mapping]] = ..., buildings_sold_down: _Optional[_Union[BuildingsSoldDown, _Mapping]] = ..., bus_move_chosen: _Optional[_Union[BusMoveChosen, _Mapping]] = ..., card_drawn: _Optional[_Union[CardDrawn, _Mapping]] = ..., casino_opened: _Optional[_Union[CasinoOpened, _Mapping]] = ..., choice_offered: _Optional[_Union[ChoiceOffered, _Mapping]] = ..., clock_advanced: _Optional[_Union[ClockAdvanced, _Mapping]] = ..., deck_shuffled: _Optional[_Union[DeckShuffled, _Mapping]] = ..., deeds_dealt: _Optional[_Union[DeedsDealt, _Mapping]] = ..., dice_rolled: _Optional[_Union[DiceRolled, _Mapping]] = ..., dice_thrown: _Optional[_Union[DiceThrown, _Mapping]] = ..., game_ended: _Optional[_Union[GameEnded, _Mapping]] = ..., game_paused: _Optional[_Union[GamePaused, _Mapping]] = ..., game_resumed: _Optional[_Union[GameResumed, _Mapping]] = ..., jail_cards_traded: _Optional[_Union[JailCardsTraded, _Mapping]] = ..., left_jail: _Optional[_Union[LeftJail, _Mapping]] = ..., mortgage_expired: _Optional[_Union[MortgageExpired, _Mapping]] = ..., mortgage_fee_due: _Optional[_Union[MortgageFeeDue, _Mapping]] = ..., mortgage_lifted: _Optional[_Union[MortgageLifted, _Mapping]] = ..., moved: _Optional[_Union[Moved, _Mapping]] = ..., mr_monopoly_moved: _Optional[_Union[MrMonopolyMoved, _Mapping]] = ..., pause_rejected: _Optional[_Union[PauseRejected, _Mapping]] = ..., pause_requested: _Optional[_Union[PauseRequested, _Mapping]] = ..., pause_voted: _Optional[_Union[PauseVoted, _Mapping]] = ..., payment_due: _Optional[_Union[PaymentDue, _Mapping]] = ..., payment_made: _Optional[_Union[PaymentMade, _Mapping]] = ..., player_bankrupt: _Optional[_Union[PlayerBankrupt, _Mapping]] = ..., property_bought: _Optional[_Union[PropertyBought, _Mapping]] = ..., property_mortgaged: _Optional[_Union[PropertyMortgaged, _Mapping]] = ..., purchase_declined: _Optional[_Union[PurchaseDeclined, _Mapping]] = ..., purchase_offered: _Optional[_Union[PurchaseOffered, _Mapping]] = ..., rent_claim_lapsed: _Optional[_Union[RentClaimLapsed, _Mapping]] = ..., rent_claimable: _Optional[_Union[RentClaimable, _Mapping]] = ..., rent_claimed: _Optional[_Union[RentClaimed, _Mapping]] = ..., resume_scheduled: _Optional[_Union[ResumeScheduled, _Mapping]] = ..., sent_to_jail: _Optional[_Union[SentToJail, _Mapping]] = ..., square_chosen: _Optional[_Union[SquareChosen, _Mapping]] = ..., table_created: _Optional[_Union[TableCreated, _Mapping]] = ..., timed_out: _Optional[_Union[TimedOut, _Mapping]] = ..., trade_cards_offered: _Optional[_Union[TradeCardsOffered, _Mapping]] = ..., trade_declined: _Optional[_Union[TradeDeclined, _Mapping]] = ..., trade_executed: _Optional[_Union[TradeExecuted, _Mapping]] = ..., trade_proposed: _Optional[_Union[TradeProposed, _Mapping]] = ..., turn_ended: _Optional[_Union[TurnEnded, _Mapping]] = ..., turn_order_set: _Optional[_Union[TurnOrderSet, _Mapping]] = ..., turn_started: _Optional[_Union[TurnStarted, _Mapping]] = ..., turn_timed_out: _Optional[_Union[TurnTimedOut, _Mapping]] = ..., position_set: _Optional[_Union[PositionSet, _Mapping]] = ..., auction_limits_changed: _Optional[_Union[AuctionLimitsChanged, _Mapping]] = ...) -> None: ...
