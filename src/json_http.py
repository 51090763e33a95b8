"""JSON over HTTP to one remote service, with every failure mapped to our errors.

The REST adapters (remote Qdrant, Databricks Vector Search, Azure AI Search) and the
OpenAI-compatible embeddings provider all talk through ``JsonHttp``: one
``httpx.AsyncClient`` per service, a deadline per request set with ``trio.fail_after``
(no ``timeout=`` plumbing), and the one place where httpx exceptions and HTTP status
codes become ``BackendUnavailable``, ``BackendTimeout``, ``BackendAuthFailed``,
``BackendBadResponse`` or ``BackendError``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import httpx
import trio

from retrieval_mcp.errors import (
    BackendAuthFailed,
    BackendBadResponse,
    BackendError,
    BackendTimeout,
    BackendUnavailable,
)

HeaderSource = Callable[[], Awaitable[Mapping[str, str]]]

_DETAIL_CHARS = 300
#: Genuine connection losses (not refusals, not timeouts): retried once.
_CONNECTION_LOST = (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)


@contextmanager
def bad_response(service: str, action: str) -> Iterator[None]:
    """Turn a parse error while reading an answer into ``BackendBadResponse``."""
    try:
        yield
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        raise BackendBadResponse(
            f"{service} sent a malformed answer to {action}: {type(exc).__name__}: {exc}"
        ) from exc


class JsonHttp:
    """A JSON client for one service. Owns its ``httpx.AsyncClient``; ``aclose`` (or
    leaving ``async with``) closes it, and a closed client refuses every request.

    ``headers`` is called before every request (so an OAuth token can be refreshed);
    ``timeout_s`` bounds each request from connect to the last byte; cancellation
    propagates as usual (a cancelled request is simply abandoned).
    """

    def __init__(
        self,
        service: str,
        base_url: str,
        *,
        timeout_s: float,
        headers: HeaderSource | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise BackendUnavailable(
                f"{service}: {base_url!r} is not an http(s) URL",
                remedy="Set the backend's URL in the server config, e.g. https://host:port.",
            )
        self.service = service
        self.base_url = base_url.rstrip("/")
        self._timeout_s = timeout_s
        self._headers = headers
        # No httpx timeouts: the deadline is a Trio cancel scope around the whole call.
        self._client = httpx.AsyncClient(
            base_url=self.base_url, timeout=httpx.Timeout(None), transport=transport
        )
        self.reconnects = 0

    async def __aenter__(self) -> JsonHttp:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    @property
    def closed(self) -> bool:
        return self._client.is_closed

    async def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: Mapping[str, str] | None = None,
        form: Mapping[str, str] | None = None,
        auth: tuple[str, str] | None = None,
        action: str = "",
    ) -> Any:
        """Send one request and return the decoded JSON body (or the text, for text/plain)."""
        action = action or f"{method} {path}"
        if self.closed:
            raise BackendUnavailable(f"the {self.service} client is closed")
        headers = dict(await self._headers()) if self._headers is not None else {}
        try:
            with trio.fail_after(self._timeout_s):
                for attempt in (1, 2):
                    try:
                        response = await self._client.request(
                            method,
                            path,
                            json=json,
                            params=params,
                            data=form,
                            auth=auth,
                            headers=headers,
                        )
                        break
                    except _CONNECTION_LOST:
                        # Transparent reconnect: a pooled connection the server (or a
                        # proxy) closed under us. Every call this client makes is a read
                        # (queries and lookups), so replaying it once on a fresh
                        # connection is safe; a second loss is reported.
                        if attempt == 2:
                            raise
                        self.reconnects += 1
        except trio.TooSlowError as exc:
            raise BackendTimeout(
                f"{self.service} did not answer {action} within {self._timeout_s:g} s"
            ) from exc
        except httpx.TimeoutException as exc:
            raise BackendTimeout(f"{self.service} timed out on {action}: {exc}") from exc
        except httpx.ConnectError as exc:
            raise BackendUnavailable(
                f"cannot connect to {self.service} at {self.base_url}: {exc}",
                remedy=(
                    f"Check that {self.service} is running and reachable at {self.base_url} "
                    "(the URL in the backend config), then retry."
                ),
            ) from exc
        except httpx.HTTPError as exc:
            raise BackendUnavailable(
                f"{self.service} connection failed during {action}: {type(exc).__name__}: {exc}"
            ) from exc
        return self._decode(response, action)

    def _decode(self, response: httpx.Response, action: str) -> Any:
        status = response.status_code
        if status in (401, 403):
            raise BackendAuthFailed(
                f"{self.service} refused the credentials for {action} "
                f"(HTTP {status}): {_detail(response)}"
            )
        if status == 404:
            raise BackendError(
                f"{self.service} has no such resource for {action} (HTTP 404): {_detail(response)}",
                remedy="The operator should check the index/collection names in the backend "
                "config.",
            )
        if status == 429:
            raise BackendUnavailable(
                f"{self.service} is rate-limiting us (HTTP 429)",
                remedy="Retry in a moment; the backend asked us to slow down.",
            )
        if status >= 500:
            raise BackendUnavailable(
                f"{self.service} failed on {action} (HTTP {status}): {_detail(response)}"
            )
        if status >= 400:
            raise BackendError(
                f"{self.service} rejected {action} (HTTP {status}): {_detail(response)}",
                remedy="The operator should check the backend config (field names, index "
                "schema, API version) against the index; the server log has the details.",
            )
        content_type = response.headers.get("content-type", "")
        if content_type.startswith("text/plain"):
            return response.text
        try:
            return response.json()
        except ValueError as exc:
            raise BackendBadResponse(
                f"{self.service} answered {action} with something that is not JSON "
                f"({content_type or 'no content type'}): {response.text[:80]!r}"
            ) from exc

    async def aclose(self) -> None:
        """Close the connection pool. Safe to call twice; never interrupted by a cancel."""
        with trio.CancelScope(shield=True), trio.move_on_after(2):
            await self._client.aclose()


def _detail(response: httpx.Response) -> str:
    text = response.text.strip().replace("\n", " ")
    return text[:_DETAIL_CHARS] or response.reason_phrase
