"""What every test shares: a random token key for the session, never a constant.

The platform has no default key (`servicekit.settings.token_secret`); tests sign and verify with
a key made here, which the services they start inherit (TOKEN_SECRET in the environment). A
test that checks a key's absence or the data folder's own key clears it (monkeypatch).
"""

from __future__ import annotations

import os
import secrets

os.environ.setdefault("TOKEN_SECRET", "test-" + secrets.token_hex(32))

# Each xdist worker (gw0, gw1, ...) draws its servers' ports from its own part of the range
# (`servicekit.embedded.port_range`): a port one worker's chaos test frees while its service restarts
# is never another worker's pick.
_worker = os.environ.get("PYTEST_XDIST_WORKER", "")
if _worker.startswith("gw") and _worker[2:].isdigit():
    _slot = int(_worker[2:]) % 4
    os.environ.setdefault("MONOPOLY_PORT_RANGE", f"{20_000 + _slot * 3_000}-{23_000 + _slot * 3_000}")
