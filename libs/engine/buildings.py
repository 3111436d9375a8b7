"""Buildings (P5-P10): building, selling, the hasbro bank's houses and hotels, building auctions.

Rules owned here: P5 a whole unmortgaged group; P6 even building and selling;
P7 four houses then a hotel (H3: three in the 8-page short game); P8 the sale
value, a hotel broken back into houses, and selling down when the bank lacks
them; P9 (online) when one may build and once per group per turn; P10
(hasbro) building any time, the bank's 32 houses and 12 hotels, and the
auction of scarce buildings. Who may act out of turn is G2 (`flow.actor`) or,
with `manage_any_time`, P10/G9 (`flow.any_time`).
"""

from __future__ import annotations

from itertools import product

from .board import Kind
from .commands import Build, SellBuilding
from .errors import RuleViolation
from .events import BuildingBuilt, BuildingPlaced, BuildingSold, BuildingsSoldDown
from .flow import MANAGE, ONLY_PRE_ROLL, ApplyFn, CheckFn, Ctx, EffectFn, actor, any_time, property_of, start_auction
from .reasons import AuctionReason
from .state import BANK, TableState


def _check_build(state: TableState, cmd: Build) -> None:
    cfg = state.config
    if cfg.build_before_roll_only:
        actor(state, cmd.seat, ONLY_PRE_ROLL, rule="P9", turn_rule="G2")
    elif cfg.manage_any_time:
        any_time(state, cmd.seat)
    else:
        actor(state, cmd.seat, MANAGE, rule="P9", turn_rule="G2")
    property_of(state, cmd.seat, getattr(cmd, "square"), "P5")  # noqa: B009
    board = cfg.board
    square = board.squares[cmd.square]
    if square.kind is not Kind.PROPERTY:
        raise RuleViolation("P5", f"{square.name} takes no buildings")
    members = board.members[square.group]
    if not state.owns_group(cmd.seat, square.group):
        raise RuleViolation("P5", f"you do not own the whole {board.group_names[square.group - 1]} group")
    if any(state.mortgaged_round[sq] >= 0 for sq in members):
        raise RuleViolation("P5", "a property of the group is mortgaged")
    level = state.buildings[cmd.square]
    if level >= 5:
        raise RuleViolation("P7", f"{square.name} already has a hotel")
    if cfg.even_build and level > min(state.buildings[sq] for sq in members):
        raise RuleViolation("P6", "build evenly: another property of the group has fewer buildings")
    limit = cfg.builds_per_group_per_turn
    if limit is not None and state.builds.count(square.group) >= limit:
        raise RuleViolation("P9", "one build action per colour group per turn")
    if cfg.house_supply is not None:
        kind = 5 if level >= cfg.hotel_after_houses else 1
        if _won_building(state, cmd.seat, kind) >= 0:
            return  # P10: placing a building won at auction (paid by the bid)
        if kind == 5 and state.bank_hotels() < 1:
            raise RuleViolation("P10", "the bank has no hotel left")
        if kind == 1 and state.bank_houses() < 1:
            raise RuleViolation("P10", "the bank has no house left")
        if cfg.building_auction and state.auction is not None and _building_bidders(state, cmd.seat, kind):
            # One auction at a time: a scarce building waits until the one running has ended.
            raise RuleViolation("P10", "buildings are short and an auction is running: build once it has ended")
    if state.players[cmd.seat].cash < square.house_cost:
        raise RuleViolation("P5", f"a building costs ${square.house_cost}")


def _check_sell(state: TableState, cmd: SellBuilding) -> None:
    if state.config.manage_any_time:
        any_time(state, cmd.seat)
    else:
        actor(state, cmd.seat, MANAGE, rule="P8", turn_rule="G2")
    property_of(state, cmd.seat, getattr(cmd, "square"), "P8")  # noqa: B009
    level = state.buildings[cmd.square]
    if level == 0:
        raise RuleViolation("P8", "there is no building to sell")
    square = state.config.board.squares[cmd.square]
    members = state.config.board.members[square.group]
    if state.config.even_build and level < max(state.buildings[sq] for sq in members):
        raise RuleViolation("P6", "sell evenly: another property of the group has more buildings")


def _do_build(ctx: Ctx, cmd: Build) -> None:
    state = ctx.state
    cfg = state.config
    square = cfg.board.squares[cmd.square]
    level = state.buildings[cmd.square]
    if cfg.house_supply is None:
        ctx.emit(BuildingBuilt(cmd.seat, cmd.square, level + 1, square.house_cost))
        return
    new = level + 1 if level < cfg.hotel_after_houses else 5  # P7, H3
    kind = 5 if new == 5 else 1
    if _won_building(state, cmd.seat, kind) >= 0:  # P10: a building won at auction
        ctx.emit(BuildingPlaced(cmd.seat, cmd.square, new))
        return
    if cfg.building_auction:
        bidders = _building_bidders(state, cmd.seat, kind)
        if bidders:
            start_auction(
                ctx,
                cmd.square,
                AuctionReason.HOTEL if kind == 5 else AuctionReason.HOUSE,
                after=cmd.seat,
                excluded=BANK,
                among=bidders,
            )
            return
    ctx.emit(BuildingBuilt(cmd.seat, cmd.square, new, square.house_cost))


def _won_building(state: TableState, seat: int, kind: int) -> int:
    """P10: the index of a building of `kind` that `seat` won at auction and has not placed, or -1."""
    for i, won in enumerate(state.won_buildings):
        if won == (seat, kind):
            return i
    return -1


def _building_bidders(state: TableState, seat: int, kind: int) -> tuple[int, ...]:
    """P10 (decision): a building goes to auction when the bank holds fewer buildings of its kind
    than there are players who could build one now (the asking player included), and at least
    two could. Empty: no auction, the building is simply bought."""
    available = state.bank_hotels() if kind == 5 else state.bank_houses()
    active = state.active_seats
    if available >= len(active):
        return ()
    wanting = tuple(s for s in active if s == seat or _could_build(state, s, kind))
    if len(wanting) < 2 or available >= len(wanting):
        return ()
    return wanting


def _could_build(state: TableState, seat: int, kind: int) -> bool:
    """P5-P7, P10: `seat` owns a square where a building of `kind` is legal now (cash apart)."""
    cfg = state.config
    board = cfg.board
    for group in range(1, len(board.members)):
        members = board.members[group]
        if not state.owns_group(seat, group) or any(state.mortgaged_round[sq] >= 0 for sq in members):
            continue
        levels = [state.buildings[sq] for sq in members]
        low = min(levels)
        if low >= 5:
            continue
        if (5 if low >= cfg.hotel_after_houses else 1) == kind and state.players[
            seat
        ].cash >= cfg.auction.min_first_bid:
            return True
    return False


def do_sell(ctx: Ctx, cmd: SellBuilding) -> None:
    state = ctx.state
    cfg = state.config
    refund = cfg.sale_value(cfg.board.squares[cmd.square].house_cost)
    level = state.buildings[cmd.square]
    if level == 5 and cfg.house_supply is not None:  # P8: the hotel goes back to its houses
        houses = cfg.hotel_after_houses
        if state.bank_houses() >= houses:
            ctx.emit(BuildingSold(cmd.seat, cmd.square, houses, refund))
        else:
            _sell_group_down(ctx, cmd.seat, cmd.square)
        return
    ctx.emit(BuildingSold(cmd.seat, cmd.square, level - 1, refund))


def _sell_group_down(ctx: Ctx, seat: int, square: int) -> None:
    """P8: the bank lacks the houses to break the hotel up, so the player sells further down, but
    only as far as the bank can supply: of the levels the group may go down to (the sold square
    without its hotel, no square higher than before, no more houses on the group than it holds
    and the bank can give, and P6's evenness), the one that keeps the most buildings; on a tie the
    one that keeps the other squares highest (the hotel sold is the player's choice, the rest is
    only what the bank's shortage forces), then the earlier squares of the board."""
    state = ctx.state
    cfg = state.config
    sq_data = cfg.board.squares[square]
    members = cfg.board.members[sq_data.group]
    top = cfg.hotel_after_houses
    hotel_rank = top + 1  # a hotel is worth this many building levels (P7, H3)

    def rank(level: int) -> int:
        return hotel_rank if level == 5 else level

    before = tuple(state.buildings[sq] for sq in members)
    supply = state.bank_houses() + sum(level for level in before if level != 5)
    choices = [
        range(top + 1) if sq == square else (*range(top + 1), 5) if level == 5 else range(level + 1)
        for sq, level in zip(members, before, strict=True)
    ]
    best: tuple[tuple[int, int, tuple[int, ...]], tuple[int, ...]] | None = None
    for levels in product(*choices):
        if sum(level for level in levels if level != 5) > supply:
            continue
        ranks = [rank(level) for level in levels]
        if cfg.even_build and max(ranks) - min(ranks) > 1:
            continue
        others = sum(r for sq, r in zip(members, ranks, strict=True) if sq != square)
        key = (sum(ranks), others, tuple(ranks))
        if best is None or key > best[0]:
            best = (key, levels)
    assert best is not None  # every square at 0 always fits
    levels = best[1]
    refund = (sum(map(rank, before)) - best[0][0]) * cfg.sale_value(sq_data.house_cost)
    ctx.emit(BuildingsSoldDown(seat, members, levels, refund))


def _ev_built(s: TableState, e: BuildingBuilt) -> None:
    s.buildings[e.square] = e.level
    s.players[e.seat].cash -= e.cost
    s.bank_in += e.cost
    s.builds.append(s.config.board.squares[e.square].group)


def _ev_sold(s: TableState, e: BuildingSold) -> None:
    s.buildings[e.square] = e.level
    s.players[e.seat].cash += e.refund
    s.bank_out += e.refund


def _ev_sold_down(s: TableState, e: BuildingsSoldDown) -> None:
    for sq, level in zip(e.squares, e.levels, strict=True):
        s.buildings[sq] = level
    s.players[e.seat].cash += e.refund
    s.bank_out += e.refund


def _ev_building_placed(s: TableState, e: BuildingPlaced) -> None:
    s.buildings[e.square] = e.level
    s.won_buildings.remove((e.seat, 5 if e.level == 5 else 1))


COMMANDS: dict[type, tuple[CheckFn, EffectFn]] = {
    Build: (_check_build, _do_build),
    SellBuilding: (_check_sell, do_sell),
}

EVENTS: dict[type, ApplyFn] = {
    BuildingBuilt: _ev_built,
    BuildingSold: _ev_sold,
    BuildingsSoldDown: _ev_sold_down,
    BuildingPlaced: _ev_building_placed,
}
