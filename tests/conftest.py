"""What every test shares: a random token key for the session, never a constant.

The platform has no default key (`servicekit.settings.token_secret`); tests sign and verify with
a key made here, which the services they start inherit (TOKEN_SECRET in the environment). A
test that checks a key's absence or the data folder's own key clears it (monkeypatch).
"""

from __future__ import annotations

import os
import secrets

os.environ.setdefault("TOKEN_SECRET", "test-" + secrets.token_hex(32))
