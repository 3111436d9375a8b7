"""`python -m tests.faults.pgctl start|stop PGDATA [DATABASE]`: pgserver's Postgres started (its URL
printed) or stopped fast, from a process of its own: pgserver forks `pg_ctl` as another user, which
must not happen in a thread of a process running gRPC."""

from __future__ import annotations

import fcntl
import sys
import tempfile
from pathlib import Path


def main() -> None:
    import pgserver
    from pgserver._commands import pg_ctl

    from servicekit.embedded import raise_max_connections

    action, pgdata = sys.argv[1], Path(sys.argv[2])
    database = sys.argv[3] if len(sys.argv) > 3 else "monopoly"
    with open(Path(tempfile.gettempdir()) / "monopoly-pgserver.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # initdb one at a time on this machine (as servicekit.embedded does)
        try:
            server = pgserver.get_server(pgdata, cleanup_mode=None)  # starts it unless running; never stops it
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    if action == "stop":
        pg_ctl(["-w", "-m", "fast", "stop"], pgdata=server.pgdata, user=server.system_user)
        return
    raise_max_connections(server)  # replicas of every service need more than pgserver's 100
    if "1 row" not in server.psql(f"SELECT 1 FROM pg_database WHERE datname = '{database}';"):
        server.psql(f"CREATE DATABASE {database};")
    print(server.get_uri(database), flush=True)


if __name__ == "__main__":
    main()
