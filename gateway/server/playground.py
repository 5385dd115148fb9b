"""GraphiQL from the gateway's own copies of its files: the page loads nothing from another origin."""

from __future__ import annotations

import base64
import hashlib
import html
import logging
import secrets
from dataclasses import dataclass
from pathlib import Path

from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response

log = logging.getLogger(__name__)

ASSETS_PATH = "/static/graphiql"
_STATIC = Path(__file__).parent / "static"
# In the order the page loads them. scripts/graphiql-assets copies them from the npm packages that package.json pins.
_STYLES = ("graphiql.min.css", "plugin-explorer.css")
_SCRIPTS = ("react.production.min.js", "react-dom.production.min.js", "graphiql.min.js", "plugin-explorer.umd.js")
_MEDIA = {".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8"}
_CSP = (
    "default-src 'none'; script-src 'nonce-{nonce}'; style-src 'nonce-{nonce}'; img-src 'self' data:; "
    "font-src data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
)
_PAGE_HEADERS = {
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cache-Control": "no-store",
}


@dataclass(frozen=True)
class _Asset:
    body: bytes
    media: str
    integrity: str
    # Part of the URL, so that a browser holding an older copy for a year asks again after an upgrade.
    version: str


class Playground:
    """The GraphiQL page (a fresh nonce each time) and the files it loads, read once at start-up."""

    def __init__(self) -> None:
        self._template = (_STATIC / "playground.html").read_text()
        self._assets: dict[str, _Asset] = {}
        missing = []
        for name in (*_STYLES, *_SCRIPTS):
            path = _STATIC / "graphiql" / name
            if not path.is_file():
                missing.append(name)
                continue
            body = path.read_bytes()
            digest = hashlib.sha384(body).digest()
            self._assets[name] = _Asset(
                body, _MEDIA[path.suffix], "sha384-" + base64.b64encode(digest).decode(), digest.hex()[:16]
            )
        self._missing = tuple(missing)
        if missing:
            log.error("GraphiQL's files are not installed (%s): run scripts/setup", ", ".join(missing))

    def page(self) -> Response:
        if self._missing:
            return PlainTextResponse(
                "GraphiQL's files are not installed with this gateway: run scripts/setup (or build the image).",
                status_code=503,
                headers=_PAGE_HEADERS,
            )
        nonce = secrets.token_urlsafe(16)
        styles = "\n".join(
            f'    <link rel="stylesheet" href="{self._url(name)}" integrity="{self._assets[name].integrity}" '
            f'nonce="{nonce}" />'
            for name in _STYLES
        )
        scripts = "\n".join(
            f'    <script src="{self._url(name)}" integrity="{self._assets[name].integrity}" nonce="{nonce}"></script>'
            for name in _SCRIPTS
        )
        text = self._template.replace("{{styles}}", styles).replace("{{scripts}}", scripts)
        return HTMLResponse(
            text.replace("{{nonce}}", nonce),
            headers={"Content-Security-Policy": _CSP.format(nonce=nonce), **_PAGE_HEADERS},
        )

    async def asset(self, request: Request) -> Response:
        """``GET {ASSETS_PATH}/{name}``: a file of the page, cached for a year (its URL changes with its content)."""
        found = self._assets.get(request.path_params["name"])
        if found is None:
            return PlainTextResponse("not found", status_code=404, headers={"X-Content-Type-Options": "nosniff"})
        return Response(
            found.body,
            media_type=found.media,
            headers={
                "Cache-Control": "public, max-age=31536000, immutable",
                "X-Content-Type-Options": "nosniff",
                "Cross-Origin-Resource-Policy": "same-origin",
            },
        )

    def _url(self, name: str) -> str:
        # Relative to the page at /graphql, so that a gateway behind a path prefix still finds them.
        return html.escape(f"{ASSETS_PATH.lstrip('/')}/{name}?v={self._assets[name].version}")
