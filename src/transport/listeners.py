"""Bind the server's sockets ourselves: loopback TCP and a 0600 Unix socket.

Binding before Hypercorn starts lets us refuse bad addresses with a clear message,
learn the real port when 0 was asked for (tests), keep the socket file private from
the first instant, and remove it again at exit (Hypercorn leaves it behind).
"""

from __future__ import annotations

import contextlib
import os
import socket
import stat
from pathlib import Path

import attrs

from retrieval_mcp.errors import TransportConfigError
from retrieval_mcp.settings import is_loopback_host

_MAX_UNIX_PATH = 104  # the smallest sun_path among supported platforms, minus NUL


@attrs.define
class Listeners:
    tcp: socket.socket
    port: int
    host: str
    unix: socket.socket | None = None
    unix_path: Path | None = None

    def binds(self) -> list[str]:
        """Hypercorn binds for duplicates of our sockets: Hypercorn closes what it is
        given, and we close ours, so neither closes a descriptor the other owns."""
        socks = [self.tcp] + ([self.unix] if self.unix else [])
        return [f"fd://{os.dup(sock.fileno())}" for sock in socks]

    def close(self) -> None:
        """Close both sockets and remove the socket file. Safe to call twice."""
        for sock in (self.tcp, self.unix):
            if sock is not None and sock.fileno() != -1:
                with contextlib.suppress(OSError):
                    sock.close()
        if self.unix_path is not None:
            with contextlib.suppress(FileNotFoundError):
                if stat.S_ISSOCK(os.lstat(self.unix_path).st_mode):
                    self.unix_path.unlink()
            self.unix_path = None


def open_listeners(host: str, port: int, unix_path: Path | None) -> Listeners:
    """Bind TCP on a loopback ``host`` and, if given, the Unix socket ``unix_path``."""
    if not is_loopback_host(host):
        raise TransportConfigError(
            f"refusing to bind {host!r}: only loopback addresses are served",
            remedy="Set server.host to 127.0.0.1, ::1 or localhost.",
        )
    address = "127.0.0.1" if host == "localhost" else host.strip("[]")
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    tcp = socket.socket(family, socket.SOCK_STREAM)
    try:
        tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        tcp.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        tcp.bind((address, port))
    except OSError as exc:
        tcp.close()
        raise TransportConfigError(
            f"cannot bind {address}:{port}: {exc.strerror}",
            remedy="Stop whatever uses that port, or set server.port to a free one.",
        ) from exc
    listeners = Listeners(tcp=tcp, port=tcp.getsockname()[1], host=address)
    if unix_path is not None:
        try:
            listeners.unix = _bind_unix(unix_path)
            listeners.unix_path = unix_path
        except BaseException:
            listeners.close()
            raise
    return listeners


def _bind_unix(path: Path) -> socket.socket:
    if len(os.fsencode(path)) > _MAX_UNIX_PATH:
        raise TransportConfigError(
            f"socket path is too long for the OS ({len(str(path))} bytes): {path}",
            remedy="Set server.unix_socket to a shorter path.",
        )
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    _remove_stale_socket(path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    previous = os.umask(0o177)
    try:
        sock.bind(os.fspath(path))
    except OSError as exc:
        sock.close()
        raise TransportConfigError(f"cannot bind {path}: {exc.strerror}") from exc
    finally:
        os.umask(previous)
    os.chmod(path, 0o600)
    return sock


def _remove_stale_socket(path: Path) -> None:
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(mode):
        raise TransportConfigError(
            f"{path} exists and is not a socket; refusing to replace it",
            remedy="Move that file away or set server.unix_socket to another path.",
        )
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(os.fspath(path))
    except OSError:
        path.unlink()  # nobody listens: a leftover from a crash
        return
    finally:
        probe.close()
    raise TransportConfigError(
        f"another server is already listening on {path}",
        remedy="Stop the other server first, or set server.unix_socket elsewhere.",
    )
