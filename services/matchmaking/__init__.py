"""The matchmaking service: players, a queue per mode, custom tables (R4)."""
