"""Signs a proxy page URL for one view's policy, for a sandbox whose operator set `policy_keys`
for the host. Run it where the host reads the resource (its backend): the key must never reach
a browser. The standard library only; Python 3.8 or later.

The scheme (v1) is written down once, in signer/README.md; this module and policy-url.mjs
follow it and give the same URL, byte for byte, for the same input.

    from policy_url import sign_policy_url
    url = sign_policy_url("https://chat.sandbox.example.net/sandbox.html",
                          resource["_meta"]["ui"].get("csp"), key=os.environ["CHAT_POLICY_KEY"])
"""

import hashlib
import hmac
import json
import math
import re
import time
import urllib.parse

__all__ = ["sign_policy_url", "csp_parameter"]

SCHEME = "mcp-sandbox-proxy policy v1"
# The spec's csp lists, in the order the parameter writes them.
DOMAIN_LISTS = ("connectDomains", "resourceDomains", "frameDomains", "baseUriDomains")
SIGNED = ("csp", "expires", "signature")
DEFAULT_PORTS = {"http": 80, "https": 443}
# What the URL standard's form encoding leaves as it is; a space is written "+".
FORM_SAFE = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789*-._")
KEY_HEX = re.compile(r"(?:[0-9a-fA-F]{2}){32,128}")


def sign_policy_url(proxy_url, csp, *, key, expires_in=600, now=None):
    """The proxy page URL with `csp` and its signature, valid for `expires_in` seconds; without
    any declared domain, the URL as given (the spec's default policy needs no signature).

    proxy_url: the sandbox's page, e.g. https://chat.sandbox.example.net/sandbox.html, or
        https://<label>.chat.sandbox.example.net/sandbox.html for a server's own origin: the
        URL's host is signed (with ?embedder= for a host entry whose origin is a pattern).
    csp: the resource's `_meta.ui.csp` (a dict), or None.
    key: the host's key, as hex (openssl rand -hex 32).
    expires_in: seconds the URL stays valid.
    now: the time in seconds since 1970 (time.time() unless given).
    """
    raw_key = _key_bytes(key)
    scheme, host, path, pairs, fragment = _split(proxy_url)
    pairs = [(name, value) for name, value in pairs if name not in SIGNED]
    value = csp_parameter(csp)
    if value is not None:
        moment = time.time() if now is None else now
        expires = str(math.floor(moment) + math.floor(expires_in))
        message = "\n".join((SCHEME, host, expires, value)).encode("utf-8")
        signature = hmac.new(raw_key, message, hashlib.sha256).hexdigest()
        pairs += [("csp", value), ("expires", expires), ("signature", signature)]
    query = "&".join(f"{_form(name)}={_form(v)}" for name, v in pairs)
    return f"{scheme}://{host}{path}{'?' + query if query else ''}{fragment}"


def csp_parameter(csp):
    """The `csp` parameter for a resource's csp dict: its four lists in the spec's order,
    strings only; None when it declares no domain."""
    if not isinstance(csp, dict):
        return None
    lists = {}
    for name in DOMAIN_LISTS:
        entries = csp.get(name)
        if not isinstance(entries, list):
            continue
        strings = [entry for entry in entries if isinstance(entry, str)]
        if strings:
            lists[name] = strings
    if not lists:
        return None
    return _escape_lone_surrogates(json.dumps(lists, ensure_ascii=False, separators=(",", ":")))


def _key_bytes(key):
    text = key.strip() if isinstance(key, str) else ""
    if not KEY_HEX.fullmatch(text):
        raise ValueError("sign_policy_url: the key must be 32 to 128 bytes as hex (openssl rand -hex 32)")
    return bytes.fromhex(text)


def _split(proxy_url):
    """Scheme, host (lower case, no default port), path, query pairs and fragment of an http(s)
    URL, as the URL standard writes them."""
    parts = urllib.parse.urlsplit(proxy_url.strip())
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS or not parts.hostname:
        raise ValueError(f"sign_policy_url: {proxy_url!r} is not an http or https URL")
    hostname = parts.hostname
    if parts.username is not None or parts.password is not None:
        raise ValueError("sign_policy_url: a proxy URL has no user or password")
    if not hostname.isascii():
        raise ValueError("sign_policy_url: write the sandbox name in ASCII (its punycode form)")
    host = hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    if parts.port is not None and parts.port != DEFAULT_PORTS[scheme]:
        host += f":{parts.port}"
    pairs = urllib.parse.parse_qsl(parts.query, keep_blank_values=True, errors="replace")
    fragment = f"#{parts.fragment}" if "#" in proxy_url else ""
    return scheme, host, parts.path or "/", pairs, fragment


def _form(text):
    """`text` in the URL standard's application/x-www-form-urlencoded form."""
    out = []
    for byte in text.encode("utf-8", "surrogatepass"):
        if byte in FORM_SAFE:
            out.append(chr(byte))
        elif byte == 0x20:
            out.append("+")
        else:
            out.append(f"%{byte:02X}")
    return "".join(out)


def _escape_lone_surrogates(text):
    # JSON.stringify writes an unpaired surrogate as \\udXXX; json.dumps would keep it raw.
    return re.sub("[\ud800-\udfff]", lambda m: f"\\u{ord(m.group()):04x}", text)


if __name__ == "__main__":
    # python3 policy_url.py PROXY_URL CSP_JSON, with the key in POLICY_KEY: prints the URL.
    import os
    import sys

    if len(sys.argv) != 3 or "POLICY_KEY" not in os.environ:
        sys.exit("usage: POLICY_KEY=<hex> python3 policy_url.py PROXY_URL CSP_JSON")
    print(sign_policy_url(sys.argv[1], json.loads(sys.argv[2]), key=os.environ["POLICY_KEY"]))
