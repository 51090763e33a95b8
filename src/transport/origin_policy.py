"""Which browsers and host names may talk to us: the DNS-rebinding and cross-site defence.

A loopback port is reachable from every web page the user opens. Two headers tell a
browser's request apart from an agent's: ``Host`` (a rebinding page's request carries
the attacker's name) and ``Origin`` / ``Sec-Fetch-Site`` (the page that sent it).

- ``Host`` must be one of ours **for the listener the request came in on**: on TCP,
  ``127.0.0.1:<port>``, ``localhost:<port>`` or ``[::1]:<port>`` (our port, no other),
  plus ``server.allowed_hosts``; on the Unix socket, ``localhost`` (what clients send
  there). Anything else, a missing Host or two of them → 421.
- ``Origin``, when present, must be listed: ``http://127.0.0.1:<port>``,
  ``http://localhost:<port>``, ``http://[::1]:<port>`` plus ``server.allowed_origins``.
  ``Origin: null`` (sandboxed frames, ``file://`` pages) is never listed → 403.
- Without ``Origin``, a ``Sec-Fetch-Site`` other than ``same-origin``/``none`` means a
  browser sent it from another site (an ``<img>`` or ``no-cors`` fetch) → 403.

Agents send no ``Origin`` and no fetch metadata, so none of this gets in their way. The
same lists are given to the MCP SDK's own check, which runs after ours.
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from retrieval_mcp.transport.asgi_types import Scope, header_values

_SAME_SITE_FETCH = frozenset({"same-origin", "none"})


@attrs.frozen
class Refusal:
    status: int
    error: str
    message: str


@attrs.frozen
class OriginPolicy:
    tcp_hosts: frozenset[str]
    unix_hosts: frozenset[str]
    origins: frozenset[str]

    @classmethod
    def for_port(
        cls,
        port: int,
        *,
        extra_hosts: Iterable[str] = (),
        extra_origins: Iterable[str] = (),
    ) -> OriginPolicy:
        names = ("127.0.0.1", "localhost", "[::1]")
        extra = {h.lower() for h in extra_hosts}
        return cls(
            tcp_hosts=frozenset({f"{n}:{port}" for n in names} | extra),
            unix_hosts=frozenset({"localhost"} | extra),
            origins=frozenset({f"http://{n}:{port}" for n in names} | set(extra_origins)),
        )

    @property
    def all_hosts(self) -> list[str]:
        return sorted(self.tcp_hosts | self.unix_hosts)

    def check(self, scope: Scope) -> Refusal | None:
        """None when the request may proceed, else what to answer."""
        hosts = header_values(scope, b"host")
        allowed = self.unix_hosts if scope.get("server") is None else self.tcp_hosts
        if len(hosts) != 1 or hosts[0].decode("latin-1").lower() not in allowed:
            return Refusal(421, "misdirected_request", "this server does not serve that Host")
        origins = header_values(scope, b"origin")
        if origins:
            if len(origins) != 1 or origins[0].decode("latin-1") not in self.origins:
                return Refusal(403, "forbidden_origin", "requests from that Origin are refused")
            return None
        fetch_site = header_values(scope, b"sec-fetch-site")
        if fetch_site and fetch_site[0].decode("latin-1").lower() not in _SAME_SITE_FETCH:
            return Refusal(403, "forbidden_origin", "cross-site browser requests are refused")
        return None
