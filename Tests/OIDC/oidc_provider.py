#!/usr/bin/env python3
"""A real OpenID Connect provider on loopback for the tests: oidc-provider-mock (authlib, Flask),
installed by `scripts/bootstrap --test` into .build/oidc-venv.

  oidc_provider.py serve
      Binds 127.0.0.1 on a free port, prints the port on the first line of standard output,
      serves until standard input closes. Its issuer is http://127.0.0.1:PORT. Any client ID
      and secret are accepted (the library's default). PKCE is enforced in front of the
      library (which ignores code_challenge): an authorization request must carry an S256
      code_challenge, and the token request's code_verifier must match it (RFC 7636 §4.6),
      else the token endpoint answers 400 invalid_grant.

  oidc_provider.py mint --issuer URL --client-id ID --sub SUB [--claims JSON] [--nonce N]
      Signs SUB in without a browser (the library's authorization form takes the subject as a
      field), redeems the code with PKCE, prints the ID token. --claims sets the user's claims
      first (e.g. {"email": ..., "email_verified": true}; "aud", "iss" or "exp" here override
      the token's own, still signed by the provider's key).

  oidc_provider.py resign --token JWT
      Prints the token's claims signed by a fresh RSA key under kid "not-in-jwks" (a key the
      provider's JWK Set does not hold).
"""

import base64
import hashlib
import io
import json
import secrets
import socket
import sys
import threading
import urllib.error
import urllib.parse
import urllib.request


class PKCE:
    """WSGI middleware: remembers each authorization's code_challenge, checks code_verifier."""

    def __init__(self, app):
        self.app = app
        self.challenges = {}
        self.lock = threading.Lock()

    def __call__(self, environ, start_response):
        path = environ.get("PATH_INFO", "")
        if path == "/oauth2/token" and environ.get("REQUEST_METHOD") == "POST":
            length = int(environ.get("CONTENT_LENGTH") or 0)
            body = environ["wsgi.input"].read(length)
            environ["wsgi.input"] = io.BytesIO(body)
            form = urllib.parse.parse_qs(body.decode())
            if form.get("grant_type") == ["authorization_code"]:
                code = form.get("code", [""])[0]
                verifier = form.get("code_verifier", [""])[0]
                with self.lock:
                    challenge = self.challenges.pop(code, None)
                computed = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
                if challenge is None or computed != challenge:
                    payload = json.dumps({"error": "invalid_grant", "error_description": "PKCE code_verifier does not match"}).encode()
                    start_response("400 Bad Request", [("Content-Type", "application/json"), ("Content-Length", str(len(payload)))])
                    return [payload]
        if path == "/oauth2/authorize":
            query = urllib.parse.parse_qs(environ.get("QUERY_STRING", ""))
            challenge = query.get("code_challenge", [None])[0]
            method = query.get("code_challenge_method", [None])[0]

            def remember(status, headers, exc_info=None):
                for name, value in headers:
                    if name.lower() == "location" and challenge and method == "S256":
                        code = urllib.parse.parse_qs(urllib.parse.urlparse(value).query).get("code", [None])[0]
                        if code:
                            with self.lock:
                                self.challenges[code] = challenge
                return start_response(status, headers, exc_info)
            return self.app(environ, remember)
        return self.app(environ, start_response)


def serve():
    import os
    import werkzeug.serving
    from oidc_provider_mock import app

    os.environ["AUTHLIB_INSECURE_TRANSPORT"] = "1"
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    server = werkzeug.serving.make_server("127.0.0.1", port, PKCE(app()), threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(port, flush=True)
    sys.stdin.read()
    server.shutdown()


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def mint(issuer, client_id, sub, claims, nonce):
    if claims is not None:
        request = urllib.request.Request(f"{issuer}/users/{urllib.parse.quote(sub, safe='')}", data=json.dumps(claims).encode(),
                                         method="PUT", headers={"Content-Type": "application/json"})
        urllib.request.urlopen(request, timeout=10).read()
    verifier = secrets.token_urlsafe(32)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    redirect = "http://127.0.0.1/callback"
    query = {"client_id": client_id, "redirect_uri": redirect, "response_type": "code", "scope": "openid email profile",
             "state": "s", "code_challenge": challenge, "code_challenge_method": "S256"}
    if nonce:
        query["nonce"] = nonce
    opener = urllib.request.build_opener(NoRedirect)
    request = urllib.request.Request(f"{issuer}/oauth2/authorize?{urllib.parse.urlencode(query)}",
                                     data=urllib.parse.urlencode({"sub": sub}).encode(), method="POST")
    try:
        opener.open(request, timeout=10)
        raise SystemExit("the authorization endpoint did not redirect")
    except urllib.error.HTTPError as answer:
        location = answer.headers["Location"]
    code = urllib.parse.parse_qs(urllib.parse.urlparse(location).query)["code"][0]
    form = {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect, "client_id": client_id,
            "client_secret": "secret", "code_verifier": verifier}
    with urllib.request.urlopen(urllib.request.Request(f"{issuer}/oauth2/token", data=urllib.parse.urlencode(form).encode()),
                                timeout=10) as response:
        print(json.loads(response.read())["id_token"])


def resign(token):
    from joserfc import jwt
    from joserfc.jwk import RSAKey

    payload = json.loads(base64.urlsafe_b64decode(token.split(".")[1] + "=="))
    key = RSAKey.generate_key(2048)
    print(jwt.encode({"alg": "RS256", "kid": "not-in-jwks"}, payload, key))


def main():
    import argparse
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["serve", "mint", "resign"])
    parser.add_argument("--issuer")
    parser.add_argument("--client-id")
    parser.add_argument("--sub")
    parser.add_argument("--claims")
    parser.add_argument("--nonce")
    parser.add_argument("--token")
    a = parser.parse_args()
    if a.command == "serve":
        serve()
    elif a.command == "mint":
        mint(a.issuer, a.client_id, a.sub, json.loads(a.claims) if a.claims else None, a.nonce)
    else:
        resign(a.token)


if __name__ == "__main__":
    main()
