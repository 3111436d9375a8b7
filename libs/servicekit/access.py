"""Who may call what: one line per gRPC method of the platform, checked by one server interceptor.

`POLICY` names, for every method, the principals that may make the call; the interceptor
(`grpcserver.TokenVerification`) verifies the call's token and refuses before the handler runs:
no token where one is needed is UNAUTHENTICATED, a token of a principal the line does not name
(or of another table) is PERMISSION_DENIED, and a method without a line is PERMISSION_DENIED for
everyone (denied by default). Handlers check only what the table cannot know (the seat a command
is for, the lobby's host).

Principals, by the token's role (`servicekit.auth`):

- `PLAYER`: a seat token (a table's seat; matchmaking or the platform's bot driver hands it out);
- `SPECTATOR`: a spectator token of one table (ListTables gives them to signed-in players);
- `ACCOUNT`: a registered player (RegisterPlayer's `player_token`): queues, lobbies, ratings;
- `HOST`: an account token as a lobby's host (`host_token`; the handler checks it is the host);
- `SERVICE`: another service of the platform (results of sub-protocols, tables matchmaking forms);
- `OPERATOR`: whoever runs the platform (`monopoly run` / `demo`, tests, tools), from the key;
- `ANYONE`: no token needed (health checks and reflection only).

A player's and a spectator's token holds for its own table only: where the request names a table
(`table_id`), the token must be for that table; a service's and an operator's hold for every table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .auth import Claims
from .errors import Forbidden, Unauthenticated
from .quotas import COMMAND, CREATE, REGISTER, STREAM

PLAYER = "player"
SPECTATOR = "spectator"
ACCOUNT = "account"
HOST = "host"
SERVICE = "service"
OPERATOR = "operator"
ANYONE = "anyone"
#: The longest table id the services take (longer: INVALID_ARGUMENT from the handler).
MAX_TABLE_ID = 64

#: The token role each principal is (HOST: an account presented as a lobby's host).
ROLE_OF = {
    PLAYER: "player",
    SPECTATOR: "spectator",
    ACCOUNT: "account",
    HOST: "account",
    SERVICE: "service",
    OPERATOR: "operator",
}


@dataclass(frozen=True, slots=True)
class Rule:
    """Who may make a call; `table_field`: the request's field naming the table a player's or
    spectator's token must be for (None: the call is not about one table)."""

    who: tuple[str, ...]
    table_field: str | None = "table_id"
    #: The quota a call draws from (`servicekit.quotas`: command, create, register; stream: an open stream).
    quota: str | None = None

    def roles(self) -> frozenset[str]:
        return frozenset(ROLE_OF[p] for p in self.who if p != ANYONE)


_READERS = (PLAYER, SPECTATOR, SERVICE, OPERATOR)  # a table's seats, its spectators, the platform
_MEMBERS = (ACCOUNT, PLAYER, SPECTATOR, SERVICE, OPERATOR)  # anyone the platform gave a token
_PUBLIC = Rule((ANYONE,), None)

#: Every method of the platform's gRPC servers, by its full name: who may call it.
POLICY: dict[str, Rule] = {
    # table.proto
    "/monopoly.v1.TableService/CreateTable": Rule((OPERATOR, SERVICE), None, CREATE),
    "/monopoly.v1.TableService/JoinTable": Rule((SERVICE,)),
    "/monopoly.v1.TableService/GetTable": Rule(_READERS),
    "/monopoly.v1.TableService/SubmitCommand": Rule((PLAYER, SERVICE), quota=COMMAND),
    "/monopoly.v1.TableService/Play": Rule((PLAYER, SERVICE), quota=COMMAND),  # each request of the stream
    "/monopoly.v1.TableService/WatchTable": Rule(_READERS, quota=STREAM),
    "/monopoly.v1.TableService/ListInstances": Rule((OPERATOR, SERVICE)),
    # auction.proto
    "/monopoly.v1.AuctionService/PlaceBid": Rule((PLAYER,), quota=COMMAND),
    "/monopoly.v1.AuctionService/Pass": Rule((PLAYER,), quota=COMMAND),
    "/monopoly.v1.AuctionService/GetAuction": Rule(_READERS),
    "/monopoly.v1.AuctionService/WatchAuction": Rule(_READERS, quota=STREAM),
    # trade.proto
    "/monopoly.v1.TradeService/ProposeTrade": Rule((PLAYER,), quota=COMMAND),
    "/monopoly.v1.TradeService/AcceptTrade": Rule((PLAYER,), quota=COMMAND),
    "/monopoly.v1.TradeService/DeclineTrade": Rule((PLAYER,), quota=COMMAND),
    "/monopoly.v1.TradeService/CancelTrade": Rule((PLAYER,), quota=COMMAND),
    "/monopoly.v1.TradeService/ListTrades": Rule(_READERS),
    # casino.proto
    "/monopoly.v1.CasinoService/PlaceBet": Rule((PLAYER,), quota=COMMAND),
    "/monopoly.v1.CasinoService/Decline": Rule((PLAYER,), quota=COMMAND),
    "/monopoly.v1.CasinoService/GetBet": Rule(_READERS),
    "/monopoly.v1.CasinoService/GetPool": Rule(_READERS),
    # rating.proto: ratings are the platform's members' business, not the whole network's
    "/monopoly.v1.RatingService/GetProfile": Rule(_MEMBERS, None),
    "/monopoly.v1.RatingService/Leaderboard": Rule(_MEMBERS, None),
    "/monopoly.v1.RatingService/History": Rule(_MEMBERS, None),
    "/monopoly.v1.RatingService/GetGame": Rule(_MEMBERS, None),
    # matchmaking.proto
    # RegisterPlayer: the gateway (for browsers) and the launcher
    "/monopoly.v1.MatchmakingService/RegisterPlayer": Rule((SERVICE, OPERATOR), None, REGISTER),
    "/monopoly.v1.MatchmakingService/Enqueue": Rule((ACCOUNT,), None, COMMAND),
    "/monopoly.v1.MatchmakingService/Cancel": Rule((ACCOUNT,), None),
    "/monopoly.v1.MatchmakingService/WatchQueue": Rule((ACCOUNT,), None, STREAM),
    "/monopoly.v1.MatchmakingService/GetMyMatch": Rule((ACCOUNT,), None),
    "/monopoly.v1.MatchmakingService/CreateCustomTable": Rule((HOST,), None, CREATE),
    "/monopoly.v1.MatchmakingService/JoinCustomTable": Rule((ACCOUNT,), None),
    "/monopoly.v1.MatchmakingService/GetLobby": Rule((ACCOUNT,), None),
    "/monopoly.v1.MatchmakingService/StartCustomTable": Rule((HOST,), None),
    "/monopoly.v1.MatchmakingService/ListTables": Rule((ACCOUNT, SERVICE, OPERATOR), None),  # spectator tokens inside
    # every server's health and reflection
    "/grpc.health.v1.Health/Check": _PUBLIC,
    "/grpc.health.v1.Health/Watch": _PUBLIC,
    "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo": _PUBLIC,
    "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo": _PUBLIC,
}


def rule_of(method: str) -> Rule | None:
    return POLICY.get(method)


def needs_token(method: str) -> bool:
    rule = POLICY.get(method)
    return rule is not None and ANYONE not in rule.who


#: Roles whose calls draw from their own quotas (the platform's services and its operators are
#: bounded per connection only: they act for many players at once).
QUOTA_ROLES = ("player", "spectator", "account")


def quota_key(claims: Claims | None, connection: str) -> str | None:
    """Whose quota a call draws from: a seat, a table's spectators, a registered player, else its
    connection (no token); None for the platform's own services and operators."""
    if claims is None:
        return f"anonymous:{connection}"
    if claims.role not in QUOTA_ROLES:
        return None
    if claims.role == "account":
        return f"account:{claims.player}"
    return f"{claims.role}:{claims.table_id}:{claims.seat}"


def check(method: str, claims: Claims | None, request: Any) -> None:
    """Refuse the call unless `POLICY` lets `claims` (None: no token) make it with `request`."""
    rule = POLICY.get(method)
    if rule is None:
        raise Forbidden(f"{method} is not in the platform's access policy: denied")
    if ANYONE in rule.who:
        return
    names = ", ".join(rule.who)
    if claims is None:
        raise Unauthenticated(f"{method} needs a token ({names})")
    if claims.role not in rule.roles():
        raise Forbidden(f"a {claims.role} token may not call {method} (allowed: {names})")
    if rule.table_field is not None and request is not None:
        table_id = getattr(request, rule.table_field, "")
        # An id no table can have (empty, too long) is the handler's INVALID_ARGUMENT, not a matter of access.
        if table_id and len(table_id) <= MAX_TABLE_ID and not claims.holds_for(table_id):
            raise Forbidden("the token is for another table")
