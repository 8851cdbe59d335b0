#!/usr/bin/env python3
"""A throwaway OpenID Connect issuer for tests/browser.sh.

Generates an Ed25519 key, writes its public half as a JWKS (the file `[api.oidc] jwks_file`
names) and prints one token signed with it (EdDSA) on stdout. The private key is never written
anywhere: it lives for this process only, so each run has its own issuer.

    python3 tests/browser/make_jwt.py --jwks DIR/jwks.json --issuer ISSUER [--role sentinel-staff]
"""

import argparse
import base64
import json
import time

import jwt  # PyJWT
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def main() -> None:
    parser = argparse.ArgumentParser(description="Write a JWKS and print a JWT signed with its key.")
    parser.add_argument("--jwks", required=True, help="where to write the JWKS (public key only)")
    parser.add_argument("--issuer", required=True, help="the token's iss (= [api.oidc] issuer)")
    parser.add_argument("--audience", default="capacity-sentinel", help="the token's aud (= [api.oidc] audience)")
    parser.add_argument("--subject", default="u-1234")
    parser.add_argument("--email", default="dana@example.com")
    parser.add_argument("--role", action="append", help="a value of the roles claim (repeatable; default sentinel-staff)")
    parser.add_argument("--kid", default="browser-test")
    parser.add_argument("--lifetime", type=int, default=3600, help="seconds until exp")
    args = parser.parse_args()

    key = Ed25519PrivateKey.generate()
    public = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    jwks = {"keys": [{"kty": "OKP", "crv": "Ed25519", "x": b64url(public), "kid": args.kid, "alg": "EdDSA", "use": "sig"}]}
    with open(args.jwks, "w", encoding="utf-8") as f:
        json.dump(jwks, f, indent=2)
        f.write("\n")

    now = int(time.time())
    claims = {
        "iss": args.issuer,
        "aud": args.audience,
        "sub": args.subject,
        "email": args.email,
        "roles": args.role or ["sentinel-staff"],
        "iat": now,
        "nbf": now - 5,
        "exp": now + args.lifetime,
    }
    print(jwt.encode(claims, key, algorithm="EdDSA", headers={"kid": args.kid}))


if __name__ == "__main__":
    main()
