"""The closed sets of values events carry: why a payment is owed, why a game ended...

They are string enums, so a value compares equal to (and encodes as) the string
the events carried before they were typed: stored events read back unchanged,
and the wire gives each one both as that string and as a protobuf enum
(docs/SCHEMA.md). A value is appended, never renamed or reused.
"""

from __future__ import annotations

from enum import StrEnum


class PaymentReason(StrEnum):
    """What a mandatory payment (PaymentDue, PaymentMade) is for."""

    RENT = "rent"  # P2-P4, H2
    TAX = "tax"  # B1 tax squares
    CARD = "card"  # C1, C2, C4: pay the bank, pay or collect from each player
    REPAIRS = "repairs"  # C1, C2: per house and hotel
    JAIL_FINE = "jail_fine"  # J4: the forced fine after the third roll
    AUCTION = "auction"  # A3: the winning bid
    MORTGAGE_FEE = "mortgage_fee"  # M4: the fee on a mortgaged square received


class BankPaidReason(StrEnum):
    """Why the bank pays a player (BankPaid)."""

    SALARY = "salary"  # G5
    START_BONUS = "start_bonus"  # G6
    CARD = "card"  # C1, C2, C4


class JailReason(StrEnum):
    """How a player got sent to jail (SentToJail, J1)."""

    GO_TO_JAIL = "go_to_jail"  # the Go to Jail square
    CARD = "card"  # a Go to Jail card
    THIRD_DOUBLES = "third_doubles"  # G4


class JailExit(StrEnum):
    """How a player left jail (LeftJail)."""

    FINE = "fine"  # J2: paid before rolling
    CARD = "card"  # J2: a Get Out of Jail Free card
    DOUBLES = "doubles"  # J3
    FORCED_FINE = "forced_fine"  # J4: paid by a PaymentMade before, after the third roll


class BankruptCause(StrEnum):
    """Why a player left the game (PlayerBankrupt)."""

    DEBT = "debt"  # D2: a debt that could not be raised
    SURRENDER = "surrender"  # D2 a surrender, R3 leaving the game
    TIMEOUT = "timeout"  # E2: too many timed-out turns


class EndReason(StrEnum):
    """Why the game ended (GameEnded)."""

    LAST_PLAYER = "last_player"  # D5
    LAST_TEAM = "last_team"  # X4
    ROUND_CAP = "round_cap"  # by worth after the round cap
    SHORT_GAME = "short_game"  # H3, H4
    TIME_LIMIT = "time_limit"  # H5


class TimeoutKind(StrEnum):
    """What ran out of time (TimedOut, E1)."""

    BID = "bid"
    TRADE = "trade"
    DEBT = "debt"


class PauseRejection(StrEnum):
    """Why a pause was refused (PauseRejected, E5)."""

    VOTE = "vote"  # someone said no
    TIMEOUT = "timeout"  # silence is no


class ChoiceKind(StrEnum):
    """A decision only the player can make (ChoiceOffered)."""

    BUS = "bus"  # X6
    TRIPLE = "triple"  # X6
    DEMOLISH = "demolish"  # C4 (Duel)


class AuctionReason(StrEnum):
    """Why an auction opened (AuctionStarted)."""

    DECLINED = "declined"  # A1, A2
    MORTGAGE_EXPIRED = "mortgage_expired"  # M3
    BANKRUPT = "bankrupt"  # D4
    OWNER_SALE = "owner_sale"  # X3
    HOUSE = "house"  # P10: a building auction for a house
    HOTEL = "hotel"  # P10: a building auction for a hotel
