"""A small OpenID Connect token issuer on 127.0.0.1, for a Unity Catalog server with
authorization on.

Unity Catalog OSS 0.6.0 issues an access token to a principal other than its administrator
only by token exchange (``POST /api/1.0/unity-control/auth/tokens``, AuthService): the caller
hands it an id token of an identity provider, and the server
1. takes the token's ``iss`` only if ``server.allowed-issuers`` lists it (``http://`` issuers
   are accepted),
2. fetches ``<iss>/.well-known/openid-configuration``, requires its ``issuer`` to equal the
   token's, and verifies the signature with the key of the token's ``kid`` in its ``jwks_uri``
   (JwksOperations: RS256/384/512 or ES256/384/512),
3. requires an ``aud`` that ``server.audiences`` lists,
4. requires the principal (the ``email`` claim, else ``sub``) to be a user the administrator
   created and left enabled (Scim2UserService),
and then signs an access token of its own (issuer ``internal``) for that principal.

This module is that identity provider: an RSA key, the discovery document and the key set over
HTTP, and :meth:`TokenIssuer.id_token`, which signs an RS256 id token for an email. The JWT is
written by hand over ``cryptography`` (a dependency of moto), so that no JWT library is needed.

This file imports nothing from the test suite, so it also runs as a plain script.
"""

from __future__ import annotations

import base64
import json
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, Optional

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa

#: The audience the issuer's tokens carry; the server's ``server.audiences`` lists it.
AUDIENCE = "delta-lifecycle-tests"
DISCOVERY_PATH = "/.well-known/openid-configuration"
JWKS_PATH = "/jwks.json"


def _b64url(data: bytes) -> str:
    """Base64url without padding, as JWS and JWK spell binary values."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _uint(value: int) -> str:
    """A JWK integer (``n``, ``e``): big-endian bytes, shortest form, base64url."""
    return _b64url(value.to_bytes((value.bit_length() + 7) // 8, "big"))


@dataclass
class TokenIssuer:
    """A running issuer: its URL (the ``iss`` of its tokens) and its signing key."""

    server: ThreadingHTTPServer
    key: rsa.RSAPrivateKey
    key_id: str
    audience: str = AUDIENCE
    thread: Optional[threading.Thread] = field(default=None, repr=False)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def discovery(self) -> Dict[str, Any]:
        return {
            "issuer": self.url,
            "jwks_uri": f"{self.url}{JWKS_PATH}",
            "id_token_signing_alg_values_supported": ["RS256"],
            "subject_types_supported": ["public"],
            "response_types_supported": ["id_token"],
        }

    def jwks(self) -> Dict[str, Any]:
        numbers = self.key.public_key().public_numbers()
        return {"keys": [{
            "kty": "RSA", "use": "sig", "alg": "RS256", "kid": self.key_id,
            "n": _uint(numbers.n), "e": _uint(numbers.e),
        }]}

    def id_token(self, email: str, audience: Optional[str] = None, ttl_seconds: int = 3600,
                 issuer: Optional[str] = None) -> str:
        """An RS256 id token for ``email``, signed with this issuer's key (``issuer`` and
        ``audience`` override the claims, for tests of what the server refuses)."""
        now = int(time.time())
        header = {"alg": "RS256", "typ": "JWT", "kid": self.key_id}
        claims = {
            "iss": issuer or self.url, "sub": email, "email": email,
            "aud": audience or self.audience, "iat": now, "nbf": now - 5,
            "exp": now + ttl_seconds, "jti": str(uuid.uuid4()),
        }
        signing_input = ".".join(
            _b64url(json.dumps(part, separators=(",", ":")).encode()) for part in (header, claims)
        )
        signature = self.key.sign(signing_input.encode("ascii"), padding.PKCS1v15(),
                                  hashes.SHA256())
        return f"{signing_input}.{_b64url(signature)}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        if self.thread is not None:
            self.thread.join(timeout=10)


def _handler(issuer: "TokenIssuer") -> type:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            documents = {DISCOVERY_PATH: issuer.discovery, JWKS_PATH: issuer.jwks}
            document = documents.get(self.path.split("?", 1)[0])
            if document is None:
                self.send_error(404)
                return
            body = json.dumps(document()).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # the server's own log says what it fetched

    return Handler


def start_token_issuer(audience: str = AUDIENCE) -> TokenIssuer:
    """Start an issuer on a free 127.0.0.1 port, serving from a daemon thread."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    issuer = TokenIssuer(server, key, uuid.uuid4().hex[:16], audience)
    server.RequestHandlerClass = _handler(issuer)
    server.daemon_threads = True
    issuer.thread = threading.Thread(target=server.serve_forever, name="token-issuer",
                                     daemon=True)
    issuer.thread.start()
    return issuer


if __name__ == "__main__":
    import sys

    running = start_token_issuer()
    print(f"issuer   {running.url}\naudience {running.audience}")
    for address in sys.argv[1:]:
        print(f"{address}: {running.id_token(address)}")
    print("Running until Ctrl-C.", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        running.stop()
