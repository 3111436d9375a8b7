"""The casino service: bets at the casino (K1-K4) with its own seeded draws and durable jackpot pools."""
