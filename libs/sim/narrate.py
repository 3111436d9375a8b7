"""Readable text for events, and a game of bots told turn by turn (`make run`)."""

from __future__ import annotations

import sys
import time

from engine import (
    AuctionSettled,
    AuctionStarted,
    BankPaid,
    BetDeclined,
    BetSettled,
    BoardDealt,
    BuildingBuilt,
    BuildingDemolished,
    BuildingSold,
    BusMoveChosen,
    CardDrawn,
    DiceRolled,
    Event,
    GameEnded,
    Kind,
    LeftJail,
    MortgageExpired,
    MortgageLifted,
    Moved,
    MrMonopolyMoved,
    PaymentMade,
    PlayerBankrupt,
    PropertyBought,
    PropertyMortgaged,
    PurchaseDeclined,
    SentToJail,
    SquareChosen,
    TableState,
    TradeDeclined,
    TradeExecuted,
    TurnStarted,
    TurnTimedOut,
    preset,
    replay,
)

from .runner import play_game

_SPEED_FACES = {1: "1", 2: "2", 3: "3", 4: "Mr. Monopoly", 5: "Bus"}


def describe(state: TableState, event: Event) -> str | None:
    """One line for an event worth telling a spectator, else None."""
    board = state.config.board.squares
    players = state.players

    def who(seat: int) -> str:
        return "the bank" if seat < 0 else players[seat].name

    def sq(square: int) -> str:
        return board[square].name

    match event:
        case TurnStarted(seat=seat, round=rnd):
            p = players[seat]
            jail = " (in jail)" if p.in_jail else ""
            clock = f" [minute {state.minute}]" if state.clock else ""
            return f"-- round {rnd}{clock}: {p.name}, ${p.cash:,}{jail}"
        case DiceRolled(d1=d1, d2=d2, speed=speed):
            extra = f" + speed die {_SPEED_FACES[speed]}" if speed else ""
            return f"   rolls {d1}+{d2}{extra}" + (" (doubles)" if d1 == d2 != speed else "")
        case TurnTimedOut(seat=seat, missed=missed):
            return f"   {who(seat)} ran out of time ({missed} in a row)"
        case MrMonopolyMoved(square=square):
            return f"   Mr. Monopoly: on to {sq(square)}" if square >= 0 else None
        case BusMoveChosen(steps=steps):
            return f"   takes the bus {steps} squares"
        case SquareChosen(square=square):
            return f"   triple! chooses {sq(square)}"
        case BuildingDemolished(square=square, level=level):
            return f"   demolishes a building on {sq(square)} (now {level})"
        case BoardDealt(squares=squares):
            return f"   the board is dealt: {len(squares)} squares"
        case Moved(to_square=to):
            visiting = " (just visiting)" if board[to].kind is Kind.JAIL else ""
            return f"   moves to {sq(to)}{visiting}"
        case BankPaid(amount=amount, reason=reason):
            return f"   collects ${amount:,} ({reason.replace('_', ' ')})"
        case PropertyBought(square=square, price=price):
            return f"   buys {sq(square)} for ${price:,}"
        case PurchaseDeclined(square=square):
            return f"   declines {sq(square)}"
        case AuctionStarted(square=square, start_price=price):
            return f"   auction of {sq(square)} from ${price:,}"
        case AuctionSettled(square=square, winner=winner, price=price):
            if winner < 0:
                return f"   no bids: {sq(square)} stays with the bank"
            return f"   {who(winner)} wins {sq(square)} for ${price:,}"
        case PaymentMade(debtor=debtor, creditor=creditor, amount=amount, reason=reason):
            return f"   {who(debtor)} pays ${amount:,} {reason.replace('_', ' ')} to {who(creditor)}"
        case CardDrawn(card=card):
            return f"   draws: {state.config.chance_deck[card].text}"
        case SentToJail(reason=reason):
            return f"   goes to jail ({reason.replace('_', ' ')})"
        case LeftJail(how=how):
            return f"   leaves jail ({how.replace('_', ' ')})"
        case BuildingBuilt(square=square, level=level):
            return f"   builds on {sq(square)}: " + ("corporation" if level == 5 else f"{level} branch(es)")
        case BuildingSold(square=square, refund=refund):
            return f"   sells a building on {sq(square)} for ${refund:,}"
        case PropertyMortgaged(square=square, amount=amount):
            return f"   mortgages {sq(square)} for ${amount:,}"
        case MortgageLifted(square=square, cost=cost):
            return f"   lifts the mortgage of {sq(square)} for ${cost:,}"
        case MortgageExpired(square=square, seat=seat):
            return f"   {who(seat)} loses {sq(square)}: mortgage expired"
        case BetSettled(numbers=numbers, die=die, payout=payout, jackpot=jackpot):
            won = f"wins ${payout:,}" if payout else "loses"
            extra = f" and the ${jackpot:,} jackpot!" if jackpot else ""
            return f"   casino: bets on {list(numbers)}, die {die}, {won}{extra}"
        case BetDeclined():
            return "   casino: declines to bet"
        case TradeExecuted(proposer=a, counterparty=b, give_squares=gs, take_squares=ts, give_cash=gc, take_cash=tc):
            left = ", ".join([sq(s) for s in gs] + ([f"${gc:,}"] if gc else []))
            right = ", ".join([sq(s) for s in ts] + ([f"${tc:,}"] if tc else []))
            return f"   trade: {who(a)} gives {left or 'nothing'} to {who(b)} for {right or 'nothing'}"
        case TradeDeclined(seat=seat):
            return f"   {who(seat)} declines a trade"
        case PlayerBankrupt(seat=seat, creditor=creditor, place=place):
            return f"   {who(seat)} is bankrupt to {who(creditor)}: place {place}"
        case GameEnded(winner=winner, reason=reason):
            return f"== {who(winner)} wins ({reason.replace('_', ' ')})"
    return None


def play_and_narrate(
    mode: str, players: int, seed: int, bots: str, round_cap: int | None, delay: float, think_ms: int = 0
) -> int:
    """Play one table of bots, printing each turn as it happens."""
    config = preset(mode, round_cap=round_cap)
    out = sys.stdout
    print(f"{mode} table, {players} {bots} bots, seed {seed}", file=out)

    played: list[Event] = []

    def show(state: TableState, events: list[Event]) -> None:
        played.extend(events)
        for event in events:
            line = describe(state, event)
            if line:
                print(line, file=out)
            if delay and isinstance(event, TurnStarted):
                out.flush()
                time.sleep(delay)

    state, result = play_game(config, players, seed, bots, on_events=show, think_ms=think_ms)
    print(f"{result.rounds} rounds, {result.player_turns} player-turns, {result.events} events", file=out)
    at_end = worth_at_end(played)
    for p in sorted(state.players, key=lambda p: p.place):
        print(f"  place {p.place}: {p.name} (${at_end[p.seat]:,} net worth)", file=out)
    return 0


def worth_at_end(events: list[Event]) -> list[int]:
    """Each seat's net worth as the game's end counted it (H6).

    The finished state has dropped the payments still pending (D5), which a worth counts as made,
    so it is valued as it stood just before `GameEnded`."""
    ended = max(i for i, e in enumerate(events) if isinstance(e, GameEnded))
    before = replay(events[:ended])
    return [before.net_worth(seat) for seat in range(len(before.players))]
