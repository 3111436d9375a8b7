"""Recompute a settled bet from its ledger row and say whether it matches (`monopoly casino verify BET_ID`).

The die and the jackpot draw come again from the recorded seed and counter
(`engine.casino.draw`), the payout from the numbers (`engine.casino.payout`),
the jackpot and the pool after from the pool before and the bet's addition.
`verify` returns the command's exit code: 0 if everything matches the ledger, 1 if not (or no
such settled bet).
"""

from __future__ import annotations

from typing import Any

import asyncpg

from engine import casino
from engine.config import CasinoRules


def recompute(row: dict[str, Any], rules: CasinoRules | None = None) -> dict[str, Any]:
    """What the ledger row should say, from its seed, counter, numbers and pool before."""
    rules = rules or CasinoRules()
    numbers = tuple(row["numbers"])
    die, jackpot_hit = casino.draw(int(row["seed"]), int(row["counter"]), rules)
    pool = int(row["pool_before"]) + rules.pool_per_bet
    settled = casino.settle(int(row["seat"]), numbers, die, jackpot_hit, pool, rules, casino.DRAWS_PER_BET)
    return {
        "die": settled.die,
        "jackpot_hit": settled.jackpot_hit,
        "stake": rules.stake,
        "payout": settled.payout,
        "pool_add": rules.pool_per_bet,
        "jackpot": settled.jackpot,
        "pool_after": pool - settled.jackpot,
    }


def differences(row: dict[str, Any], rules: CasinoRules | None = None) -> list[str]:
    expected = recompute(row, rules)
    return [f"{key}: ledger {row[key]!r}, recomputed {value!r}" for key, value in expected.items() if row[key] != value]


async def verify(database_url: str, bet_id: str) -> int:
    conn = await asyncpg.connect(database_url, server_settings={"search_path": "casino"})
    try:
        row = await conn.fetchrow("SELECT * FROM ledger WHERE bet_id = $1", bet_id)
        seed = await conn.fetchval("SELECT seed FROM pools WHERE table_id = $1", row["table_id"]) if row else None
    except asyncpg.UndefinedTableError:
        print("monopoly casino: this database has no casino ledger (the casino service never ran on it)")
        return 1
    finally:
        await conn.close()
    if row is None:
        print(f"bet {bet_id}: no settled bet in the ledger")
        return 1
    data = dict(row)
    problems = differences(data)
    if seed is not None and seed != data["seed"]:
        problems.append(f"seed: ledger {data['seed']}, the table's pool {seed}")
    print(
        f"bet {bet_id}: seat {data['seat']} numbers {list(data['numbers'])} seed {data['seed']} "
        f"counter {data['counter']}: die {data['die']}, jackpot {'hit' if data['jackpot_hit'] else 'missed'}, "
        f"payout ${data['payout']}, jackpot ${data['jackpot']}, pool ${data['pool_before']} -> ${data['pool_after']}"
    )
    if problems:
        print("MISMATCH: " + "; ".join(problems))
        return 1
    print("match: the recorded draws and amounts recompute exactly")
    return 0
