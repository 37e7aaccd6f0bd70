//! Request in, response out: routing by authority, the page's headers, and every error answer.
//!
//! No sockets here. `serve` and the `headers` command both call [`Service::handle`], so what
//! `headers` prints is what `serve` sends.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock, PoisonError, RwLock};
use std::time::Duration;

use bytes::Bytes;
use http::header::{self, HeaderMap, HeaderName, HeaderValue};
use http::{Method, Request, Response, StatusCode};

use crate::compress::{self, Encoding};
use crate::config::{Config, HostEntry, RelayMessages};
use crate::csp::{Dropped, OptIns, QueryError, ViewPolicy, default_for_query, policy_for_query};
use crate::limits::{MAX_FIELDS, REFUSAL_FIELD, REQUEST_LINE_SLACK, Refusal};
use crate::metrics::{HostCounters, Metrics};
use crate::origin::{Embedder, Origin, split_host_port};
use crate::page::{PageTemplate, RelaySettings};
use crate::routing::{Routes, lower_case, route_key};
use crate::sandbox::ViewSandbox;
use crate::signing::{PolicyKeys, Refused, Signed, unix_now};
use crate::telemetry::LogBudget;

pub use crate::body::Body;
use crate::body::Unsent;

/// Roughly what one form's header map holds: a dozen entries and their index.
const HEADER_MAP_BYTES: usize = 1024;

/// At most this many dropped entries are logged one by one per request; the rest as a count.
const MAX_DROPPED_LOGGED: usize = 16;

/// Dropped-entry lines per second across all requests; the rest are counted in metrics only.
static DROPPED_LOG_BUDGET: LogBudget = LogBudget::new(20);
/// Mismatched-embedder lines per second, in all: a misconfigured host reloads its pages often.
static EMBEDDER_LOG_BUDGET: LogBudget = LogBudget::new(5);

// The referrer a view's requests carry: the sandbox origin only, and nothing over http.
// `no-referrer` would break referrer-bound APIs (map tiles, some CDNs) that views use; the
// full URL would leak `?csp=` to every third party the view talks to.
const REFERRER_POLICY: HeaderValue = HeaderValue::from_static("strict-origin-when-cross-origin");
const HTML: HeaderValue = HeaderValue::from_static("text/html; charset=utf-8");
const TEXT: HeaderValue = HeaderValue::from_static("text/plain; charset=utf-8");
const NO_STORE: HeaderValue = HeaderValue::from_static("no-store");
// A page whose policy a signature decided: a cache may keep it, but must ask again before
// using it, so that no cache serves a signed policy after its expiry.
const NO_CACHE: HeaderValue = HeaderValue::from_static("no-cache");
const NOSNIFF: HeaderValue = HeaderValue::from_static("nosniff");
const ORIGIN_AGENT_CLUSTER: HeaderName = HeaderName::from_static("origin-agent-cluster");
const OAC_ON: HeaderValue = HeaderValue::from_static("?1");
const ALLOW_GET_HEAD: HeaderValue = HeaderValue::from_static("GET, HEAD");
const RETRY_AFTER: HeaderValue = HeaderValue::from_static("1");
const VARY_ACCEPT_ENCODING: HeaderValue = HeaderValue::from_static("accept-encoding");
const CLEAR_SITE_DATA: HeaderName = HeaderName::from_static("clear-site-data");
const CLEAR_COOKIES: HeaderValue = HeaderValue::from_static("\"cookies\"");
// Error answers are not pages: nothing in them may run, and nobody may frame them.
const ERROR_CSP: HeaderValue =
    HeaderValue::from_static("default-src 'none'; frame-ancestors 'none'");

/// One configured host, with what its responses need built once.
#[derive(Debug)]
struct Host {
    origin: Embedder,
    counters: Arc<HostCounters>,
    /// `no-store`, or `public, max-age=N` when the host's pages may be cached.
    cache_control: HeaderValue,
    cacheable: bool,
    /// What the operator adds to every view policy of this host.
    opt_ins: OptIns,
    relay_messages: RelayMessages,
    /// The tokens this host's views may get, and so the page's own `sandbox` policy.
    view_sandbox: ViewSandbox,
    /// For a host that signs its policies: its keys, and the name its signatures cover.
    signing: Option<Signing>,
}

#[derive(Debug)]
struct Signing {
    keys: PolicyKeys,
    /// The host entry's sandbox name as a browser writes it (see `signing`).
    sandbox: String,
}

/// What a host entry that signs its policies makes of a page's query (see `verify_policy`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PolicyVerdict {
    /// No host entry that signs serves the name: every valid `?csp=` is served.
    Unsigned,
    /// The query has no `csp`: the spec's default policy, which needs no signature.
    NothingDeclared,
    /// Signed by the host, valid until `expires` (Unix seconds).
    Signed { expires: u64 },
    /// The spec's default policy instead of the declared one, and why.
    Refused(String),
}

/// Where a page's view policy came from, as far as signatures go.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Signature {
    /// The host does not sign, or the query declares nothing: there was nothing to verify.
    NotChecked,
    /// The declared policy, signed by the host, until its expiry.
    Valid(Signed),
    /// The spec's default policy instead of the declared one.
    Refused(Refused),
}

/// A page and the headers that depend on its query, built once; its compressed forms are made
/// the first time a client accepts one, and kept with it.
#[derive(Debug)]
struct RenderedPage {
    page: Encoded,
    brotli: OnceLock<Encoded>,
    gzip: OnceLock<Encoded>,
    /// Two policies in one header, `<view policy>, frame-ancestors <host origin>`: see
    /// `content_security_policy`.
    csp: HeaderValue,
    /// Names the page's bytes and policy: the base of every form's `ETag`.
    tag: u64,
    dropped: Vec<Dropped>,
    /// The one origin allowed to frame this page (`frame-ancestors`), as browsers serialize it.
    embedder: String,
    /// The query marks the relay asking for its page again (see `is_policy_upgrade`).
    policy_upgrade: bool,
    signature: Signature,
}

/// One form of a page, with its `Content-Length`, its strong `ETag`, and its answer's headers
/// once one was sent.
#[derive(Debug)]
struct Encoded {
    body: Bytes,
    length: HeaderValue,
    etag: HeaderValue,
    headers: OnceLock<HeaderMap>,
}

impl Encoded {
    /// `tag` names everything the answer's bytes depend on (see `page_tag`); each coding is a
    /// representation of its own, so it has a tag of its own.
    fn new(body: Bytes, tag: u64, encoding: Encoding) -> Self {
        let etag = match encoding.header() {
            Some(coding) => format!("\"{tag:016x}-{}\"", coding.to_str().unwrap_or_default()),
            None => format!("\"{tag:016x}\""),
        };
        Encoded {
            length: HeaderValue::from(body.len()),
            // Quotes, hex digits, a dash and a coding name: always a valid header value.
            etag: HeaderValue::from_str(&etag).unwrap_or(HeaderValue::from_static("\"\"")),
            headers: OnceLock::new(),
            body,
        }
    }
}

impl RenderedPage {
    /// What keeping it costs, roughly: the page, its policy, and the query that keys it.
    fn bytes(&self, query: &str) -> usize {
        // The compressed forms, once made, are each smaller than the page itself; each form's
        // header map is about a kilobyte.
        2 * self.page.body.len() + self.csp.len() + query.len() + 3 * HEADER_MAP_BYTES
    }

    /// Whether the page may still be served at `now`: a signed policy ends at its expiry.
    fn is_valid_at(&self, now: u64) -> bool {
        match self.signature {
            Signature::Valid(signed) => now < signed.expires,
            Signature::NotChecked | Signature::Refused(_) => true,
        }
    }

    /// The page in `encoding`, compressed now if this is the first time it is asked for.
    fn encoded(&self, encoding: Encoding) -> &Encoded {
        let (page, tag) = (&self.page.body, self.tag);
        match encoding {
            Encoding::Identity => &self.page,
            Encoding::Brotli => self
                .brotli
                .get_or_init(|| Encoded::new(compress::brotli(page), tag, encoding)),
            Encoding::Gzip => self
                .gzip
                .get_or_init(|| Encoded::new(compress::gzip(page), tag, encoding)),
        }
    }
}

/// Rendered pages by (host, raw query), shared by every answer that carries one. The answer
/// depends only on those, so a repeated request costs a lookup and a few header clones. The
/// cache holds at most `budget` bytes whatever clients send; when a page would not fit, it
/// starts over (a simple rule that keeps a lookup a single hash probe and never evicts in a
/// loop).
#[derive(Debug)]
struct PageCache {
    pages: RwLock<CachedPages>,
    budget: usize,
}

#[derive(Debug, Default)]
struct CachedPages {
    /// Host index → raw query → page (the index needs no hashing; the query, which clients
    /// choose, is hashed with std's keyed SipHash).
    by_host: Vec<HashMap<Box<str>, Arc<RenderedPage>>>,
    bytes: usize,
}

impl PageCache {
    fn new(budget: usize) -> Self {
        PageCache {
            pages: RwLock::new(CachedPages::default()),
            budget,
        }
    }

    fn get(&self, host: usize, query: &str) -> Option<Arc<RenderedPage>> {
        let pages = self.pages.read().unwrap_or_else(PoisonError::into_inner);
        pages.by_host.get(host)?.get(query).cloned()
    }

    fn insert(&self, host: usize, query: &str, page: &Arc<RenderedPage>) {
        let cost = page.bytes(query);
        if cost > self.budget {
            return;
        }
        let mut pages = self.pages.write().unwrap_or_else(PoisonError::into_inner);
        if pages.bytes + cost > self.budget {
            *pages = CachedPages::default();
        }
        if pages.by_host.len() <= host {
            pages.by_host.resize_with(host + 1, HashMap::new);
        }
        if pages.by_host[host]
            .insert(query.into(), page.clone())
            .is_none()
        {
            pages.bytes += cost;
        }
    }
}

/// What the connection a request arrived on says about it.
#[derive(Clone, Copy, Debug)]
pub enum Transport<'a> {
    /// Plain TCP, or no connection at all (the `headers` command): no server name to check.
    Plain,
    /// TLS, with the server name (SNI) the client asked for, if it sent one.
    Tls { server_name: Option<&'a str> },
}

/// The request handler for the public listener, built once per config.
#[derive(Debug)]
pub struct Service {
    hosts: Vec<Host>,
    /// Authority → host index.
    names: Routes<usize>,
    /// TLS server name (a host without port) → host indices, for the SNI/authority rule.
    /// Several entries may share a name on different ports.
    server_names: Routes<Vec<usize>>,
    unmatched: Arc<HostCounters>,
    tls: bool,
    default_port: u16,
    hsts: Option<HeaderValue>,
    max_query_bytes: usize,
    max_header_bytes: usize,
    page: PageTemplate,
    pages: PageCache,
}

impl Service {
    /// A service with metrics of its own (the `headers` command, tests).
    pub fn new(config: &Config) -> Self {
        Self::with_metrics(config, &Metrics::new())
    }

    /// A service that counts into `metrics`, which outlive reloads.
    pub fn with_metrics(config: &Config, metrics: &Metrics) -> Self {
        let default_port = if config.tls.is_some() { 443 } else { 80 };
        let mut hosts = Vec::with_capacity(config.hosts.len());
        let mut names = Routes::default();
        let mut server_names = Routes::<Vec<usize>>::default();
        for (index, entry) in config.hosts.iter().enumerate() {
            hosts.push(Host::new(entry, metrics, default_port));
            let per_server = entry.per_server_subdomains;
            let authority = entry.sandbox.authority(default_port);
            names.add(&authority, per_server, |slot| *slot = index);
            server_names.add(entry.sandbox.host(), per_server, |slot| slot.push(index));
        }
        let hsts = config
            .tls
            .as_ref()
            .filter(|tls| !tls.hsts_max_age.is_zero())
            .map(|tls| hsts_value(tls.hsts_max_age));
        Service {
            hosts,
            names,
            server_names,
            unmatched: metrics.unmatched(),
            tls: config.tls.is_some(),
            default_port,
            hsts,
            max_query_bytes: config.limits.max_query_bytes,
            max_header_bytes: config.limits.max_header_bytes,
            page: PageTemplate::new(),
            pages: PageCache::new(config.limits.page_cache_bytes),
        }
    }

    /// Answers one request. Never fails: every problem is a 4xx with a plain-text reason.
    pub fn handle<B>(&self, req: &Request<B>) -> Response<Body> {
        self.handle_on(req, Transport::Plain, None)
    }

    /// Answers one request that arrived over `transport`, on a connection whose answers not
    /// yet read by its client are counted in `unsent`: one that holds too many gets a `503`.
    pub fn handle_on<B>(
        &self,
        req: &Request<B>,
        transport: Transport<'_>,
        unsent: Option<&Arc<Unsent>>,
    ) -> Response<Body> {
        let (host, response) = self.answer(req, transport);
        let mut response = match unsent {
            Some(unsent) => charged(response, unsent),
            None => response,
        };
        let counters = host.map_or(&self.unmatched, |h| &h.counters);
        counters.count_response(response.status());
        let headers = response.headers_mut();
        if let Some(hsts) = &self.hsts {
            headers.insert(header::STRICT_TRANSPORT_SECURITY, hsts.clone());
        }
        // SECURITY: this service sets no cookie, so any a request carries were set by a view
        // for the sandbox name (or its parent), where every other MCP server's view can read
        // them and a flood of them can cost views their pages. Each answer clears them.
        if req.headers().contains_key(header::COOKIE) {
            headers.insert(CLEAR_SITE_DATA, CLEAR_COOKIES);
            // An answer that clears one client's cookies is that client's alone: no cache may
            // keep it and replay it to others.
            headers.insert(header::CACHE_CONTROL, NO_STORE);
            headers.remove(header::ETAG);
        }
        response
    }

    fn answer<B>(
        &self,
        req: &Request<B>,
        transport: Transport<'_>,
    ) -> (Option<&Host>, Response<Body>) {
        if let Some(refusal) = req.headers().get(REFUSAL_FIELD) {
            let refusal = Refusal::from_token(refusal.as_bytes()).unwrap_or(Refusal::Malformed);
            return (None, self.refused(refusal));
        }
        if field_bytes(req) > self.max_header_bytes {
            return (None, self.refused(Refusal::FieldsTooLarge));
        }
        let Some(authority) = request_authority(req) else {
            let response = error(
                StatusCode::BAD_REQUEST,
                "the request names no host, or more than one (Host or :authority)",
            );
            return (None, response);
        };
        let Some(index) = self.route(authority) else {
            let reason = format!(
                "this proxy serves no sandbox named \"{}\"",
                authority.escape_debug()
            );
            return (None, error(StatusCode::MISDIRECTED_REQUEST, &reason));
        };
        let host = &self.hosts[index];
        if let Transport::Tls { server_name } = transport
            && self.tls
            && let Err(reason) = self.check_server_name(server_name, authority, index)
        {
            return (Some(host), error(StatusCode::MISDIRECTED_REQUEST, &reason));
        }
        (Some(host), self.answer_host(req, index))
    }

    /// SECURITY: a connection negotiated for one host's name must not serve another host's
    /// page (HTTP/2 coalescing across a shared certificate); browsers retry a 421 on a new
    /// connection. Per-server labels of the same host may share a connection. A client sends
    /// no server name only for an IP address, so a connection without one serves only a
    /// sandbox named by an IP address: the same rule, with nothing to match a name against.
    fn check_server_name(
        &self,
        server_name: Option<&str>,
        authority: &str,
        index: usize,
    ) -> Result<(), String> {
        let Some(name) = server_name else {
            let host = split_host_port(authority).map_or(authority, |(host, _)| host);
            return match host.trim_matches(['[', ']']).parse::<std::net::IpAddr>() {
                Ok(_) => Ok(()),
                Err(_) => Err(format!(
                    "this TLS connection named no server (SNI), so it serves no sandbox named \"{}\": open one that names it",
                    authority.escape_debug()
                )),
            };
        };
        if self
            .route_server_name(name)
            .is_some_and(|hosts| hosts.contains(&index))
        {
            return Ok(());
        }
        Err(format!(
            "this connection was made for \"{}\", not for \"{}\": open a new one",
            name.escape_debug(),
            authority.escape_debug()
        ))
    }

    /// The answer to a head that broke a limit or could not be read.
    fn refused(&self, refusal: Refusal) -> Response<Body> {
        let (status, reason) = match refusal {
            Refusal::FieldsTooLarge => (
                StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
                format!(
                    "the request's header fields are over limits.max_header_bytes ({} bytes, cookies not counted) or more than {MAX_FIELDS}",
                    self.max_header_bytes
                ),
            ),
            Refusal::TargetTooLong => (
                StatusCode::BAD_REQUEST,
                format!(
                    "the request target is over {} bytes; the query limit is {} (limits.max_query_bytes)",
                    self.max_query_bytes + REQUEST_LINE_SLACK,
                    self.max_query_bytes
                ),
            ),
            Refusal::Malformed => (
                StatusCode::BAD_REQUEST,
                "the request is not valid HTTP/1.1".to_owned(),
            ),
            Refusal::Body => (
                StatusCode::BAD_REQUEST,
                "a request to this service carries no body".to_owned(),
            ),
        };
        error(status, &reason)
    }

    /// The page for host `index` and a raw query, from the cache or built and cached.
    fn rendered(&self, index: usize, query: &str) -> Result<Arc<RenderedPage>, String> {
        let now = unix_now();
        if let Some(page) = self.pages.get(index, query)
            && page.is_valid_at(now)
        {
            return Ok(page);
        }
        let host = &self.hosts[index];
        let origin = embedder_for(&host.origin, query)?;
        let origin = origin.as_ref();
        let (policy, signature) = self.policy(host, query, now)?;
        let sandbox = host.view_sandbox.page_policy();
        let csp = content_security_policy(policy.header(), origin, &sandbox);
        let Ok(csp) = HeaderValue::from_str(&csp) else {
            // Unreachable: every source in the policy passed `HostSource`, which admits
            // visible ASCII only. Refuse rather than send a page without its policy.
            return Err("the declared domains cannot form a header".to_owned());
        };
        let refused = match &signature {
            Signature::Refused(refused) => Some(refused.to_string()),
            Signature::NotChecked | Signature::Valid(_) => None,
        };
        let relay = RelaySettings {
            max_query_bytes: self.max_query_bytes,
            messages: host.relay_messages,
            view_sandbox: &host.view_sandbox,
            signed_policies: host.signing.is_some(),
            policy_refused: refused.as_deref(),
        };
        let body = self.page.render(origin, &policy, &relay);
        let tag = page_tag(&body, &csp);
        let page = Arc::new(RenderedPage {
            brotli: OnceLock::new(),
            gzip: OnceLock::new(),
            page: Encoded::new(body, tag, Encoding::Identity),
            csp,
            tag,
            dropped: policy.dropped,
            embedder: origin.to_string(),
            policy_upgrade: is_policy_upgrade(query),
            signature,
        });
        self.pages.insert(index, query, &page);
        Ok(page)
    }

    /// The view policy of a query: the declared one; for a host that signs its policies, the
    /// declared one only with a valid signature, and the spec's default otherwise.
    fn policy(
        &self,
        host: &Host,
        query: &str,
        now: u64,
    ) -> Result<(ViewPolicy, Signature), String> {
        let verdict = host
            .signing
            .as_ref()
            .map(|signing| signing.keys.verify(&signing.sandbox, query, now));
        let signature = match verdict {
            None | Some(Ok(None)) => Signature::NotChecked,
            Some(Ok(Some(signed))) => Signature::Valid(signed),
            Some(Err(refused)) => {
                let policy = default_for_query(query, self.max_query_bytes, &host.opt_ins)
                    .map_err(|e| refused_query(&e))?;
                return Ok((policy, Signature::Refused(refused)));
            }
        };
        let policy = policy_for_query(Some(query), self.max_query_bytes, &host.opt_ins)
            .map_err(|e| refused_query(&e))?;
        Ok((policy, signature))
    }

    fn answer_host<B>(&self, req: &Request<B>, index: usize) -> Response<Body> {
        let host = &self.hosts[index];
        if !matches!(req.uri().path(), "/" | "/sandbox.html") {
            return error(
                StatusCode::NOT_FOUND,
                "not found: the proxy page is / or /sandbox.html",
            );
        }
        let head = match *req.method() {
            Method::GET => false,
            Method::HEAD => true,
            _ => {
                let mut response = error(
                    StatusCode::METHOD_NOT_ALLOWED,
                    "the proxy page takes GET or HEAD",
                );
                response.headers_mut().insert(header::ALLOW, ALLOW_GET_HEAD);
                return response;
            }
        };
        let page = match self.rendered(index, req.uri().query().unwrap_or("")) {
            Ok(page) => page,
            Err(reason) => return error(StatusCode::BAD_REQUEST, &reason),
        };
        log_dropped(host, &page.dropped);
        if let Some(framer) = foreign_framer(req, &page.embedder) {
            host.counters.count_embedder_mismatch();
            log_embedder_mismatch(host, &page.embedder, &framer);
        }
        if matches!(page.signature, Signature::Refused(_)) {
            host.counters.count_refused_signature();
        }
        if page.policy_upgrade {
            host.counters.count_policy_upgrade();
        }
        let encoding = Encoding::accepted_by(req);
        let encoded = page.encoded(encoding);
        let fresh = host.cacheable && is_fresh(req, &encoded.etag);
        let mut response = page_response(&page, encoded, host, head || fresh, encoding);
        if fresh {
            *response.status_mut() = StatusCode::NOT_MODIFIED;
            response.headers_mut().remove(header::CONTENT_LENGTH);
        }
        response
    }

    /// The host entry for an authority: an exact sandbox name, or one label below a name
    /// whose host serves per-server subdomains.
    /// The signature the host entry serving `authority` gives `csp` until `expires` (Unix
    /// seconds), with its first key: what `headers --sign` puts in the URL.
    pub fn sign_policy(&self, authority: &str, csp: &str, expires: u64) -> Result<String, String> {
        let signing = self.signing_for(authority)?;
        Ok(signing.keys.sign(&signing.sandbox, expires, csp))
    }

    /// What the host entry serving `authority` makes of `query`'s signature, as a page
    /// requested now would be served.
    pub fn verify_policy(&self, authority: &str, query: &str) -> PolicyVerdict {
        let Ok(signing) = self.signing_for(authority) else {
            return PolicyVerdict::Unsigned;
        };
        match signing.keys.verify(&signing.sandbox, query, unix_now()) {
            Ok(None) => PolicyVerdict::NothingDeclared,
            Ok(Some(signed)) => PolicyVerdict::Signed {
                expires: signed.expires,
            },
            Err(refused) => PolicyVerdict::Refused(refused.to_string()),
        }
    }

    fn signing_for(&self, authority: &str) -> Result<&Signing, String> {
        let index = self
            .route(authority)
            .ok_or_else(|| format!("no host entry serves {authority:?}"))?;
        self.hosts[index].signing.as_ref().ok_or_else(|| {
            format!(
                "the host entry serving {authority:?} does not sign its policies (no policy_keys)"
            )
        })
    }

    fn route(&self, authority: &str) -> Option<usize> {
        let key = route_key(authority, self.default_port);
        self.names.lookup(&key).copied()
    }

    /// The host entries a TLS server name belongs to, by the same rules without a port.
    fn route_server_name(&self, name: &str) -> Option<&Vec<usize>> {
        self.server_names.lookup(&lower_case(name))
    }
}

/// `response`, with its body charged to its connection; a `503` if the connection already
/// holds as much as it may.
///
/// SECURITY: a client that never reads (an HTTP/2 client that keeps every stream's window
/// closed, an HTTP/1 client that stops reading) would otherwise make the service hold a page
/// per stream, each of them unique if every query differs: megabytes per connection.
fn charged(response: Response<Body>, unsent: &Arc<Unsent>) -> Response<Body> {
    let (parts, body) = response.into_parts();
    match body.charge_to(unsent) {
        Ok(body) => Response::from_parts(parts, body),
        Err(_) => {
            let reason = format!(
                "this connection holds {} bytes of answers its client has not read, the most it may (limits.max_unsent_bytes): read them, or use another connection",
                unsent.bytes()
            );
            let mut response = error(StatusCode::SERVICE_UNAVAILABLE, &reason);
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, RETRY_AFTER);
            response
        }
    }
}

/// The page's `Content-Security-Policy`: the view policy, and `frame-ancestors <origin>` with
/// the page's own `sandbox` policy (see `sandbox`), as two policies, each enforced on its own,
/// so the framing and sandbox rules hold whatever the view policy says. They travel in one
/// header, separated by a comma (CSP's separator between policies, and what HTTP makes of two
/// headers of one name anyway), because scanners such as testssl.sh flag a repeated
/// `Content-Security-Policy` header. No source in a view policy can hold a comma (`csp` drops
/// such entries), so the split is exact.
fn content_security_policy(view_policy: &str, origin: &Origin, sandbox: &str) -> String {
    format!("{view_policy}, frame-ancestors {origin}; {sandbox}")
}

/// What a page's answer depends on besides its coding: the page (which holds the relay, the
/// host origin and the view policy) and its `Content-Security-Policy`. Any change to either
/// gives a new tag, so a cache that revalidates never keeps a stale page. The hash is stable
/// for a given build, so replicas of one release agree behind a shared cache; a tag that
/// differs between releases costs one full answer, never a wrong one.
fn page_tag(body: &[u8], csp: &HeaderValue) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::hash::DefaultHasher::new();
    body.hash(&mut hasher);
    csp.as_bytes().hash(&mut hasher);
    hasher.finish()
}

/// Whether the client holds this very form already: `If-None-Match` names its `ETag` (weakly
/// compared, as RFC 9110 asks for this header) or is `*`.
fn is_fresh<B>(req: &Request<B>, etag: &HeaderValue) -> bool {
    let ours = etag.as_bytes();
    req.headers()
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .flat_map(|value| value.as_bytes().split(|b| *b == b','))
        .map(|tag| tag.trim_ascii())
        .any(|tag| tag == b"*" || tag.strip_prefix(b"W/").unwrap_or(tag) == ours)
}

fn page_response(
    page: &RenderedPage,
    encoded: &Encoded,
    host: &Host,
    head: bool,
    encoding: Encoding,
) -> Response<Body> {
    let body = if head {
        Bytes::new()
    } else {
        encoded.body.clone()
    };
    let body = Body::new(body).also_holding(page.csp.len());
    let mut response = Response::new(body);
    // Built once per form and cloned: a clone is two allocations, where ten inserts hash ten
    // names and grow the map twice.
    *response.headers_mut() = encoded
        .headers
        .get_or_init(|| page_headers(page, encoded, host, encoding))
        .clone();
    response
}

fn page_headers(
    page: &RenderedPage,
    encoded: &Encoded,
    host: &Host,
    encoding: Encoding,
) -> HeaderMap {
    let mut headers = HeaderMap::with_capacity(12);
    headers.insert(header::CONTENT_TYPE, HTML);
    headers.insert(header::CONTENT_LENGTH, encoded.length.clone());
    if let Some(name) = encoding.header() {
        headers.insert(header::CONTENT_ENCODING, name);
    }
    headers.insert(header::VARY, VARY_ACCEPT_ENCODING);
    headers.insert(header::CONTENT_SECURITY_POLICY, page.csp.clone());
    let cache_control = match page.signature {
        Signature::NotChecked => host.cache_control.clone(),
        Signature::Valid(_) | Signature::Refused(_) if host.cacheable => NO_CACHE,
        Signature::Valid(_) | Signature::Refused(_) => NO_STORE,
    };
    headers.insert(header::CACHE_CONTROL, cache_control);
    if host.cacheable {
        headers.insert(header::ETAG, encoded.etag.clone());
    }
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, NOSNIFF);
    headers.insert(header::REFERRER_POLICY, REFERRER_POLICY);
    headers.insert(ORIGIN_AGENT_CLUSTER, OAC_ON);
    headers
}

impl Host {
    fn new(entry: &HostEntry, metrics: &Metrics, default_port: u16) -> Self {
        let max_age = entry.cache_max_age.as_secs();
        let cache_control = if max_age == 0 {
            NO_STORE
        } else {
            let value = format!("public, max-age={max_age}");
            HeaderValue::from_str(&value).unwrap_or(NO_STORE)
        };
        Host {
            counters: metrics.host(&entry.origin.to_string()),
            origin: entry.origin.clone(),
            cacheable: max_age > 0,
            cache_control,
            opt_ins: entry.view_opt_ins.clone(),
            relay_messages: entry.relay_messages,
            view_sandbox: entry.view_sandbox.clone(),
            signing: entry.policy_keys.clone().map(|keys| Signing {
                keys,
                sandbox: entry.sandbox.authority(default_port),
            }),
        }
    }
}

fn hsts_value(max_age: Duration) -> HeaderValue {
    let value = format!("max-age={}", max_age.as_secs());
    HeaderValue::from_str(&value).expect("max-age=<digits> is visible ASCII")
}

/// HTTP/2 carries `:authority` in the URI; HTTP/1 carries `Host` (or an absolute-form URI,
/// which then takes precedence, as RFC 9112 says).
fn request_authority<B>(req: &Request<B>) -> Option<&str> {
    if let Some(authority) = req.uri().authority() {
        return Some(authority.as_str());
    }
    // Two `Host` headers name none: RFC 9112 asks for a 400, and a proxy in front might route
    // by the other one.
    let mut hosts = req.headers().get_all(header::HOST).iter();
    let host = hosts.next()?;
    if hosts.next().is_some() {
        return None;
    }
    host.to_str().ok()
}

/// Bytes of the request's header fields as a client wrote them (`name: value` and a line
/// ending), cookies not counted: they are limited apart (see `io::head`). Pseudo-headers of
/// HTTP/2 are not fields here; `:path` is limited with the query.
fn field_bytes<B>(req: &Request<B>) -> usize {
    req.headers()
        .iter()
        .filter(|(name, _)| *name != header::COOKIE)
        .map(|(name, value)| name.as_str().len() + value.len() + 4)
        .sum()
}

/// The origin framing this page request, when it is not the one the page is pinned to: the
/// browser will refuse the frame (`frame-ancestors`), and the host developer sees only a blank
/// frame. Fetch metadata says the page is being framed (`Sec-Fetch-Dest: iframe`), and the
/// `Referer`, which browsers cut to the framing page's origin across origins, names the framer.
/// A request without either says nothing, and a same-origin one is the relay reloading itself.
fn foreign_framer<B>(req: &Request<B>, embedder: &str) -> Option<String> {
    let headers = req.headers();
    let destination = headers.get("sec-fetch-dest")?.as_bytes();
    if destination != b"iframe" && destination != b"frame" {
        return None;
    }
    if headers
        .get("sec-fetch-site")
        .is_some_and(|site| site.as_bytes() == b"same-origin")
    {
        return None;
    }
    let referer = headers.get(header::REFERER)?.to_str().ok()?;
    let framer = url::Url::parse(referer).ok()?.origin();
    if !framer.is_tuple() {
        return None;
    }
    let framer = framer.ascii_serialization();
    (framer != embedder).then_some(framer)
}

fn log_embedder_mismatch(host: &Host, embedder: &str, framer: &str) {
    if !EMBEDDER_LOG_BUDGET.allow() {
        return;
    }
    let suppressed = EMBEDDER_LOG_BUDGET.take_suppressed();
    // SECURITY: the Referer is the client's to write; it is logged as a value, escaped by the
    // log format, and never reaches an answer.
    tracing::warn!(
        host = %host.origin,
        configured = embedder,
        framed_by = framer,
        suppressed,
        "a page was framed by an origin this sandbox does not serve: the browser refuses the frame (frame-ancestors), and the host page shows it blank"
    );
}

/// Whether the relay asked for this page: it reloads its own page once, marked so, when a
/// resource declares domains that the served policy lacks.
fn is_policy_upgrade(query: &str) -> bool {
    url::form_urlencoded::parse(query.as_bytes())
        .any(|(key, value)| key == UPGRADE_PARAMETER && value == "1")
}

/// The query parameter that marks a page the relay asked for again (see `is_policy_upgrade`).
pub const UPGRADE_PARAMETER: &str = "upgrade";

fn log_dropped(host: &Host, dropped: &[Dropped]) {
    if dropped.is_empty() {
        return;
    }
    host.counters.count_dropped(dropped.len());
    if !DROPPED_LOG_BUDGET.allow() {
        return;
    }
    let suppressed = DROPPED_LOG_BUDGET.take_suppressed();
    if suppressed > 0 {
        tracing::warn!(
            suppressed,
            "dropped-CSP-source lines were suppressed by the log rate limit"
        );
    }
    for dropped in dropped.iter().take(MAX_DROPPED_LOGGED) {
        tracing::warn!(
            host = %host.origin,
            list = dropped.list.key(),
            entry = ?dropped.entry,
            reason = %dropped.reason,
            "dropped CSP source"
        );
    }
    if dropped.len() > MAX_DROPPED_LOGGED {
        tracing::warn!(
            host = %host.origin,
            more = dropped.len() - MAX_DROPPED_LOGGED,
            "dropped more CSP sources than are logged one by one"
        );
    }
}

/// The origin a page is pinned to. A host entry with one origin: that one (an `embedder`
/// parameter, if any, must name it). A pattern of origins: the `embedder` parameter, which must
/// be one of them, so that a page rendered for one preview can only ever be framed by it.
fn embedder_for<'e>(embedder: &'e Embedder, query: &str) -> Result<Cow<'e, Origin>, String> {
    let named = url::form_urlencoded::parse(query.as_bytes())
        .find(|(key, _)| key == EMBEDDER_PARAMETER)
        .map(|(_, value)| value.into_owned());
    let parse = |raw: &str| {
        raw.parse::<Origin>()
            .map_err(|e| format!("?{EMBEDDER_PARAMETER}={raw:?} is not an origin: {e}"))
    };
    match (embedder, named) {
        (Embedder::Exact(origin), None) => Ok(Cow::Borrowed(origin)),
        (Embedder::Exact(origin), Some(raw)) => {
            if parse(&raw)? == *origin {
                Ok(Cow::Borrowed(origin))
            } else {
                Err(format!(
                    "?{EMBEDDER_PARAMETER}={raw:?} is not this sandbox's host: it serves {origin}"
                ))
            }
        }
        (Embedder::Pattern(pattern), None) => Err(format!(
            "this sandbox serves the host origins {pattern}: name the page's own origin in ?{EMBEDDER_PARAMETER}="
        )),
        (Embedder::Pattern(pattern), Some(raw)) => {
            let origin = parse(&raw)?;
            if pattern.matches(&origin) {
                Ok(Cow::Owned(origin))
            } else {
                Err(format!(
                    "?{EMBEDDER_PARAMETER}={raw:?} is not one of this sandbox's host origins {pattern}"
                ))
            }
        }
    }
}

/// The query parameter naming the host page's exact origin (for a host entry with a pattern).
pub const EMBEDDER_PARAMETER: &str = "embedder";

fn refused_query(e: &QueryError) -> String {
    tracing::debug!(reason = %e, "refused ?csp=");
    e.to_string()
}

fn error(status: StatusCode, reason: &str) -> Response<Body> {
    let body = format!(
        "{} {}: {reason}\n",
        status.as_u16(),
        status.canonical_reason().unwrap_or("")
    );
    let length = HeaderValue::from(body.len());
    let mut response = Response::new(Body::new(Bytes::from(body)));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, TEXT);
    headers.insert(header::CONTENT_LENGTH, length);
    headers.insert(header::CONTENT_SECURITY_POLICY, ERROR_CSP);
    headers.insert(header::CACHE_CONTROL, NO_STORE);
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, NOSNIFF);
    response
}
