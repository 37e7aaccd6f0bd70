"""Signs a proxy page URL for one view's policy, for a sandbox whose operator set `policy_keys`
for the host. Run it where the host reads the resource (its backend): the key must never reach
a browser. The standard library only; Python 3.8 or later.

The scheme (v1) and the rules for what is signed are written down once, in signer/README.md;
this module and policy-url.mjs follow them and give the same URL, byte for byte, or refuse with
the same reason, for the same input (signer/vectors.json holds both to it).

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

__all__ = ["sign_policy_url", "csp_parameter"]

SCHEME = "mcp-sandbox-proxy policy v1"
# The spec's csp lists, in the order the parameter writes them.
DOMAIN_LISTS = ("connectDomains", "resourceDomains", "frameDomains", "baseUriDomains")
# Replaced in the URL by the signed values (`widget_csp` is `csp` as mcp-use writes it).
SIGNED = ("csp", "widget_csp", "expires", "signature")
# The other parameters the service reads: one given twice is a `400`.
READ_ONCE = ("embedder", "upgrade")
DEFAULT_PORTS = {"http": "80", "https": "443"}
# The service's defaults: `policy_max_lifetime` (an hour) and `limits.max_query_bytes`.
DEFAULT_MAX_LIFETIME = 3600
DEFAULT_MAX_QUERY_BYTES = 16384
# `expires` is at most 10 digits: the last second a signed URL can name, in 2286.
LAST_EXPIRES = 9_999_999_999
# The service's rule for page paths (`page_paths`): no longer, and not the report endpoint.
MAX_PATH_BYTES = 200
REPORT_PATH = "/csp-report"
# The whole numbers JavaScript holds exactly: both signers take the same range.
MAX_SAFE_INTEGER = 2**53 - 1
# What the URL standard's form encoding leaves as it is; a space is written "+".
FORM_SAFE = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789*-._")
KEY_HEX = re.compile(r"(?:[0-9a-fA-F]{2}){32,128}")
URL_PARTS = re.compile(r"([^/?#]*)([^?#]*)(?:\?([^#]*))?(#.*)?")
DNS_LABEL = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?")
NUMBER_LABEL = re.compile(r"[0-9]+|0x[0-9a-f]*")
IPV4_PART = re.compile(r"0|[1-9][0-9]{0,2}")
PAGE_PATH_ODD = re.compile(r"[^A-Za-z0-9\-._~/]")
FRAGMENT_ENCODED = re.compile(r'["<>`]')
PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")


def sign_policy_url(proxy_url, csp, *, key, expires_in=600, max_lifetime=DEFAULT_MAX_LIFETIME,
                    max_query_bytes=DEFAULT_MAX_QUERY_BYTES, now=None):
    """The proxy page URL with `csp` and its signature, valid for `expires_in` seconds; without
    any declared domain, the URL with no signed parameters (the spec's default policy needs
    none). Raises ValueError, "sign_policy_url: <reason>", for any input the service would not
    honour: a URL a browser would write otherwise, a lifetime out of range, a query over the
    limit.

    proxy_url: the sandbox's page, e.g. https://chat.sandbox.example.net/sandbox.html, or
        https://<label>.chat.sandbox.example.net/sandbox.html for a server's own origin: the
        URL's host is signed (with ?embedder= for a host entry whose origin is a pattern).
    csp: the resource's `_meta.ui.csp` (a dict), or None.
    key: the host's key, as hex (openssl rand -hex 32).
    expires_in: seconds the URL stays valid, a whole number.
    max_lifetime: the entry's `policy_max_lifetime` in seconds.
    max_query_bytes: the service's `limits.max_query_bytes`.
    now: the time in seconds since 1970 (time.time() unless given).
    """
    # A bad argument fails every call, not only those with domains to sign.
    raw_key = _key_bytes(key)
    lifetime = _lifetime_seconds(expires_in, max_lifetime)
    if _whole_number(max_query_bytes) is None or max_query_bytes < 1:
        _refuse("the query limit is not a whole number of bytes above 0")
    moment = time.time() if now is None else now
    is_number = isinstance(moment, (int, float)) and not isinstance(moment, bool)
    if not is_number or not math.isfinite(moment) or moment < 0:
        _refuse("now is not a time since 1970")
    expires = math.floor(moment) + lifetime
    if expires > LAST_EXPIRES:
        _refuse(f"now is past the last expiry a signed URL can name ({LAST_EXPIRES}, in 2286)")
    scheme, sandbox, path, pairs, fragment = _proxy_parts(proxy_url)
    pairs = [(name, value) for name, value in pairs if name not in SIGNED]
    value = csp_parameter(csp)
    if value is not None:
        message = "\n".join((SCHEME, sandbox, str(expires), value)).encode("utf-8")
        signature = hmac.new(raw_key, message, hashlib.sha256).hexdigest()
        pairs += [("csp", value), ("expires", str(expires)), ("signature", signature)]
    query = "&".join(f"{_form_encode(name)}={_form_encode(v)}" for name, v in pairs)
    # The query is ASCII, so its length is its bytes.
    if len(query) > max_query_bytes:
        _refuse(f"the query is {len(query)} bytes; the limit is {max_query_bytes} (limits.max_query_bytes): "
                "declare fewer domains, or state the operator's limit")
    return f"{scheme}://{sandbox}{path}{'?' + query if query else ''}{fragment}"


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


def _refuse(reason):
    raise ValueError(f"sign_policy_url: {reason}")


def _whole_number(value):
    """`value` as an int when it is a whole number JavaScript holds exactly, else None: the ES
    signer takes the same range, so both give the same answer for any number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        return None
    if abs(value) > MAX_SAFE_INTEGER:
        return None
    return int(value)


def _lifetime_seconds(expires_in, max_lifetime):
    """The lifetime in seconds: a whole number from 1 to the entry's maximum."""
    maximum = _whole_number(max_lifetime)
    if maximum is None or maximum < 1:
        _refuse("the maximum lifetime is not a whole number of seconds above 0")
    # SECURITY: NaN, infinity or a fraction would be signed as an expiry the service cannot read
    # or one already past, and a lifetime over the entry's maximum is refused by the service.
    allowed = f"it must be 1 to {maximum} s (policy_max_lifetime)"
    seconds = _whole_number(expires_in)
    if seconds is None:
        _refuse(f"the lifetime is not a whole number of seconds; {allowed}")
    if seconds < 1 or seconds > maximum:
        _refuse(f"the lifetime is {seconds} s; {allowed}")
    return seconds


def _key_bytes(key):
    # ASCII white space only, as the ES signer strips it: a key read from a file keeps no newline.
    text = key.strip(" \t\n\f\r") if isinstance(key, str) else ""
    if not KEY_HEX.fullmatch(text):
        _refuse("the key must be 32 to 128 bytes as hex (openssl rand -hex 32)")
    return bytes.fromhex(text)


def _proxy_parts(proxy_url):
    """Scheme, sandbox name, path, query pairs and fragment of a proxy URL, as a browser writes
    them: the scheme and host in lower case, the default port left out, an empty path as `/`.
    Anything else a browser would write otherwise (percent-encoding, IPv4 shorthands, dot
    segments, `\\`, a trailing dot) is refused, as is a host or path the service serves no page
    on: the signature covers the host, and a signer that guessed at a browser's rewriting would
    sign a name the page is not served on."""
    if not isinstance(proxy_url, str):
        _refuse("the proxy URL is not a string")
    for char in proxy_url:
        if not 0x21 <= ord(char) <= 0x7E:
            _refuse(f"the proxy URL holds U+{ord(char):04X}: a proxy URL is printable ASCII "
                    "(a name in punycode, xn--…; anything else percent-encoded)")
    if "\\" in proxy_url:
        _refuse('the proxy URL holds "\\", which a browser reads as "/": write "/"')
    start = re.match(r"(https?)://", proxy_url, re.IGNORECASE)
    if not start:
        _refuse("the proxy URL does not start with https:// or http://")
    scheme = start.group(1).lower()
    authority, path, query, fragment = URL_PARTS.fullmatch(proxy_url, start.end()).groups()
    sandbox = _sandbox_name(scheme, authority)
    path = path or "/"
    _check_path(path)
    encoded = FRAGMENT_ENCODED.search(fragment or "")
    if encoded:
        _refuse(f"the fragment holds U+{ord(encoded.group()):04X}, "
                "which a browser would percent-encode")
    pairs = _form_pairs(query or "")
    for name in READ_ONCE:
        if sum(1 for n, _ in pairs if n == name) > 1:
            _refuse(f"the query has more than one {name} parameter")
    return scheme, sandbox, path, pairs, fragment or ""


def _sandbox_name(scheme, authority):
    """The name the page is served on, as a browser sends it: host[:port], the port not the
    default."""
    if "@" in authority:
        _refuse("the proxy URL names a user or password: a sandbox URL has none")
    if authority.startswith("["):
        _refuse("the host is an IPv6 address: a sandbox is named by a DNS name or an IPv4 address")
    hostname, colon, port = authority.rpartition(":")
    if not colon:
        hostname, port = authority, ""
    elif not re.fullmatch(r"[1-9][0-9]{0,4}", port) or int(port) > 65535:
        _refuse(f'the port "{port}" is not a number from 1 to 65535 without leading zeros')
    # ASCII only (checked above), so this is the URL standard's lower-casing.
    host = hostname.lower()
    if not host:
        _refuse("the proxy URL has no host")
    if host.endswith("."):
        _refuse(f'the host "{host}" ends in a dot, and the service answers 421 for it: '
                f'write "{host.rstrip(".")}"')
    labels = host.split(".")
    if len(host) > 253 or not all(DNS_LABEL.fullmatch(label) for label in labels):
        _refuse(f'the host "{host}" is not a DNS name as a browser sends it: labels of a-z, 0-9 and "-" '
                '(not first or last), 1 to 63 characters, 253 in all')
    # The URL standard reads a name whose last label is a number as an IPv4 address, and
    # rewrites any shorthand (127.1, 0x7f.0.0.1, 127.000.000.001) as four decimal numbers.
    if NUMBER_LABEL.fullmatch(labels[-1]) and not _is_dotted_quad(labels):
        _refuse(f'the host "{host}" ends in a number, so a browser reads it as an IPv4 address: '
                "write four numbers from 0 to 255 without leading zeros (127.0.0.1)")
    return host if port in ("", DEFAULT_PORTS[scheme]) else f"{host}:{port}"


def _is_dotted_quad(labels):
    return len(labels) == 4 and all(IPV4_PART.fullmatch(label) and int(label) <= 255
                                    for label in labels)


def _check_path(path):
    """The service's rule for a page path: `/`, then plain segments; anything else is a `404`."""
    if len(path) > MAX_PATH_BYTES:
        _refuse(f"the path is over {MAX_PATH_BYTES} bytes: no page path is that long")
    odd = PAGE_PATH_ODD.search(path)
    if odd:
        _refuse(f'the path "{path}" holds "{odd.group()}": '
                "a page path is letters, digits, -, ., _, ~ and / only")
    segments = path[1:].split("/")
    if any(segment in (".", "..") for segment in segments):
        _refuse(f'the path "{path}" has a "." or ".." segment: a browser would load another path')
    # An empty segment only at the end: `/sandbox/` is a path of its own, `/a//b` is no page's.
    if any(segment == "" for segment in segments[:-1]):
        _refuse(f'the path "{path}" has an empty segment: no page path has one')
    if path == REPORT_PATH:
        _refuse(f'the path "{path}" is where browsers send CSP reports, not a page')


def _form_pairs(query):
    """A query's pairs, read as the URL standard's application/x-www-form-urlencoded parser
    reads them."""
    pairs = []
    for piece in query.split("&"):
        if not piece:
            continue
        name, _, value = piece.partition("=")
        pairs.append((_form_decode(name), _form_decode(value)))
    return pairs


def _form_decode(text):
    """`text` with "+" as a space and each %XX as its byte, read as UTF-8 without BOM: a leading
    U+FEFF is kept, a bad byte becomes U+FFFD."""
    source = text.replace("+", " ")
    out = bytearray()
    i = 0
    while i < len(source):
        if source[i] == "%" and PERCENT.match(source, i):
            out.append(int(source[i + 1:i + 3], 16))
            i += 3
        else:
            # ASCII only (checked before).
            out.append(ord(source[i]))
            i += 1
    return out.decode("utf-8", "replace")


def _form_encode(text):
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
    try:
        print(sign_policy_url(sys.argv[1], json.loads(sys.argv[2]), key=os.environ["POLICY_KEY"]))
    except ValueError as error:
        sys.exit(str(error))
