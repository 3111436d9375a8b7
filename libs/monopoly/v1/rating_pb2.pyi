from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class GetProfileRequest(_message.Message):
    __slots__ = ("player",)
    PLAYER_FIELD_NUMBER: _ClassVar[int]
    player: str
    def __init__(self, player: _Optional[str] = ...) -> None: ...

class PoolRating(_message.Message):
    __slots__ = ("pool", "mu", "sigma", "ordinal", "games")
    POOL_FIELD_NUMBER: _ClassVar[int]
    MU_FIELD_NUMBER: _ClassVar[int]
    SIGMA_FIELD_NUMBER: _ClassVar[int]
    ORDINAL_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    pool: str
    mu: float
    sigma: float
    ordinal: float
    games: int
    def __init__(self, pool: _Optional[str] = ..., mu: _Optional[float] = ..., sigma: _Optional[float] = ..., ordinal: _Optional[float] = ..., games: _Optional[int] = ...) -> None: ...

class Achievement(_message.Message):
    __slots__ = ("achievement", "table_id", "granted_unix_ms")
    ACHIEVEMENT_FIELD_NUMBER: _ClassVar[int]
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    GRANTED_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    achievement: str
    table_id: str
    granted_unix_ms: int
    def __init__(self, achievement: _Optional[str] = ..., table_id: _Optional[str] = ..., granted_unix_ms: _Optional[int] = ...) -> None: ...

class Quest(_message.Message):
    __slots__ = ("quest", "progress", "target", "completed")
    QUEST_FIELD_NUMBER: _ClassVar[int]
    PROGRESS_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    COMPLETED_FIELD_NUMBER: _ClassVar[int]
    quest: str
    progress: int
    target: int
    completed: bool
    def __init__(self, quest: _Optional[str] = ..., progress: _Optional[int] = ..., target: _Optional[int] = ..., completed: _Optional[bool] = ...) -> None: ...

class Profile(_message.Message):
    __slots__ = ("player", "ratings", "xp", "achievements", "quests", "games", "rated_games")
    PLAYER_FIELD_NUMBER: _ClassVar[int]
    RATINGS_FIELD_NUMBER: _ClassVar[int]
    XP_FIELD_NUMBER: _ClassVar[int]
    ACHIEVEMENTS_FIELD_NUMBER: _ClassVar[int]
    QUESTS_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    RATED_GAMES_FIELD_NUMBER: _ClassVar[int]
    player: str
    ratings: _containers.RepeatedCompositeFieldContainer[PoolRating]
    xp: int
    achievements: _containers.RepeatedCompositeFieldContainer[Achievement]
    quests: _containers.RepeatedCompositeFieldContainer[Quest]
    games: int
    rated_games: int
    def __init__(self, player: _Optional[str] = ..., ratings: _Optional[_Iterable[_Union[PoolRating, _Mapping]]] = ..., xp: _Optional[int] = ..., achievements: _Optional[_Iterable[_Union[Achievement, _Mapping]]] = ..., quests: _Optional[_Iterable[_Union[Quest, _Mapping]]] = ..., games: _Optional[int] = ..., rated_games: _Optional[int] = ...) -> None: ...

class LeaderboardRequest(_message.Message):
    __slots__ = ("pool", "page", "page_size")
    POOL_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    pool: str
    page: int
    page_size: int
    def __init__(self, pool: _Optional[str] = ..., page: _Optional[int] = ..., page_size: _Optional[int] = ...) -> None: ...

class LeaderboardEntry(_message.Message):
    __slots__ = ("rank", "player", "ordinal", "mu", "sigma", "games")
    RANK_FIELD_NUMBER: _ClassVar[int]
    PLAYER_FIELD_NUMBER: _ClassVar[int]
    ORDINAL_FIELD_NUMBER: _ClassVar[int]
    MU_FIELD_NUMBER: _ClassVar[int]
    SIGMA_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    rank: int
    player: str
    ordinal: float
    mu: float
    sigma: float
    games: int
    def __init__(self, rank: _Optional[int] = ..., player: _Optional[str] = ..., ordinal: _Optional[float] = ..., mu: _Optional[float] = ..., sigma: _Optional[float] = ..., games: _Optional[int] = ...) -> None: ...

class LeaderboardPage(_message.Message):
    __slots__ = ("pool", "page", "page_size", "total", "entries")
    POOL_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    pool: str
    page: int
    page_size: int
    total: int
    entries: _containers.RepeatedCompositeFieldContainer[LeaderboardEntry]
    def __init__(self, pool: _Optional[str] = ..., page: _Optional[int] = ..., page_size: _Optional[int] = ..., total: _Optional[int] = ..., entries: _Optional[_Iterable[_Union[LeaderboardEntry, _Mapping]]] = ...) -> None: ...

class HistoryRequest(_message.Message):
    __slots__ = ("player", "limit")
    PLAYER_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    player: str
    limit: int
    def __init__(self, player: _Optional[str] = ..., limit: _Optional[int] = ...) -> None: ...

class HistoryEntry(_message.Message):
    __slots__ = ("table_id", "mode", "seat", "place", "players", "rated", "pool", "mu_before", "mu_after", "sigma_before", "sigma_after", "ordinal_delta", "xp", "reason", "rounds", "real_ms", "ended_unix_ms", "achievements", "player")
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    PLACE_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    RATED_FIELD_NUMBER: _ClassVar[int]
    POOL_FIELD_NUMBER: _ClassVar[int]
    MU_BEFORE_FIELD_NUMBER: _ClassVar[int]
    MU_AFTER_FIELD_NUMBER: _ClassVar[int]
    SIGMA_BEFORE_FIELD_NUMBER: _ClassVar[int]
    SIGMA_AFTER_FIELD_NUMBER: _ClassVar[int]
    ORDINAL_DELTA_FIELD_NUMBER: _ClassVar[int]
    XP_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    ROUNDS_FIELD_NUMBER: _ClassVar[int]
    REAL_MS_FIELD_NUMBER: _ClassVar[int]
    ENDED_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    ACHIEVEMENTS_FIELD_NUMBER: _ClassVar[int]
    PLAYER_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    mode: str
    seat: int
    place: int
    players: int
    rated: bool
    pool: str
    mu_before: float
    mu_after: float
    sigma_before: float
    sigma_after: float
    ordinal_delta: float
    xp: int
    reason: str
    rounds: int
    real_ms: int
    ended_unix_ms: int
    achievements: _containers.RepeatedScalarFieldContainer[str]
    player: str
    def __init__(self, table_id: _Optional[str] = ..., mode: _Optional[str] = ..., seat: _Optional[int] = ..., place: _Optional[int] = ..., players: _Optional[int] = ..., rated: _Optional[bool] = ..., pool: _Optional[str] = ..., mu_before: _Optional[float] = ..., mu_after: _Optional[float] = ..., sigma_before: _Optional[float] = ..., sigma_after: _Optional[float] = ..., ordinal_delta: _Optional[float] = ..., xp: _Optional[int] = ..., reason: _Optional[str] = ..., rounds: _Optional[int] = ..., real_ms: _Optional[int] = ..., ended_unix_ms: _Optional[int] = ..., achievements: _Optional[_Iterable[str]] = ..., player: _Optional[str] = ...) -> None: ...

class HistoryPage(_message.Message):
    __slots__ = ("player", "entries")
    PLAYER_FIELD_NUMBER: _ClassVar[int]
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    player: str
    entries: _containers.RepeatedCompositeFieldContainer[HistoryEntry]
    def __init__(self, player: _Optional[str] = ..., entries: _Optional[_Iterable[_Union[HistoryEntry, _Mapping]]] = ...) -> None: ...

class GetGameRequest(_message.Message):
    __slots__ = ("table_id",)
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    def __init__(self, table_id: _Optional[str] = ...) -> None: ...

class GameResult(_message.Message):
    __slots__ = ("table_id", "mode", "rated", "pool", "reason", "rounds", "real_ms", "ended_unix_ms", "players")
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    RATED_FIELD_NUMBER: _ClassVar[int]
    POOL_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    ROUNDS_FIELD_NUMBER: _ClassVar[int]
    REAL_MS_FIELD_NUMBER: _ClassVar[int]
    ENDED_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    mode: str
    rated: bool
    pool: str
    reason: str
    rounds: int
    real_ms: int
    ended_unix_ms: int
    players: _containers.RepeatedCompositeFieldContainer[HistoryEntry]
    def __init__(self, table_id: _Optional[str] = ..., mode: _Optional[str] = ..., rated: _Optional[bool] = ..., pool: _Optional[str] = ..., reason: _Optional[str] = ..., rounds: _Optional[int] = ..., real_ms: _Optional[int] = ..., ended_unix_ms: _Optional[int] = ..., players: _Optional[_Iterable[_Union[HistoryEntry, _Mapping]]] = ...) -> None: ...
