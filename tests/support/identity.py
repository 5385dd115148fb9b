"""A token issuer for tests: an OIDC discovery document and a JWKS served on 127.0.0.1, keys that rotate."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

AUDIENCE = "tablegraph-tests"
SECRET = "a-development-secret-of-32-bytes!"


class Issuer:
    """Signs tokens with an RSA and an EC key; ``rotate`` replaces the RSA key, as an identity provider would."""

    def __init__(self) -> None:
        self._private: dict[str, Any] = {}
        self._published: list[dict[str, Any]] = []
        self.fetches = 0
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._add("rsa-1", rsa.generate_private_key(public_exponent=65537, key_size=2048), "RS256")
        self._add("ec-1", ec.generate_private_key(ec.SECP256R1()), "ES256")

    def __enter__(self) -> Issuer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def rotate(self) -> str:
        """Publish a new RSA key and withdraw the old one; the new key id."""
        kid = f"rsa-{len(self._private) + 1}"
        self._published = [key for key in self._published if key["kty"] != "RSA"]
        self._add(kid, rsa.generate_private_key(public_exponent=65537, key_size=2048), "RS256")
        return kid

    def token(
        self,
        subject: str | None = "someone",
        grants: dict[str, Any] | None = None,
        *,
        kid: str = "rsa-1",
        **claims: Any,
    ) -> str:
        """A token signed with key ``kid``; ``claims`` override the standard ones (pass None to leave one out)."""
        now = int(time.time())
        payload: dict[str, Any] = {"iss": self.url, "aud": AUDIENCE, "sub": subject, "iat": now, "exp": now + 300}
        payload.update(claims)
        payload = {name: value for name, value in payload.items() if value is not None}
        if grants is not None:
            payload["tablegraph"] = grants
        algorithm = "ES256" if kid.startswith("ec") else "RS256"
        return jwt.encode(payload, self._private[kid], algorithm=algorithm, headers={"kid": kid})

    def hs256(self, subject: str = "developer", grants: dict[str, Any] | None = None, **claims: Any) -> str:
        now = int(time.time())
        payload: dict[str, Any] = {"iss": self.url, "aud": AUDIENCE, "sub": subject, "exp": now + 300, **claims}
        if grants is not None:
            payload["tablegraph"] = grants
        return jwt.encode(payload, SECRET, algorithm="HS256")

    def public_pem(self, kid: str) -> bytes:
        public = self._private[kid].public_key()
        return bytes(public.public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo))

    def settings(self) -> dict[str, Any]:
        """Gateway settings that trust this issuer (by OIDC discovery) and the development secret."""
        return {"auth_open": False, "jwt_issuer": self.url, "jwt_audience": AUDIENCE, "jwt_secret": SECRET}

    def _add(self, kid: str, key: Any, algorithm: str) -> None:
        self._private[kid] = key
        exporter = RSAAlgorithm if algorithm == "RS256" else ECAlgorithm
        public = exporter.to_jwk(key.public_key(), as_dict=True)
        self._published.append({**public, "kid": kid, "alg": algorithm, "use": "sig"})

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        issuer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path == "/.well-known/openid-configuration":
                    body: dict[str, Any] = {"issuer": issuer.url, "jwks_uri": f"{issuer.url}/jwks"}
                elif self.path == "/jwks":
                    issuer.fetches += 1
                    body = {"keys": issuer._published}
                else:
                    self.send_error(404)
                    return
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        return Handler
