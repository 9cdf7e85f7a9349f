"""An endpoint a sandboxed agent may reach, as the config and the executors name it: 'host:port',
'[::1]:port' or a URL. Parsed here, below the runs, so that the config file can say a bad one at its line."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from urllib.parse import urlsplit

PORTS = {"https": 443, "http": 80}
EXPECTED = "host:port or a URL such as https://api.example.com"


@dataclass(frozen=True, order=True)
class Endpoint:
    host: str  # a lowercase name or an IP address, without brackets
    port: int

    def __str__(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"

    @property
    def loopback(self) -> bool:
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False


def endpoint(text: str) -> Endpoint:
    """'host:port', '[::1]:port' or a URL (its scheme's port when it names none). ValueError says what was
    expected."""
    text = text.strip()
    try:
        if "://" in text:
            parts = urlsplit(text)
            if parts.scheme not in PORTS or not parts.hostname:
                raise ValueError
            port = parts.port or PORTS[parts.scheme]
            host = parts.hostname
        else:
            parts = urlsplit(f"//{text}")
            if not parts.hostname or parts.port is None or parts.path not in ("", "/"):
                raise ValueError
            host, port = parts.hostname, parts.port
    except ValueError:
        raise ValueError(f"{text!r} is not an endpoint: expected {EXPECTED}") from None
    if not 0 < port < 65536:
        raise ValueError(f"{text!r}: the port must be between 1 and 65535")
    return Endpoint(host.lower(), port)
