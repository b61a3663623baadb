"""Where a remote judge lives and how to authenticate to it, checked before any byte is sent.

Base URL rule: the chat endpoint is ``{base_url}/chat/completions``. A base URL
with no path (``http://host:8000``) gets ``/v1`` added, as every
OpenAI-compatible server serves the API there; any other path is kept as
given (``http://host/openai/v1``, ``http://host/api``). A URL that already ends
in ``/chat/completions`` is accepted and used as is.

Only http and https are allowed, and link-local or cloud-metadata hosts are
refused: a judge URL read from a config file must not turn the judge into a
way to read instance credentials. A literal address is checked here; a name
is checked where it is connected to, address by address
(:mod:`localjudge._clients.guarded_network`), so a DNS answer cannot slip past.
"""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Mapping
from typing import NoReturn
from urllib.parse import SplitResult, urlsplit, urlunsplit

from ..errors import UsageError

__all__ = [
    "API_KEY_ENV_VARS",
    "Endpoint",
    "Secret",
    "embedded_ipv4",
    "refused_address",
    "resolve_api_key",
    "safe_url",
]

API_KEY_ENV_VARS = ("LOCALJUDGE_API_KEY", "OPENAI_API_KEY")

_CHAT_PATH = "/chat/completions"

# Hostnames of instance-metadata services. The addresses behind them are
# refused by the network checks below too; the names are refused so that a DNS
# answer is never needed to decide.
_METADATA_HOSTS = frozenset(
    {
        "metadata",
        "metadata.google.internal",
        "metadata.goog",
        "metadata.azure.com",
        "instance-data",
        "instance-data.ec2.internal",
    }
)

_METADATA_NETWORKS = tuple(
    ipaddress.ip_network(n)
    for n in (
        "169.254.0.0/16",  # IPv4 link-local, AWS/GCP/Azure/OpenStack metadata
        "fe80::/10",  # IPv6 link-local
        "fd00:ec2::254/128",  # AWS metadata over IPv6
        "100.100.100.200/32",  # Alibaba Cloud metadata
        "192.0.0.192/32",  # Oracle Cloud metadata
    )
)


class Secret:
    """Holds a credential; its repr and str never show it."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def redact(self, text: str) -> str:
        """``text`` with every occurrence of the secret masked (servers sometimes echo keys)."""
        if not self._value or len(self._value) < 4:
            return text
        return text.replace(self._value, "***")

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__

    def __bool__(self) -> bool:
        return bool(self._value)

    def __reduce__(self) -> NoReturn:  # pragma: no cover - pickling is refused outright
        raise TypeError("Secret values are not picklable")


def resolve_api_key(api_key: str | None, environ: Mapping[str, str] | None = None) -> Secret | None:
    """The key from the argument, else ``LOCALJUDGE_API_KEY``, else ``OPENAI_API_KEY``."""
    if api_key is not None:
        if not isinstance(api_key, str):
            raise UsageError(f"api_key must be a string, got {type(api_key).__name__}")
        return Secret(api_key) if api_key else None
    env = os.environ if environ is None else environ
    for name in API_KEY_ENV_VARS:
        value = env.get(name)
        if value:
            return Secret(value)
    return None


class Endpoint:
    """A checked base URL and the chat-completions URL derived from it."""

    __slots__ = ("base_url", "chat_url", "display", "host")

    def __init__(self, base_url: str) -> None:
        if not isinstance(base_url, str) or not base_url.strip():
            raise UsageError("base_url must be a non-empty http(s) URL such as http://127.0.0.1:8000/v1")
        parts = urlsplit(base_url.strip())
        scheme = parts.scheme.lower()
        if scheme not in ("http", "https"):
            raise UsageError(f"base_url must use http or https, not {scheme or 'no scheme'!r}: {_display(parts)}")
        host = (parts.hostname or "").lower().rstrip(".")
        if not host:
            raise UsageError(f"base_url has no host: {_display(parts)}")
        _refuse_metadata_host(host, _display(parts))
        if "@" in parts.netloc:  # httpx would send it as Basic auth, unredacted wherever a server echoes it
            raise UsageError(
                f"base_url holds credentials before its host ({_display(parts)}); give the key as api_key= "
                "or in $LOCALJUDGE_API_KEY instead, so that it is sent as a Bearer token and kept out of logs"
            )
        try:
            parts.port  # noqa: B018 - raises on a malformed port
        except ValueError:
            raise UsageError(f"base_url has an invalid port: {_display(parts)}") from None
        path = parts.path.rstrip("/")
        if path.endswith(_CHAT_PATH):
            path = path[: -len(_CHAT_PATH)]
        elif not path:
            path = "/v1"
        self.host = host
        self.base_url = urlunsplit((scheme, parts.netloc, path, "", ""))
        self.chat_url = urlunsplit((scheme, parts.netloc, path + _CHAT_PATH, parts.query, ""))
        self.display = _display(urlsplit(self.base_url))

    def __repr__(self) -> str:
        return f"Endpoint({self.display!r})"


#: IPv6 prefixes whose last 32 bits are an IPv4 address: NAT64 (well-known and local-use), SIIT
_LAST_32_BITS = tuple(ipaddress.ip_network(n) for n in ("64:ff9b::/96", "64:ff9b:1::/48", "::ffff:0:0:0/96"))


def embedded_ipv4(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one carries, in any of the forms that route to it.

    IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d), NAT64
    (64:ff9b::/96, 64:ff9b:1::/48), SIIT (::ffff:0:a.b.c.d), 6to4 (2002::/16)
    and Teredo (2001::/32, the client's address).
    """
    if not isinstance(address, ipaddress.IPv6Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    if any(address in network for network in _LAST_32_BITS) or (int(address) >> 32 == 0 and int(address) > 0xFFFF):
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)  # (::a.b.c.d, but not :: or ::1)
    return None


def refused_address(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Whether connecting to ``address`` is refused: link-local or cloud metadata, however it is written."""
    candidates = [address, embedded_ipv4(address)]
    return any(a is not None and any(a in network for network in _METADATA_NETWORKS) for a in candidates)


def _refuse_metadata_host(host: str, shown: str) -> None:
    if host in _METADATA_HOSTS:
        raise UsageError(f"base_url points at a cloud metadata service, which is refused: {shown}")
    address = _as_address(host)
    if address is not None and refused_address(address):
        raise UsageError(
            f"base_url points at a link-local or cloud metadata address ({address}), which is refused: {shown}"
        )


def _as_address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The IP a host literal denotes, including legacy IPv4 forms (``0xA9FEA9FE``, ``2852039166``)."""
    try:
        return ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        pass
    if all(c in "0123456789abcdefx." for c in host):
        try:
            return ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            return None
    return None


def _display(parts: SplitResult) -> str:
    """A URL safe to show: user info and query values removed."""
    netloc = parts.netloc
    if "@" in netloc:
        netloc = "***@" + netloc.rsplit("@", 1)[1]
    query = "&".join(f"{pair.split('=', 1)[0]}=***" for pair in parts.query.split("&") if pair) if parts.query else ""
    return str(urlunsplit((parts.scheme, netloc, parts.path, query, "")))


def safe_url(url: str) -> str:
    """Any URL (a redirect target, say) with user info and query values removed."""
    return _display(urlsplit(url))
