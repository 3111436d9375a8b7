"""The secrets of a platform in containers, written once into one folder (docker-compose's `bus-secrets`
volume) and kept there: `python -m servicekit.provision FOLDER`.

* `users.json`: the bus users' random passwords (`natsauth`), reused when it runs again;
* `ca/`: a private CA (`certs`), whose key stays here: no container but this one mounts it;
* `nats/`: what the NATS container mounts: `nats.conf` (every user with its permissions, TLS required
  with a client certificate), its certificate (host `nats`);
* `<principal>/`: what each service's container mounts, and nothing else: `password` (its bus user's),
  `cert.pem` / `key.pem` (its certificate, host `<principal>`, server and client: mTLS) and `ca.pem`.

Certificates also name `localhost` and 127.0.0.1, for a developer who publishes the ports
(docker-compose.ports.yml) and calls in with a principal's certificate.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from . import certs, natsauth

#: Who gets a certificate: the services (the gateway has no bus user but calls the others over mTLS)
#: and the operator's and the reader's clients.
PRINCIPALS = ("table", "auction", "trade", "casino", "matchmaking", "rating", "gateway", "analytics", "admin")
#: Where the NATS container mounts its folder.
NATS_DIR = "/etc/nats/secrets"


def _install(issued: certs.Issued, into: Path) -> None:
    into.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(issued.cert, into / "cert.pem")
    shutil.copyfile(issued.key, into / "key.pem")
    (into / "key.pem").chmod(0o600)
    shutil.copyfile(issued.ca, into / "ca.pem")


def write(folder: Path, listen: str = "0.0.0.0:4222", store_dir: str = "/data") -> None:
    """Fill `folder` (see the module's docstring); certificates are issued anew each time, from the same CA."""
    passwords = natsauth.load_or_create(folder / "users.json")
    ca = folder / "ca"
    for name in PRINCIPALS:
        _install(certs.issue(ca, name, (name, "localhost", "127.0.0.1")), folder / name)
        if name in passwords:
            (folder / name / "password").write_text(passwords[name])
    _install(certs.issue(ca, "nats", ("nats", "localhost", "127.0.0.1")), folder / "nats")
    tls = {
        "cert_file": f"{NATS_DIR}/cert.pem",
        "key_file": f"{NATS_DIR}/key.pem",
        "ca_file": f"{NATS_DIR}/ca.pem",
        "verify": True,
    }
    (folder / "nats" / "nats.conf").write_text(natsauth.server_config(listen, Path(store_dir), passwords, tls))


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        raise SystemExit("usage: python -m servicekit.provision FOLDER")
    write(Path(args[0]))
    print(f"bus users, a CA and certificates for {', '.join(PRINCIPALS)} in {args[0]}")


if __name__ == "__main__":
    main()
