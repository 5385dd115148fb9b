"""Authentication: which credentials let a request in, and that the rest are 401 before any DynamoDB request."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from gateway.config import Settings
from gateway.server.app import create_app
from gateway.server.auth import digest
from gateway.server.cli import main
from tests.conftest import Gateway
from tests.identity import AUDIENCE, SECRET, Issuer

QUERY = '{ organization(orgName: "o1") { subscriptionLevel } }'
API_KEY = "tg_test_key_0123456789"
O1 = {"organizations": ["o1"]}
READ = {"organization": {"subscriptionLevel": "pro"}}


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    with Issuer() as running:
        yield running


@pytest.fixture(scope="module")
def guarded(gateway_factory: Callable[..., Gateway], contract_table: str, issuer: Issuer) -> Iterator[Gateway]:
    api_keys = json.dumps({digest(API_KEY): {"sub": "reporting", **O1}})
    with gateway_factory(contract_table, **issuer.settings(), api_keys=api_keys) as running:
        yield running


def ask(gateway: Gateway, query: str = QUERY, **headers: str) -> httpx.Response:
    gateway.sent.clear()
    return gateway.http.post("/graphql", json={"query": query}, headers=headers)


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def assert_refused(response: httpx.Response, gateway: Gateway) -> None:
    assert response.status_code == 401, response.text
    assert response.json()["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert "data" not in response.json()
    assert not gateway.sent, "a refused request reached DynamoDB"


@pytest.mark.parametrize("kid", ["rsa-1", "ec-1"])
def test_a_token_from_the_issuer_reads_what_it_grants(guarded: Gateway, issuer: Issuer, kid: str) -> None:
    response = ask(guarded, **bearer(issuer.token("alice", O1, kid=kid)))
    assert response.status_code == 200
    assert response.json()["data"] == READ


def test_a_development_token_signed_with_the_shared_secret_is_accepted(guarded: Gateway, issuer: Issuer) -> None:
    response = ask(guarded, **bearer(issuer.hs256("dev", O1)))
    assert response.json()["data"] == READ


def test_an_api_key_is_known_by_its_hash(guarded: Gateway) -> None:
    assert ask(guarded, **{"X-Api-Key": API_KEY}).json()["data"] == READ
    assert_refused(ask(guarded, **{"X-Api-Key": API_KEY + "x"}), guarded)


def test_a_request_without_credentials_is_refused(guarded: Gateway) -> None:
    assert_refused(ask(guarded), guarded)


def test_a_token_within_the_clock_skew_is_accepted(guarded: Gateway, issuer: Issuer) -> None:
    token = issuer.token("alice", O1, exp=int(time.time()) - 10)
    assert ask(guarded, **bearer(token)).status_code == 200


DAY = 86_400
YEAR = 365 * DAY


def test_a_token_as_long_as_the_maximum_lifetime_is_accepted(guarded: Gateway, issuer: Issuer) -> None:
    now = int(time.time())
    assert ask(guarded, **bearer(issuer.token("alice", O1, iat=now, exp=now + DAY))).status_code == 200
    # Without iat, what is left of its life counts, and the clock skew allowed on exp is allowed on it too.
    assert ask(guarded, **bearer(issuer.hs256("dev", O1, exp=now + DAY + 20))).status_code == 200


def _unsigned(issuer: Issuer) -> str:
    return jwt.encode({"iss": issuer.url, "aud": AUDIENCE, "sub": "x", "exp": int(time.time()) + 60}, "", "none")


def _confused(issuer: Issuer) -> str:
    """HS256 keyed with the issuer's public key (which anyone can fetch): the classic algorithm confusion."""
    header = _b64(json.dumps({"alg": "HS256", "typ": "JWT", "kid": "rsa-1"}).encode())
    claims = _b64(json.dumps({"iss": issuer.url, "aud": AUDIENCE, "sub": "x", "exp": int(time.time()) + 60}).encode())
    signed = f"{header}.{claims}".encode()
    return f"{header}.{claims}." + _b64(hmac.new(issuer.public_pem("rsa-1"), signed, hashlib.sha256).digest())


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _foreign_key(issuer: Issuer) -> str:
    """Signed by a key the issuer never published, claiming the id of one it did."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    claims = {"iss": issuer.url, "aud": AUDIENCE, "sub": "x", "exp": int(time.time()) + 60}
    return jwt.encode(claims, key, "RS256", headers={"kid": "rsa-1"})


REFUSED: dict[str, Callable[[Issuer], str]] = {
    "expired": lambda i: i.token("a", O1, exp=int(time.time()) - 120),
    "wrong issuer": lambda i: i.token("a", O1, iss="https://elsewhere.example"),
    "wrong audience": lambda i: i.token("a", O1, aud="another-api"),
    "no expiry": lambda i: i.token("a", O1, exp=None),
    "no subject": lambda i: i.token(None, O1),
    "not yet valid": lambda i: i.token("a", O1, nbf=int(time.time()) + 600),
    "unsigned": _unsigned,
    "algorithm confusion": _confused,
    "foreign key": _foreign_key,
    "tampered": lambda i: i.token("a", O1)[:-4] + "AAAA",
    "wrong shared secret": lambda i: jwt.encode(
        {"iss": i.url, "aud": AUDIENCE, "sub": "a", "exp": int(time.time()) + 60}, "x" * 40, "HS256"
    ),
    "malformed grants": lambda i: i.token("a", {"organizations": "o1"}),
    "a hundred years": lambda i: i.token("a", O1, exp=int(time.time()) + 100 * YEAR),
    "a day and a minute": lambda i: i.token("a", O1, iat=int(time.time()), exp=int(time.time()) + DAY + 60),
    "issued long ago": lambda i: i.token("a", O1, iat=int(time.time()) - 2 * DAY, exp=int(time.time()) + 60),
    "two days without iat": lambda i: i.hs256("a", O1, exp=int(time.time()) + 2 * DAY),
    "not a jwt": lambda i: "not-a-token",
}


@pytest.mark.parametrize("case", REFUSED)
def test_a_bad_token_is_refused_before_any_request(guarded: Gateway, issuer: Issuer, case: str) -> None:
    assert_refused(ask(guarded, **bearer(REFUSED[case](issuer))), guarded)


def test_the_maximum_lifetime_can_be_lifted(
    gateway_factory: Callable[..., Gateway], contract_table: str, issuer: Issuer
) -> None:
    with gateway_factory(contract_table, **issuer.settings(), jwt_max_lifetime=0) as gateway:
        response = ask(gateway, **bearer(issuer.token("alice", O1, exp=int(time.time()) + 100 * YEAR)))
    assert response.json()["data"] == READ


def test_the_maximum_lifetime_is_a_setting() -> None:
    assert Settings().jwt_max_lifetime == DAY
    assert Settings.from_env({"TABLEGRAPH_JWT_MAX_LIFETIME": "3600"}).jwt_max_lifetime == 3600
    with pytest.raises(ValueError, match="jwt_max_lifetime"):
        Settings(jwt_max_lifetime=-1)


@pytest.mark.parametrize("header", ["Basic dXNlcjpwYXNz", "Bearer", "Token abc"])
def test_an_authorization_header_that_is_not_a_bearer_token_is_refused(guarded: Gateway, header: str) -> None:
    assert_refused(ask(guarded, Authorization=header), guarded)


def test_a_rotated_key_is_fetched_once_and_made_up_key_ids_do_not_hammer_the_issuer(
    gateway_factory: Callable[..., Gateway], contract_table: str
) -> None:
    with Issuer() as issuer, gateway_factory(contract_table, **issuer.settings(), jwks_refetch_after=1.0) as gateway:
        old = issuer.token("alice", O1)
        assert ask(gateway, **bearer(old)).status_code == 200
        assert issuer.fetches == 1
        new_kid = issuer.rotate()
        rotated = issuer.token("alice", O1, kid=new_kid)
        # Right after a fetch, an unknown key id does not fetch again: made-up ids cannot keep the issuer busy...
        assert_refused(ask(gateway, **bearer(_made_up(issuer, "rsa-99"))), gateway)
        assert issuer.fetches == 1
        time.sleep(1.1)
        # ...and a key the issuer really rotated to is picked up once the interval has passed.
        assert ask(gateway, **bearer(rotated)).status_code == 200
        assert issuer.fetches == 2
        for made_up in ("rsa-100", "rsa-101", "rsa-102"):
            assert_refused(ask(gateway, **bearer(_made_up(issuer, made_up))), gateway)
        assert issuer.fetches == 2
        assert_refused(ask(gateway, **bearer(old)), gateway)


def _made_up(issuer: Issuer, kid: str) -> str:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    claims = {"iss": issuer.url, "aud": AUDIENCE, "sub": "x", "exp": int(time.time()) + 60}
    return jwt.encode(claims, key, "RS256", headers={"kid": kid})


def test_an_unreachable_issuer_is_unavailable_not_a_bad_token(
    gateway_factory: Callable[..., Gateway], contract_table: str, issuer: Issuer
) -> None:
    closed = "http://127.0.0.1:9/jwks"
    settings = {**issuer.settings(), "jwt_jwks_url": closed}
    with gateway_factory(contract_table, **settings) as gateway:
        response = ask(gateway, **bearer(issuer.token("alice", O1)))
    assert response.status_code == 503
    assert response.json()["errors"][0]["extensions"]["code"] == "UNAVAILABLE"


@pytest.mark.parametrize(
    ("settings", "complaint"),
    [
        ({}, "TABLEGRAPH_AUTH_OPEN"),
        ({"jwt_secret": "too short"}, "at least 32 bytes"),
        ({"jwt_issuer": "https://idp.example"}, "TABLEGRAPH_JWT_AUDIENCE"),
        ({"jwt_issuer": "http://idp.example", "jwt_audience": "a", "jwt_jwks_url": "http://idp.example/k"}, "https"),
        ({"jwt_secret": SECRET, "jwt_algorithms": "HS256"}, "signature algorithms"),
        ({"api_keys": json.dumps({"plain-key": {}})}, "digests"),
        ({"api_keys": json.dumps({digest("k"): {"organizations": "o1"}})}, "list of strings"),
    ],
)
def test_settings_that_would_let_everyone_or_no_one_in_are_refused_at_start(
    settings: dict[str, Any], complaint: str
) -> None:
    with pytest.raises(ValueError, match=complaint):
        create_app(Settings(**settings))


def test_serve_refuses_to_start_without_authentication(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--endpoint-url", "http://127.0.0.1:9"]) == 1
    assert "TABLEGRAPH_AUTH_OPEN" in capsys.readouterr().err
