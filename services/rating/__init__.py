"""The rating service: ratings, XP, achievements and quests from the games the tables finish (R1, R2).

It reads the table signals of the topics lifecycle, turn and casino
(`servicekit.signals`, one durable consumer, not the tables' whole event
stream), keeps a small record per table (mode, players, rounds, wall time of
creation, jackpots), records the tables matchmaking forms (a second durable
consumer, of the match stream) and judges each game once, on its `GameEnded`.

Decisions (R1, R2 and what they leave open)
-------------------------------------------
* A game is *clean* when it has no bot player, lasted at least 10 rounds and
  at least 10 minutes of real time (`ratings.Thresholds`: R1's numbers by
  default; RATING_MIN_REAL_MINUTES lowers the real time for platforms whose
  games are short on purpose, tests and demos of bots). Rounds = the number of
  the last round begun (`TurnStarted.round`, which starts at 1). Real time =
  the wall clock (`occurred_at.wall_unix_ms`) of the `GameEnded` envelope
  minus that of the `TableCreated` envelope: never game time, which a scaled
  clock (E6) speeds up.
* Who played: for a table matchmaking formed (its `MatchEvent` "formed" on
  `monopoly.match.<table_id>.formed`), each seat's player id is the key of its
  ratings, XP, history and profile, and matchmaking's bot flags say who is a
  bot (a bot-filled table: "R1: bot players (bot-1, ...)"; a table it formed
  unrated without a flagged bot is not rated either). Any other table keys its
  players by display name, and its bots are known by their names
  (`ratings.is_bot`): a display name starting with the word "bot" (any case,
  alone or before a separator or digit: "bot-2", "Bot_Alice", not "Botond"), or
  "<kind>-<n>" for a bot kind of `libs/bots` ("heuristic-0", "random-3"), the
  names the bot clients and the load tests seat.
* Order of arrival: the match is looked up when the game is judged, at its
  `GameEnded`: first in the `matches` table the match consumer fills, then in
  matchmaking's stream itself (the last message on the table's "formed"
  subject), for when the match consumer lags behind the table consumer (after
  a restart both catch up at their own pace). Matchmaking commits the match
  and its outbox row before any seat token exists, so no seat acts before
  then; its relay publishes the row at once. The race left: a game that ends
  before the relay published "formed" (matchmaking down between its commit and
  the publish, for a whole game) is judged as a table matchmaking did not form.
* R1: only clean Classic games (online rule set) are rated, in the "ffa" pool,
  and give XP.
* R2 against R1 for Custom: R1 would give a Custom game no XP at all, R2 half.
  R2 is the specific rule and wins: a clean Custom game gives half the XP the
  same result would give in Classic (rounded down), is never rated and grants
  no achievements and no quest progress. An unclean Custom game gives nothing.
* Speed, Duel and Team 2v2 are neither rated nor give XP (R1). R1 does not
  speak of achievements and quests, so a clean game of these modes grants
  them ("win a Duel" needs it); unclean games grant nothing, whatever the mode.
* Pools: "ffa" (every mode but Team 2v2) and "team" (Team 2v2, teams of seats
  0+2 against 1+3). Team 2v2 is not rated under R1, so the team pool stays
  empty unless R1 changes; the code rates it all the same.
* Ranks: the final places of `GameEnded.places` (winner 1st, then the reverse
  order of elimination, D5; a round-cap end ranks by net worth); openskill's
  Plackett-Luce model, defaults mu 25, sigma 25/3; the leaderboard orders by
  the ordinal mu - 3 sigma.
* XP (`ratings.xp_for`): by place 100, 60, 40, 25, 10 (1st to 5th), plus 2 per
  round played, that bonus capped at 50: a seat that went out (bankrupt, or
  left, R3) counts the rounds up to the one it went out in (`tables.rounds_out`).
* Achievements: "first_win" (first 1st place), "duel_win" (win a Duel),
  "jackpot" (hit the casino jackpot, K3, in the game). Quests: "play_3" (play
  3 games that grant quests), "win_2" (win 2 of them).
* Exactly once: the game's verdict row (`rated_games`, keyed by table id) is
  inserted in the same transaction as every rating, XP, achievement and quest
  change; a redelivered `GameEnded` finds it and changes nothing.
"""
