//! Request in, response out: routing by authority (and the SNI rule), then the page or an
//! error answer. One way through for a page: `page_cache`, or the query read once
//! (`page_query`), its view policy decided (`policy`), the page built (`render`) and kept
//! (`page_cache`); every answer's headers are written by `headers`; what is logged about
//! requests, by `logs`.
//!
//! No sockets here. `serve` and the `headers` command both call [`Service::handle`], so what
//! `headers` prints is what `serve` sends.

mod headers;
mod logs;
mod page_cache;
mod policy;
mod render;
mod reports;

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use http::header::{self, HeaderValue};
use http::{Method, Request, Response, StatusCode};

use crate::body::{Body, Unsent};
use crate::compress::Encoding;
use crate::config::{Config, HostEntry, RelayMessages, ViewPolicyOwner};
use crate::csp::OptIns;
use crate::embedders::Embedders;
use crate::limits::{MAX_FIELDS, REFUSAL_FIELD, REQUEST_LINE_SLACK, Refusal};
use crate::metrics::{HostCounters, Metrics};
use crate::origin::{Embedder, split_host_port};
use crate::page::PageTemplate;
use crate::page_paths::PagePaths;
use crate::page_query::PageQuery;
use crate::reports::Intake;
use crate::routing::{Routes, lower_case, route_key};
use crate::sandbox::ViewSandbox;
use crate::signing::unix_now;

use headers::{
    ALLOW_GET_HEAD, CLEAR_COOKIES, CLEAR_SITE_DATA, NO_STORE, RETRY_AFTER, error, is_fresh,
    page_response,
};
use logs::{foreign_framer, log_dropped, log_embedder_mismatch};
use page_cache::{PageCache, RenderedPage};
use policy::{Signature, Signing};
use render::PageError;

pub use policy::PolicyVerdict;

pub(crate) use headers::plain_text;

/// One host entry, with what its responses need built once.
#[derive(Debug)]
struct Entry {
    origin: Embedders,
    counters: Arc<HostCounters>,
    /// `no-store`, or `public, max-age=N` when the host's pages may be cached.
    cache_control: HeaderValue,
    cacheable: bool,
    /// What the operator adds to every view policy of this host.
    opt_ins: OptIns,
    relay_messages: RelayMessages,
    /// The tokens this host's views may get, and so the page's own `sandbox` policy.
    view_sandbox: ViewSandbox,
    /// The tokens a view gets when the host asks for none, if the operator chose them.
    view_sandbox_default: Option<ViewSandbox>,
    /// For a host that signs its policies: its keys, and the name its signatures cover.
    signing: Option<Signing>,
    /// The paths the page answers on.
    page_paths: PagePaths,
    /// The host writes its views' policies itself: the header carries none (`view_policy`).
    host_policy: bool,
    /// The entry's name in the metrics and the report table (its origin).
    name: Arc<str>,
    /// The sandbox name as routed (lower case, the default port left out).
    sandbox: Box<str>,
    /// Whether the page's policies name the report endpoint (`csp_reports`).
    reports: bool,
    /// `https` or `http`: how browsers reach this sandbox, for the report endpoint's URL.
    report_scheme: &'static str,
}

/// A request turned away: the host entry it was for, if any, and its answer. As large as any
/// answer, and returned once per request, as a ready answer is (so not boxed).
type Turned<'e> = (Option<&'e Entry>, Response<Body>);

/// What the connection a request arrived on says about it.
#[derive(Clone, Copy, Debug)]
pub enum Transport<'a> {
    /// Plain TCP, or no connection at all (the `headers` command): no server name to check.
    Plain,
    /// TLS, with the server name (SNI) the client asked for, if it sent one.
    Tls {
        /// The name the handshake asked for (SNI), if any.
        server_name: Option<&'a str>,
    },
}

/// The request handler for the public listener, built once per config.
#[derive(Debug)]
pub struct Service {
    entries: Vec<Entry>,
    /// Authority → entry index.
    names: Routes<usize>,
    /// TLS server name (a hostname without port) → entry indices, for the SNI/authority rule.
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
    /// Shared by every generation: the report table, rates and refusals.
    reports: Arc<Intake>,
    /// How long a report's body may take to arrive.
    report_read_timeout: Duration,
}

impl Service {
    /// A service with metrics of its own (the `headers` command, tests).
    pub fn new(config: &Config) -> Self {
        Self::with_metrics(config, &Metrics::new())
    }

    /// A service that counts into `metrics`, which outlive reloads.
    pub fn with_metrics(config: &Config, metrics: &Metrics) -> Self {
        let default_port = crate::config::default_port(config.tls.is_some());
        let mut entries = Vec::with_capacity(config.hosts.len());
        let mut names = Routes::default();
        let mut server_names = Routes::<Vec<usize>>::default();
        for (index, entry) in config.hosts.iter().enumerate() {
            entries.push(Entry::new(
                entry,
                metrics,
                config.tls.is_some(),
                default_port,
            ));
            let per_server = entry.per_server_subdomains;
            let authority = entry.sandbox.authority(default_port);
            names.add(&authority, per_server, |slot| *slot = index);
            server_names.add(entry.sandbox.hostname(), per_server, |slot| {
                slot.push(index)
            });
        }
        let hsts = config
            .tls
            .as_ref()
            .filter(|tls| !tls.hsts_max_age.is_zero())
            .map(|tls| hsts_value(tls.hsts_max_age));
        Service {
            entries,
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
            reports: metrics.reports(),
            report_read_timeout: config.limits.header_read_timeout,
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
        let (entry, response) = match self.route_request(req, transport) {
            Ok((index, authority)) => (
                Some(&self.entries[index]),
                self.answer_entry(req, index, authority),
            ),
            Err(refused) => refused,
        };
        self.finish(
            entry,
            req.headers().contains_key(header::COOKIE),
            response,
            unsent,
        )
    }

    /// What every answer gets: charged to its connection, counted, HSTS, and cookies cleared.
    fn finish(
        &self,
        entry: Option<&Entry>,
        had_cookies: bool,
        response: Response<Body>,
        unsent: Option<&Arc<Unsent>>,
    ) -> Response<Body> {
        let mut response = match unsent {
            Some(unsent) => charged(response, unsent),
            None => response,
        };
        let counters = entry.map_or(&self.unmatched, |e| &e.counters);
        counters.count_response(response.status());
        let headers = response.headers_mut();
        if let Some(hsts) = &self.hsts {
            headers.insert(header::STRICT_TRANSPORT_SECURITY, hsts.clone());
        }
        // SECURITY: this service sets no cookie, so any a request carries were set by a view
        // for the sandbox name (or its parent), where every other MCP server's view can read
        // them and a flood of them can cost views their pages. Each answer clears them.
        if had_cookies {
            headers.insert(CLEAR_SITE_DATA, CLEAR_COOKIES);
            // An answer that clears one client's cookies is that client's alone: no cache may
            // keep it and replay it to others.
            headers.insert(header::CACHE_CONTROL, NO_STORE);
            headers.remove(header::ETAG);
        }
        response
    }

    /// The host entry a request is for, and its authority; or the answer that refuses it.
    #[allow(clippy::result_large_err)]
    fn route_request<'r, B>(
        &self,
        req: &'r Request<B>,
        transport: Transport<'_>,
    ) -> Result<(usize, &'r str), Turned<'_>> {
        if let Some(refusal) = req.headers().get(REFUSAL_FIELD) {
            let refusal = Refusal::from_token(refusal.as_bytes()).unwrap_or(Refusal::Malformed);
            return Err((None, self.refused(refusal)));
        }
        if field_bytes(req) > self.max_header_bytes {
            return Err((None, self.refused(Refusal::FieldsTooLarge)));
        }
        let Some(authority) = request_authority(req) else {
            let response = error(
                StatusCode::BAD_REQUEST,
                "the request names no host, or more than one (Host or :authority)",
            );
            return Err((None, response));
        };
        let Some(index) = self.route(authority) else {
            let reason = format!(
                "this proxy serves no sandbox named \"{}\"",
                authority.escape_debug()
            );
            return Err((None, error(StatusCode::MISDIRECTED_REQUEST, &reason)));
        };
        let entry = &self.entries[index];
        if let Transport::Tls { server_name } = transport
            && self.tls
            && let Err(reason) = self.check_server_name(server_name, authority, index)
        {
            return Err((Some(entry), error(StatusCode::MISDIRECTED_REQUEST, &reason)));
        }
        Ok((index, authority))
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
            let hostname = split_host_port(authority).map_or(authority, |(hostname, _)| hostname);
            return match hostname
                .trim_matches(['[', ']'])
                .parse::<std::net::IpAddr>()
            {
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
                "a request to this service carries no body, but a CSP report's (POST /csp-report, with Content-Length)".to_owned(),
            ),
            Refusal::ReportTooLarge => {
                self.reports.count_refused(crate::reports::Refused::TooLarge);
                (
                    StatusCode::PAYLOAD_TOO_LARGE,
                    crate::reports::Refused::TooLarge.to_string(),
                )
            }
        };
        error(status, &reason)
    }

    fn answer_entry<B>(&self, req: &Request<B>, index: usize, authority: &str) -> Response<Body> {
        let entry = &self.entries[index];
        if !entry.page_paths.contains(req.uri().path()) {
            let reason = format!("not found: the proxy page is at {}", entry.page_paths);
            return error(StatusCode::NOT_FOUND, &reason);
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
        let served_as = route_key(authority, self.default_port);
        let page = match self.rendered(index, &served_as, req.uri().query().unwrap_or("")) {
            Ok(page) => page,
            Err(refused) => {
                tracing::debug!(reason = %refused, "refused a page's query");
                return error(StatusCode::BAD_REQUEST, &refused.to_string());
            }
        };
        log_dropped(entry, &page.dropped);
        if let Some(framer) = foreign_framer(req, &page.embedder) {
            entry.counters.count_embedder_mismatch();
            log_embedder_mismatch(entry, &page.embedder, &framer);
        }
        if matches!(page.signature, Signature::Refused(_)) {
            entry.counters.count_refused_signature();
        }
        if page.policy_upgrade {
            entry.counters.count_policy_upgrade();
        }
        let encoding = Encoding::accepted_by(req);
        let encoded = page.encoded(encoding);
        let fresh = entry.cacheable && is_fresh(req, &encoded.etag);
        let mut response = page_response(&page, encoded, entry, head || fresh, encoding);
        if fresh {
            *response.status_mut() = StatusCode::NOT_MODIFIED;
            response.headers_mut().remove(header::CONTENT_LENGTH);
        }
        response
    }

    /// The page for entry `index` served as `served_as` (its route key) for a raw query, from
    /// the cache or built and cached. The query is read only for a page not in the cache.
    fn rendered(
        &self,
        index: usize,
        served_as: &str,
        raw_query: &str,
    ) -> Result<Arc<RenderedPage>, PageError> {
        let now = unix_now();
        let entry = &self.entries[index];
        // A signature's verdict and the report endpoint's URL depend on the name served, so
        // such a host's pages are kept per name; every other host's are shared by its names.
        let cache_key = if entry.signing.is_some() || entry.reports {
            Cow::Owned(format!("{served_as}\n{raw_query}"))
        } else {
            Cow::Borrowed(raw_query)
        };
        if let Some(page) = self.pages.get(index, &cache_key)
            && page.is_valid_at(now)
        {
            return Ok(page);
        }
        let query = PageQuery::parse(raw_query, self.max_query_bytes)?;
        let page = render::render(
            &self.page,
            entry,
            served_as,
            &query,
            now,
            self.max_query_bytes,
        )?;
        let page = Arc::new(page);
        self.pages.insert(index, &cache_key, &page);
        Ok(page)
    }

    /// The signature the host entry serving `authority` gives `csp` until `expires` (Unix
    /// seconds), with its first key: what `headers --sign` puts in the URL.
    pub fn sign_policy(&self, authority: &str, csp: &str, expires: u64) -> Result<String, String> {
        let signing = self.signing_for(authority)?;
        let served_as = route_key(authority, self.default_port);
        Ok(signing.keys.sign(&served_as, expires, csp))
    }

    /// What the host entry serving `authority` makes of a raw query's signature, as a page
    /// requested now would be served.
    pub fn verify_policy(&self, authority: &str, raw_query: &str) -> PolicyVerdict {
        let Ok(signing) = self.signing_for(authority) else {
            return PolicyVerdict::Unsigned;
        };
        match PageQuery::parse(raw_query, self.max_query_bytes) {
            Ok(query) => {
                let served_as = route_key(authority, self.default_port);
                signing.verdict(&served_as, &query, unix_now())
            }
            Err(unreadable) => PolicyVerdict::Unreadable(unreadable),
        }
    }

    fn signing_for(&self, authority: &str) -> Result<&Signing, String> {
        let index = self
            .route(authority)
            .ok_or_else(|| format!("no host entry serves {authority:?}"))?;
        self.entries[index].signing.as_ref().ok_or_else(|| {
            format!(
                "the host entry serving {authority:?} does not sign its policies (no policy_keys)"
            )
        })
    }

    /// The host entry for an authority: an exact sandbox name, or one label below a name
    /// whose host serves per-server subdomains.
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

impl Entry {
    fn new(entry: &HostEntry, metrics: &Metrics, tls: bool, default_port: u16) -> Self {
        let max_age = entry.cache_max_age.as_secs();
        let cache_control = if max_age == 0 {
            NO_STORE
        } else {
            let value = format!("public, max-age={max_age}");
            HeaderValue::from_str(&value).unwrap_or(NO_STORE)
        };
        let name = entry.origin.to_string();
        // An https host page cannot frame an http sandbox (mixed content), so without [tls]
        // a sandbox of an https host is reached through a front end that terminates TLS.
        let https = tls || entry.origin.iter().any(Embedder::is_https);
        Entry {
            counters: metrics.entry(&name),
            name: Arc::from(name),
            sandbox: route_key(&entry.sandbox.authority(default_port), default_port).into(),
            reports: entry.csp_reports,
            report_scheme: if https { "https" } else { "http" },
            origin: entry.origin.clone(),
            cacheable: max_age > 0,
            cache_control,
            opt_ins: entry.view_opt_ins.clone(),
            relay_messages: entry.relay_messages,
            view_sandbox: entry.view_sandbox.clone(),
            view_sandbox_default: entry.view_sandbox_default.clone(),
            page_paths: entry.page_paths.clone(),
            host_policy: entry.view_policy == ViewPolicyOwner::Host,
            signing: entry.policy_keys.clone().map(|keys| Signing {
                keys,
                max_lifetime: entry.policy_max_lifetime.as_secs(),
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
    let field = hosts.next()?;
    if hosts.next().is_some() {
        return None;
    }
    field.to_str().ok()
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
