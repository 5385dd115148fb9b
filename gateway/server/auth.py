"""Who is calling: the credentials in a request's headers become a Principal, or the request is refused.

Three kinds of credential, each configured by settings: bearer JWTs signed by an OIDC issuer (RS256/ES256, keys
from its JWKS), bearer JWTs signed with an HS256 shared secret (development), and static API keys (only their
SHA-256 digests are configured). With ``auth_open`` a request without credentials is let in with every right.

Why a JWKS cache of our own rather than PyJWT's ``PyJWKClient``: that client fetches with blocking urllib while
holding a lock, so on an event loop every verification would need a thread hop. Ours fetches in a thread only when
it must: when its keys are stale, or when a token names a key id it does not know and the last fetch is at least
``jwks_refetch_after`` seconds old. Tokens with made-up key ids therefore cannot make us hammer the issuer, and a
key the issuer rotated to is picked up within that interval.
"""

from __future__ import annotations

import asyncio
import hashlib
import ipaddress
import json
import logging
import time
import urllib.request
from collections.abc import Collection, Mapping
from http.client import HTTPException
from typing import Any
from urllib.parse import urlparse

import jwt

from gateway.config import Settings
from gateway.errors import Unauthenticated, Unavailable
from gateway.execution.guard import OPEN, Principal

log = logging.getLogger(__name__)

AUTHORIZATION_HEADER = "authorization"
API_KEY_HEADER = "x-api-key"
ADMIN_ROLE = "admin"

_ASYMMETRIC = {"RS256", "RS384", "RS512", "ES256", "ES384", "ES512", "PS256", "PS384", "PS512"}
_PUBLIC_KEY_TYPES = {"RSA", "EC"}
_MIN_SECRET_BYTES = 32
_FETCH_TIMEOUT_SECONDS = 5.0
_MAX_DOCUMENT_BYTES = 1_048_576


def principal_from_claims(subject: str, claims: object, grant_names: Collection[str]) -> Principal:
    """A principal from a grants object: ``{"<grant>": ["id", ...], ..., "roles": ["admin"]}``."""
    if claims is None:
        claims = {}
    if not isinstance(claims, dict):
        raise Unauthenticated("the credentials' grants must be an object")
    grants: dict[str, frozenset[str]] = {}
    for name in (*grant_names, "roles"):
        values = claims.get(name, [])
        if not isinstance(values, list) or not all(isinstance(value, str) for value in values):
            raise Unauthenticated(f"the credentials' {name!r} must be a list of strings")
        grants[name] = frozenset(values)
    roles = grants.pop("roles")
    return Principal(subject, grants, admin=ADMIN_ROLE in roles)


class Authenticator:
    def __init__(
        self,
        *,
        open_access: bool = False,
        tokens: TokenVerifier | None = None,
        api_keys: Mapping[str, Principal] | None = None,
    ) -> None:
        self.open_access = open_access
        self._tokens = tokens
        self._api_keys = dict(api_keys or {})

    @classmethod
    def from_settings(cls, settings: Settings, grant_names: Collection[str]) -> Authenticator:
        """The configured credentials; refuses a configuration that would let nobody in or everybody in silently."""
        tokens = TokenVerifier.from_settings(settings, grant_names)
        api_keys = _api_keys(settings.api_keys, grant_names)
        if not (settings.auth_open or tokens or api_keys):
            raise ValueError(
                "no authentication is configured: set TABLEGRAPH_JWT_ISSUER and TABLEGRAPH_JWT_AUDIENCE, "
                "TABLEGRAPH_JWT_SECRET or TABLEGRAPH_API_KEYS; or TABLEGRAPH_AUTH_OPEN=1 for a local demo"
            )
        return cls(open_access=settings.auth_open, tokens=tokens, api_keys=api_keys)

    @property
    def modes(self) -> list[str]:
        """What this authenticator accepts, for the start-up log."""
        modes = self._tokens.modes if self._tokens else []
        if self._api_keys:
            modes.append(f"{len(self._api_keys)} API key(s)")
        if self.open_access:
            modes.append("no credentials (OPEN)")
        return modes

    async def authenticate(self, headers: Mapping[str, str]) -> Principal:
        """The caller, from ``Authorization: Bearer <jwt>`` or ``X-Api-Key``; credentials given are always checked."""
        authorization = headers.get(AUTHORIZATION_HEADER)
        if authorization is not None:
            scheme, _, token = authorization.strip().partition(" ")
            if scheme.lower() != "bearer" or not token.strip():
                raise Unauthenticated("use the header Authorization: Bearer <token>")
            if self._tokens is None:
                raise Unauthenticated("bearer tokens are not accepted here")
            return await self._tokens.verify(token.strip())
        api_key = headers.get(API_KEY_HEADER)
        if api_key is not None:
            principal = self._api_keys.get(digest(api_key))
            if principal is None:
                raise Unauthenticated("the API key is not valid")
            return principal
        if self.open_access:
            return OPEN
        raise Unauthenticated("credentials are required: Authorization: Bearer <token> or X-Api-Key")


def digest(api_key: str) -> str:
    """What ``TABLEGRAPH_API_KEYS`` holds for a key: its SHA-256 as lowercase hex."""
    return hashlib.sha256(api_key.encode()).hexdigest()


def _api_keys(raw: str, grant_names: Collection[str]) -> dict[str, Principal]:
    if not raw:
        return {}
    try:
        entries = json.loads(raw)
    except ValueError:
        raise ValueError("TABLEGRAPH_API_KEYS must be a JSON object") from None
    if not isinstance(entries, dict):
        raise ValueError("TABLEGRAPH_API_KEYS must be a JSON object")
    keys: dict[str, Principal] = {}
    for hexdigest, grants in entries.items():
        if len(hexdigest) != 64 or any(c not in "0123456789abcdef" for c in hexdigest):
            raise ValueError("TABLEGRAPH_API_KEYS maps SHA-256 hex digests of keys (never the keys) to grants")
        if not isinstance(grants, dict):
            raise ValueError("TABLEGRAPH_API_KEYS: each key's grants must be an object")
        subject = grants.get("sub", f"api-key:{hexdigest[:8]}")
        try:
            keys[hexdigest] = principal_from_claims(str(subject), grants, grant_names)
        except Unauthenticated as error:
            raise ValueError(f"TABLEGRAPH_API_KEYS: {error.message}") from None
    return keys


class TokenVerifier:
    """Bearer JWTs: HS256 with the shared secret, or an asymmetric algorithm with the issuer's JWKS."""

    def __init__(
        self,
        *,
        grant_names: Collection[str],
        claim: str,
        issuer: str = "",
        audience: str = "",
        leeway: int = 30,
        max_lifetime: int = 0,
        secret: str = "",
        jwks: JwksCache | None = None,
        algorithms: Collection[str] = ("RS256", "ES256"),
    ) -> None:
        if secret and len(secret.encode()) < _MIN_SECRET_BYTES:
            raise ValueError(f"TABLEGRAPH_JWT_SECRET must be at least {_MIN_SECRET_BYTES} bytes")
        unknown = set(algorithms) - _ASYMMETRIC
        if unknown:
            raise ValueError(f"TABLEGRAPH_JWT_ALGORITHMS may only name signature algorithms, not {sorted(unknown)}")
        if jwks is not None and not (issuer and audience):
            raise ValueError("verifying tokens with a JWKS needs TABLEGRAPH_JWT_ISSUER and TABLEGRAPH_JWT_AUDIENCE")
        self._grant_names = tuple(grant_names)
        self._claim = claim
        self._issuer = issuer
        self._audience = audience
        self._leeway = leeway
        self._max_lifetime = max_lifetime
        self._secret = secret
        self._jwks = jwks
        self._algorithms = frozenset(algorithms)

    @classmethod
    def from_settings(cls, settings: Settings, grant_names: Collection[str]) -> TokenVerifier | None:
        if not (settings.jwt_secret or settings.jwt_issuer):
            return None
        jwks = None
        if settings.jwt_issuer and (settings.jwt_audience or not settings.jwt_secret):
            jwks = JwksCache(
                settings.jwt_issuer,
                settings.jwt_jwks_url,
                max_age=settings.jwks_max_age,
                refetch_after=settings.jwks_refetch_after,
            )
        return cls(
            grant_names=grant_names,
            claim=settings.jwt_claim,
            issuer=settings.jwt_issuer,
            audience=settings.jwt_audience,
            leeway=settings.jwt_leeway,
            max_lifetime=settings.jwt_max_lifetime,
            secret=settings.jwt_secret,
            jwks=jwks,
            algorithms=[name.strip() for name in settings.jwt_algorithms.split(",") if name.strip()],
        )

    @property
    def modes(self) -> list[str]:
        modes = []
        if self._jwks is not None:
            modes.append(f"JWTs from {self._issuer} ({', '.join(sorted(self._algorithms))})")
        if self._secret:
            modes.append("HS256 JWTs signed with the shared secret")
        return modes

    async def verify(self, token: str) -> Principal:
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise Unauthenticated("the bearer token is not a JWT") from None
        algorithm = header.get("alg")
        key: Any
        if algorithm == "HS256" and self._secret:
            key = self._secret
        elif algorithm in self._algorithms and self._jwks is not None:
            key = await self._jwks.key(header.get("kid"), algorithm)
        else:
            raise Unauthenticated(f"tokens signed with {algorithm!r} are not accepted")
        required = ["exp", "sub"] + (["iss"] if self._issuer else []) + (["aud"] if self._audience else [])
        try:
            claims = jwt.decode(
                token,
                key,
                algorithms=[algorithm],
                audience=self._audience or None,
                issuer=self._issuer or None,
                leeway=self._leeway,
                options={"require": required, "verify_aud": bool(self._audience)},
            )
        except jwt.ExpiredSignatureError:
            raise Unauthenticated("the token has expired") from None
        except jwt.PyJWTError as error:
            raise Unauthenticated(f"the token was refused: {error}") from None
        self._check_lifetime(claims)
        return principal_from_claims(str(claims["sub"]), claims.get(self._claim), self._grant_names)

    def _check_lifetime(self, claims: Mapping[str, Any]) -> None:
        """Refuse a token that lives longer than allowed: a stolen one must not stay good for years."""
        if not self._max_lifetime:
            return
        issued = claims.get("iat")
        try:
            expires = float(claims["exp"])
            # Without iat, what is left of its life counts; the clock skew allowed on exp is allowed here too.
            lifetime = expires - float(issued) if issued is not None else expires - time.time() - self._leeway
        except (TypeError, ValueError):
            raise Unauthenticated("the token's exp and iat must be numbers") from None
        if lifetime > self._max_lifetime:
            raise Unauthenticated(f"the token lives longer than the {self._max_lifetime} seconds allowed")


class JwksCache:
    """The issuer's signing keys by key id, fetched when stale or when a token names a key not yet seen."""

    def __init__(self, issuer: str, url: str = "", *, max_age: float = 600, refetch_after: float = 30) -> None:
        if url:
            _check_url(url)
        self._issuer = issuer
        self._url = url
        self._max_age = max_age
        self._refetch_after = refetch_after
        self._keys: dict[str | None, tuple[str | None, jwt.PyJWK]] | None = None
        self._fetched = 0.0
        self._lock = asyncio.Lock()

    async def key(self, kid: object, algorithm: str) -> Any:
        stale = self._keys is None or time.monotonic() - self._fetched >= self._max_age
        if stale:
            await self._refresh()
        found = self._find(kid, algorithm)
        # An unknown key id refetches, but not more than once per interval after any fetch: tokens with made-up
        # key ids cannot keep the issuer busy, nor delay a real rotated key for longer than the interval.
        if found is None and not stale and time.monotonic() - self._fetched >= self._refetch_after:
            await self._refresh()
            found = self._find(kid, algorithm)
        if found is None:
            raise Unauthenticated("the token is signed with a key the issuer does not publish")
        return found.key

    def _find(self, kid: object, algorithm: str) -> jwt.PyJWK | None:
        keys = self._keys or {}
        found: tuple[str | None, jwt.PyJWK] | None = None
        if kid is None and len(keys) == 1:
            found = next(iter(keys.values()))
        elif isinstance(kid, str):
            found = keys.get(kid)
        if found is None:
            return None
        declared, key = found
        # A key published for one algorithm is never used for another.
        return key if declared in (None, algorithm) else None

    async def _refresh(self) -> None:
        asked = time.monotonic()
        async with self._lock:
            if self._fetched > asked:  # another request refreshed while this one waited
                return
            try:
                url = self._url or await self._discover()
                document = await asyncio.to_thread(_fetch_json, url)
                keys = _signing_keys(document)
            except (OSError, ValueError, HTTPException, jwt.PyJWTError) as error:
                log.warning("could not fetch the signing keys of %s: %s", self._issuer, error)
                if self._keys is None:
                    raise Unavailable("the token issuer's signing keys could not be fetched") from None
                # Keep serving the keys we have and try again after a pause rather than on every request.
                self._fetched = time.monotonic() - self._max_age + self._refetch_after
                return
            self._keys = keys
            self._fetched = time.monotonic()

    async def _discover(self) -> str:
        configuration = await asyncio.to_thread(
            _fetch_json, self._issuer.rstrip("/") + "/.well-known/openid-configuration"
        )
        if configuration.get("issuer") != self._issuer or not isinstance(configuration.get("jwks_uri"), str):
            raise ValueError("the OpenID configuration names another issuer or no jwks_uri")
        _check_url(configuration["jwks_uri"])
        self._url = configuration["jwks_uri"]
        return self._url


def _signing_keys(document: Mapping[str, Any]) -> dict[str | None, tuple[str | None, jwt.PyJWK]]:
    """The public signature keys of a JWKS by key id, each with the algorithm it is declared for."""
    keys: dict[str | None, tuple[str | None, jwt.PyJWK]] = {}
    entries = document.get("keys")
    if not isinstance(entries, list):
        raise ValueError("the JWKS has no keys")
    for entry in entries:
        if not isinstance(entry, dict) or entry.get("use", "sig") != "sig" or entry.get("kty") not in _PUBLIC_KEY_TYPES:
            continue
        try:
            keys[entry.get("kid")] = (entry.get("alg"), jwt.PyJWK(entry))
        except jwt.PyJWTError as error:
            log.warning("skipping a key of the JWKS that cannot be used: %s", error)
    return keys


def _check_url(url: str) -> None:
    """Keys are fetched over HTTPS; plain HTTP only from this machine (a local issuer in tests and demos)."""
    parsed = urlparse(url)
    if parsed.scheme == "https":
        return
    if parsed.scheme == "http" and _is_loopback(parsed.hostname or ""):
        return
    raise ValueError(f"signing keys must be fetched over https, not from {url!r}")


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def _fetch_json(url: str) -> dict[str, Any]:
    _check_url(url)
    opener = urllib.request.build_opener(_NoRedirects())
    with opener.open(url, timeout=_FETCH_TIMEOUT_SECONDS) as response:
        body = response.read(_MAX_DOCUMENT_BYTES + 1)
    if len(body) > _MAX_DOCUMENT_BYTES:
        raise ValueError(f"{url} answered with more than {_MAX_DOCUMENT_BYTES} bytes")
    document = json.loads(body)
    if not isinstance(document, dict):
        raise ValueError(f"{url} did not answer with a JSON object")
    return document
