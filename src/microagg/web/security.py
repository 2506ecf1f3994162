"""Access token, session cookie and CSRF checks.

Every request must carry the access token printed at start: in the URL's ``?token=`` once
(a GET with it is redirected to the same page without it, and leaves an HttpOnly,
SameSite=Strict cookie), then in that cookie. Tokens are compared in constant time; anything
else is answered 403. Each browser gets a session (a random 32-byte id in another such
cookie), and every POST must carry the session's CSRF token in its form (:func:`check_csrf`).
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qsl, urlencode

from starlette.datastructures import URL
from starlette.requests import HTTPConnection, Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response

from .sessions import SessionState, SessionStore

__all__ = ["AccessMiddleware", "CsrfError", "check_csrf", "session_of"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

FORBIDDEN = ("403 Forbidden: open the workbench with the address printed by `microagg serve` "
             "(it carries the access token).")


class CsrfError(Exception):
    """A POST without the session's CSRF token (answered 403)."""


def _same(given: str, expected: str) -> bool:
    return hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))


def check_csrf(session: SessionState, given: str | None) -> None:
    """Raise :class:`CsrfError` unless ``given`` is the session's CSRF token."""
    if not given or not _same(given, session.csrf_token):
        raise CsrfError("403 Forbidden: the form's CSRF token is missing or wrong; reload "
                        "the page and send the form again.")


def session_of(request: Request) -> SessionState:
    """The request's session (set by :class:`AccessMiddleware`)."""
    state: SessionState = request.scope["microagg.session"]
    return state


SECURITY_HEADERS = (
    (b"content-security-policy", b"default-src 'self'; frame-ancestors 'none'; "
                                 b"form-action 'self'; base-uri 'none'"),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"cache-control", b"no-store"),
)
"""Sent with every answer: no framing, no resource from elsewhere, nothing cached."""


def _cookie(name: str, value: str) -> str:
    return f"{name}={value}; HttpOnly; SameSite=Strict; Path=/"


class AccessMiddleware:
    """ASGI middleware: the access token on every request, then the session."""

    def __init__(self, app: ASGIApp, *, token: str, store: SessionStore, port: int) -> None:
        self.app, self.token, self.store = app, token, store
        self.token_cookie = f"microagg_token_{port}"
        self.session_cookie = f"microagg_session_{port}"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # lifespan: start-up and shutdown
            await self.app(scope, receive, send)
            return
        connection = HTTPConnection(scope)
        in_query = connection.query_params.get("token")
        given = in_query if in_query is not None else connection.cookies.get(
            self.token_cookie, "")
        if not _same(given, self.token):
            await PlainTextResponse(FORBIDDEN, status_code=403)(scope, receive,
                                                                 self._with_headers(send, []))
            return
        cookies = [_cookie(self.token_cookie, self.token)] if in_query is not None else []
        session = self.store.get(connection.cookies.get(self.session_cookie))
        if session is None:
            session = self.store.new()
            cookies.append(_cookie(self.session_cookie, session.session_id))
        scope["microagg.session"] = session
        if in_query is not None and scope["method"] == "GET":
            await self._without_token(connection.url, cookies)(scope, receive,
                                                               self._with_headers(send, []))
            return
        await self.app(scope, receive, self._with_headers(send, cookies))

    @staticmethod
    def _without_token(url: URL, cookies: list[str]) -> Response:
        """A redirect to ``url`` without its token (kept out of history and referrers)."""
        query = urlencode([(k, v) for k, v in parse_qsl(url.query, keep_blank_values=True)
                           if k != "token"])
        response = RedirectResponse(url.path + (f"?{query}" if query else ""), status_code=303)
        for cookie in cookies:
            response.headers.append("set-cookie", cookie)
        return response

    @staticmethod
    def _with_headers(send: Send, cookies: list[str]) -> Send:
        """``send`` adding the security headers and the cookies to the answer."""

        async def sender(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                own = {name.lower() for name, _ in headers}  # the report sets its own CSP
                headers += [*(h for h in SECURITY_HEADERS if h[0] not in own),
                            *((b"set-cookie", c.encode("latin-1")) for c in cookies)]
                message["headers"] = headers
            await send(message)

        return sender

