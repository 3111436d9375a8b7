from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class AcceptTrade(_message.Message):
    __slots__ = ("seat", "trade_id")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    TRADE_ID_FIELD_NUMBER: _ClassVar[int]
    seat: int
    trade_id: int
    def __init__(self, seat: _Optional[int] = ..., trade_id: _Optional[int] = ...) -> None: ...

class AuctionMortgaged(_message.Message):
    __slots__ = ("seat", "square")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SQUARE_FIELD_NUMBER: _ClassVar[int]
    seat: int
    square: int
    def __init__(self, seat: _Optional[int] = ..., square: _Optional[int] = ...) -> None: ...

class Bid(_message.Message):
    __slots__ = ("seat", "amount")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    AMOUNT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    amount: int
    def __init__(self, seat: _Optional[int] = ..., amount: _Optional[int] = ...) -> None: ...

class Build(_message.Message):
    __slots__ = ("seat", "square")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SQUARE_FIELD_NUMBER: _ClassVar[int]
    seat: int
    square: int
    def __init__(self, seat: _Optional[int] = ..., square: _Optional[int] = ...) -> None: ...

class BuyProperty(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class ChooseBusMove(_message.Message):
    __slots__ = ("seat", "steps")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    STEPS_FIELD_NUMBER: _ClassVar[int]
    seat: int
    steps: int
    def __init__(self, seat: _Optional[int] = ..., steps: _Optional[int] = ...) -> None: ...

class ChooseSquare(_message.Message):
    __slots__ = ("seat", "square")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SQUARE_FIELD_NUMBER: _ClassVar[int]
    seat: int
    square: int
    def __init__(self, seat: _Optional[int] = ..., square: _Optional[int] = ...) -> None: ...

class ClaimRent(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class ConfirmBack(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class DeclineBet(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class DeclineProperty(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class DeclineTrade(_message.Message):
    __slots__ = ("seat", "trade_id")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    TRADE_ID_FIELD_NUMBER: _ClassVar[int]
    seat: int
    trade_id: int
    def __init__(self, seat: _Optional[int] = ..., trade_id: _Optional[int] = ...) -> None: ...

class Demolish(_message.Message):
    __slots__ = ("seat", "square")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SQUARE_FIELD_NUMBER: _ClassVar[int]
    seat: int
    square: int
    def __init__(self, seat: _Optional[int] = ..., square: _Optional[int] = ...) -> None: ...

class EndTurn(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class ExecuteTrade(_message.Message):
    __slots__ = ("seat", "trade_id", "counterparty", "turn_no", "give_cash", "give_squares", "take_cash", "take_squares", "give_cards", "take_cards", "mortgaged_squares", "mortgages_recorded")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    TRADE_ID_FIELD_NUMBER: _ClassVar[int]
    COUNTERPARTY_FIELD_NUMBER: _ClassVar[int]
    TURN_NO_FIELD_NUMBER: _ClassVar[int]
    GIVE_CASH_FIELD_NUMBER: _ClassVar[int]
    GIVE_SQUARES_FIELD_NUMBER: _ClassVar[int]
    TAKE_CASH_FIELD_NUMBER: _ClassVar[int]
    TAKE_SQUARES_FIELD_NUMBER: _ClassVar[int]
    GIVE_CARDS_FIELD_NUMBER: _ClassVar[int]
    TAKE_CARDS_FIELD_NUMBER: _ClassVar[int]
    MORTGAGED_SQUARES_FIELD_NUMBER: _ClassVar[int]
    MORTGAGES_RECORDED_FIELD_NUMBER: _ClassVar[int]
    seat: int
    trade_id: int
    counterparty: int
    turn_no: int
    give_cash: int
    give_squares: _containers.RepeatedScalarFieldContainer[int]
    take_cash: int
    take_squares: _containers.RepeatedScalarFieldContainer[int]
    give_cards: _containers.RepeatedScalarFieldContainer[int]
    take_cards: _containers.RepeatedScalarFieldContainer[int]
    mortgaged_squares: _containers.RepeatedScalarFieldContainer[int]
    mortgages_recorded: bool
    def __init__(self, seat: _Optional[int] = ..., trade_id: _Optional[int] = ..., counterparty: _Optional[int] = ..., turn_no: _Optional[int] = ..., give_cash: _Optional[int] = ..., give_squares: _Optional[_Iterable[int]] = ..., take_cash: _Optional[int] = ..., take_squares: _Optional[_Iterable[int]] = ..., give_cards: _Optional[_Iterable[int]] = ..., take_cards: _Optional[_Iterable[int]] = ..., mortgaged_squares: _Optional[_Iterable[int]] = ..., mortgages_recorded: _Optional[bool] = ...) -> None: ...

class Leave(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class LiftMortgage(_message.Message):
    __slots__ = ("seat", "square")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SQUARE_FIELD_NUMBER: _ClassVar[int]
    seat: int
    square: int
    def __init__(self, seat: _Optional[int] = ..., square: _Optional[int] = ...) -> None: ...

class Mortgage(_message.Message):
    __slots__ = ("seat", "square")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SQUARE_FIELD_NUMBER: _ClassVar[int]
    seat: int
    square: int
    def __init__(self, seat: _Optional[int] = ..., square: _Optional[int] = ...) -> None: ...

class PassBid(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class Pay(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class PayJailFine(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class PlaceBet(_message.Message):
    __slots__ = ("seat", "numbers")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    NUMBERS_FIELD_NUMBER: _ClassVar[int]
    seat: int
    numbers: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, seat: _Optional[int] = ..., numbers: _Optional[_Iterable[int]] = ...) -> None: ...

class ProposeTrade(_message.Message):
    __slots__ = ("seat", "counterparty", "give_cash", "give_squares", "take_cash", "take_squares", "give_cards", "take_cards")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    COUNTERPARTY_FIELD_NUMBER: _ClassVar[int]
    GIVE_CASH_FIELD_NUMBER: _ClassVar[int]
    GIVE_SQUARES_FIELD_NUMBER: _ClassVar[int]
    TAKE_CASH_FIELD_NUMBER: _ClassVar[int]
    TAKE_SQUARES_FIELD_NUMBER: _ClassVar[int]
    GIVE_CARDS_FIELD_NUMBER: _ClassVar[int]
    TAKE_CARDS_FIELD_NUMBER: _ClassVar[int]
    seat: int
    counterparty: int
    give_cash: int
    give_squares: _containers.RepeatedScalarFieldContainer[int]
    take_cash: int
    take_squares: _containers.RepeatedScalarFieldContainer[int]
    give_cards: _containers.RepeatedScalarFieldContainer[int]
    take_cards: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, seat: _Optional[int] = ..., counterparty: _Optional[int] = ..., give_cash: _Optional[int] = ..., give_squares: _Optional[_Iterable[int]] = ..., take_cash: _Optional[int] = ..., take_squares: _Optional[_Iterable[int]] = ..., give_cards: _Optional[_Iterable[int]] = ..., take_cards: _Optional[_Iterable[int]] = ...) -> None: ...

class RequestPause(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class Roll(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class SellBuilding(_message.Message):
    __slots__ = ("seat", "square")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SQUARE_FIELD_NUMBER: _ClassVar[int]
    seat: int
    square: int
    def __init__(self, seat: _Optional[int] = ..., square: _Optional[int] = ...) -> None: ...

class SettleAuction(_message.Message):
    __slots__ = ("seat", "auction_id", "winner", "price")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    AUCTION_ID_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    PRICE_FIELD_NUMBER: _ClassVar[int]
    seat: int
    auction_id: int
    winner: int
    price: int
    def __init__(self, seat: _Optional[int] = ..., auction_id: _Optional[int] = ..., winner: _Optional[int] = ..., price: _Optional[int] = ...) -> None: ...

class SettleBet(_message.Message):
    __slots__ = ("seat", "bet_id", "numbers", "die", "jackpot_hit")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    BET_ID_FIELD_NUMBER: _ClassVar[int]
    NUMBERS_FIELD_NUMBER: _ClassVar[int]
    DIE_FIELD_NUMBER: _ClassVar[int]
    JACKPOT_HIT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    bet_id: str
    numbers: _containers.RepeatedScalarFieldContainer[int]
    die: int
    jackpot_hit: bool
    def __init__(self, seat: _Optional[int] = ..., bet_id: _Optional[str] = ..., numbers: _Optional[_Iterable[int]] = ..., die: _Optional[int] = ..., jackpot_hit: _Optional[bool] = ...) -> None: ...

class Surrender(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class Tick(_message.Message):
    __slots__ = ("now", "seat")
    NOW_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    now: int
    seat: int
    def __init__(self, now: _Optional[int] = ..., seat: _Optional[int] = ...) -> None: ...

class UseJailCard(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class VotePause(_message.Message):
    __slots__ = ("seat", "yes")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    YES_FIELD_NUMBER: _ClassVar[int]
    seat: int
    yes: bool
    def __init__(self, seat: _Optional[int] = ..., yes: _Optional[bool] = ...) -> None: ...

class CommandPayload(_message.Message):
    __slots__ = ("accept_trade", "auction_mortgaged", "bid", "build", "buy_property", "choose_bus_move", "choose_square", "claim_rent", "confirm_back", "decline_bet", "decline_property", "decline_trade", "demolish", "end_turn", "execute_trade", "lift_mortgage", "mortgage", "pass_bid", "pay", "pay_jail_fine", "place_bet", "propose_trade", "request_pause", "roll", "sell_building", "settle_auction", "settle_bet", "surrender", "tick", "use_jail_card", "vote_pause", "leave")
    ACCEPT_TRADE_FIELD_NUMBER: _ClassVar[int]
    AUCTION_MORTGAGED_FIELD_NUMBER: _ClassVar[int]
    BID_FIELD_NUMBER: _ClassVar[int]
    BUILD_FIELD_NUMBER: _ClassVar[int]
    BUY_PROPERTY_FIELD_NUMBER: _ClassVar[int]
    CHOOSE_BUS_MOVE_FIELD_NUMBER: _ClassVar[int]
    CHOOSE_SQUARE_FIELD_NUMBER: _ClassVar[int]
    CLAIM_RENT_FIELD_NUMBER: _ClassVar[int]
    CONFIRM_BACK_FIELD_NUMBER: _ClassVar[int]
    DECLINE_BET_FIELD_NUMBER: _ClassVar[int]
    DECLINE_PROPERTY_FIELD_NUMBER: _ClassVar[int]
    DECLINE_TRADE_FIELD_NUMBER: _ClassVar[int]
    DEMOLISH_FIELD_NUMBER: _ClassVar[int]
    END_TURN_FIELD_NUMBER: _ClassVar[int]
    EXECUTE_TRADE_FIELD_NUMBER: _ClassVar[int]
    LIFT_MORTGAGE_FIELD_NUMBER: _ClassVar[int]
    MORTGAGE_FIELD_NUMBER: _ClassVar[int]
    PASS_BID_FIELD_NUMBER: _ClassVar[int]
    PAY_FIELD_NUMBER: _ClassVar[int]
    PAY_JAIL_FINE_FIELD_NUMBER: _ClassVar[int]
    PLACE_BET_FIELD_NUMBER: _ClassVar[int]
    PROPOSE_TRADE_FIELD_NUMBER: _ClassVar[int]
    REQUEST_PAUSE_FIELD_NUMBER: _ClassVar[int]
    ROLL_FIELD_NUMBER: _ClassVar[int]
    SELL_BUILDING_FIELD_NUMBER: _ClassVar[int]
    SETTLE_AUCTION_FIELD_NUMBER: _ClassVar[int]
    SETTLE_BET_FIELD_NUMBER: _ClassVar[int]
    SURRENDER_FIELD_NUMBER: _ClassVar[int]
    TICK_FIELD_NUMBER: _ClassVar[int]
    USE_JAIL_CARD_FIELD_NUMBER: _ClassVar[int]
    VOTE_PAUSE_FIELD_NUMBER: _ClassVar[int]
    LEAVE_FIELD_NUMBER: _ClassVar[int]
    accept_trade: AcceptTrade
    auction_mortgaged: AuctionMortgaged
    bid: Bid
    build: Build
    buy_property: BuyProperty
    choose_bus_move: ChooseBusMove
    choose_square: ChooseSquare
    claim_rent: ClaimRent
    confirm_back: ConfirmBack
    decline_bet: DeclineBet
    decline_property: DeclineProperty
    decline_trade: DeclineTrade
    demolish: Demolish
    end_turn: EndTurn
    execute_trade: ExecuteTrade
    lift_mortgage: LiftMortgage
    mortgage: Mortgage
    pass_bid: PassBid
    pay: Pay
    pay_jail_fine: PayJailFine
    place_bet: PlaceBet
    propose_trade: ProposeTrade
    request_pause: RequestPause
    roll: Roll
    sell_building: SellBuilding
    settle_auction: SettleAuction
    settle_bet: SettleBet
    surrender: Surrender
    tick: Tick
    use_jail_card: UseJailCard
    vote_pause: VotePause
    leave: Leave
    def __init__(self, accept_trade: _Optional[_Union[AcceptTrade, _Mapping]] = ..., auction_mortgaged: _Optional[_Union[AuctionMortgaged, _Mapping]] = ..., bid: _Optional[_Union[Bid, _Mapping]] = ..., build: _Optional[_Union[Build, _Mapping]] = ..., buy_property: _Optional[_Union[BuyProperty, _Mapping]] = ..., choose_bus_move: _Optional[_Union[ChooseBusMove, _Mapping]] = ..., choose_square: _Optional[_Union[ChooseSquare, _Mapping]] = ..., claim_rent: _Optional[_Union[ClaimRent, _Mapping]] = ..., confirm_back: _Optional[_Union[ConfirmBack, _Mapping]] = ..., decline_bet: _Optional[_Union[DeclineBet, _Mapping]] = ..., decline_property: _Optional[_Union[DeclineProperty, _Mapping]] = ..., decline_trade: _Optional[_Union[DeclineTrade, _Mapping]] = ..., demolish: _Optional[_Union[Demolish, _Mapping]] = ..., end_turn: _Optional[_Union[EndTurn, _Mapping]] = ..., execute_trade: _Optional[_Union[ExecuteTrade, _Mapping]] = ..., lift_mortgage: _Optional[_Union[LiftMortgage, _Mapping]] = ..., mortgage: _Optional[_Union[Mortgage, _Mapping]] = ..., pass_bid: _Optional[_Union[PassBid, _Mapping]] = ..., pay: _Optional[_Union[Pay, _Mapping]] = ..., pay_jail_fine: _Optional[_Union[PayJailFine, _Mapping]] = ..., place_bet: _Optional[_Union[PlaceBet, _Mapping]] = ..., propose_trade: _Optional[_Union[ProposeTrade, _Mapping]] = ..., request_pause: _Optional[_Union[RequestPause, _Mapping]] = ..., roll: _Optional[_Union[Roll, _Mapping]] = ..., sell_building: _Optional[_Union[SellBuilding, _Mapping]] = ..., settle_auction: _Optional[_Union[SettleAuction, _Mapping]] = ..., settle_bet: _Optional[_Union[SettleBet, _Mapping]] = ..., surrender: _Optional[_Union[Surrender, _Mapping]] = ..., tick: _Optional[_Union[Tick, _Mapping]] = ..., use_jail_card: _Optional[_Union[UseJailCard, _Mapping]] = ..., vote_pause: _Optional[_Union[VotePause, _Mapping]] = ..., leave: _Optional[_Union[Leave, _Mapping]] = ...) -> None: ...
