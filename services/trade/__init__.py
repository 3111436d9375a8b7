"""The trade service: proposals between the players of a table (RULES.md T1-T6).

gRPC `monopoly.v1.TradeService` (proto/monopoly/v1/trade.proto): the current
player proposes (`ProposeTrade`; T1, or any active player at any time at a
hasbro table, T6), the counterparty accepts or declines, the
proposer may cancel; `ListTrades` shows a table's trades. An accepted trade is
executed by the table (the system command `ExecuteTrade`, command id
`trade:<table_id>:<trade_id>`), which re-checks it; a trade the table refuses
is stored as refused (or expired when its turn is over) and the accept is
answered FAILED_PRECONDITION "stale trade: ..." with the table's rule ID.
Every change of a trade is a `TradeEvent` on `monopoly.trade.<table_id>.<status>`
(outbox, same transaction). Open proposals expire when their turn or the
game ends, or a party goes bankrupt (a durable consumer of the table signals
of the topics turn, trade and lifecycle, `servicekit.signals`).

Design decision: validation reads the table's *current* state through the
table's gRPC `GetTable` (`state_json` -> `engine.codec.state_from_data`) and
runs the engine's own checks on it (`engine.trade.validate_terms`, the T1
windows of `engine.game`), rather than keeping a projection of the table from
its event stream. A projection lags the table, so it would accept proposals
the table has already made stale and refuse ones it has made legal; and the
table re-checks every trade at execution anyway, so the service's check is
only there to refuse bad proposals early. The price is one RPC per proposal.

Roles: a valid token for the wrong seat of a trade (say the proposer
accepting, or a third seat declining) is PERMISSION_DENIED, like a token for
another seat; a forged or expired token is UNAUTHENTICATED.
"""
