//! The command line: `serve`, `check` and `headers`, every `serve` flag also an env var.

use std::future::Future;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use http::{Request, header};

use crate::config::{Config, HostEntry, Loaded, OpaqueViewStorage, RelayMessages, ViewPolicyOwner};
use crate::sandbox::ViewSandbox;
use crate::server::Server;
use crate::service::{PolicyVerdict, Service};
use crate::telemetry::LogFormat;
use crate::tls;

#[derive(Debug, Parser)]
#[command(name = "mcp-sandbox-proxy", version = crate::VERSION, about = "The sandbox-proxy origin for MCP Apps views.", long_about = None)]
/// The command line: a command and the options every command takes.
pub struct Cli {
    /// Log lines as text or JSON (filter with RUST_LOG, default info).
    #[arg(
        long,
        value_enum,
        default_value_t,
        env = "MCP_SANDBOX_PROXY_LOG_FORMAT",
        global = true
    )]
    pub log_format: LogFormat,

    /// What to do; without one, `serve`.
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve the proxy (without --config: the embedded development default and its demo).
    Serve(ServeArgs),
    /// Validate a config file and its certificates; exit 1 with the reasons if anything is wrong.
    Check(CheckArgs),
    /// Print the exact response headers a request for NAME would get.
    Headers(HeadersArgs),
    /// Print the relay script exactly as every page of this binary carries it, for review
    /// beside proxy-page/relay/ (the names it shares with the service come first).
    Relay(RelayArgs),
    /// Print the label a server gets under a host entry with per-server subdomains, and the
    /// origin its views run on (for its API's CORS list, OAuth redirect URIs, the report table).
    Label(LabelArgs),
}

#[derive(Debug, Args)]
struct LabelArgs {
    /// The config file (TOML).
    #[arg(long, env = "MCP_SANDBOX_PROXY_CONFIG")]
    config: PathBuf,
    /// The host entry's sandbox name; needed where several entries have per-server subdomains.
    #[arg(long, value_name = "NAME")]
    sandbox: Option<String>,
    /// The server's id as the host hashes it (docs/hosts.md, serverLabel): its URL, or the
    /// name or command line of a server without one (stdio:npx -y @acme/files-mcp).
    #[arg(value_name = "SERVER")]
    server: String,
}

#[derive(Debug, Args)]
struct RelayArgs {
    /// Print instead the page config the relay reads (JSON), as the embedded default's page
    /// carries it: the one shape the service writes, the relay reads and its tests start from.
    #[arg(long)]
    page_config: bool,
}

#[derive(Debug, Args)]
struct ServeArgs {
    /// The config file (TOML). Without it, the embedded development default.
    #[arg(long, env = "MCP_SANDBOX_PROXY_CONFIG")]
    config: Option<PathBuf>,
    /// Override `listen` of the config.
    #[arg(long, env = "MCP_SANDBOX_PROXY_LISTEN")]
    listen: Option<SocketAddr>,
}

#[derive(Debug, Args)]
struct CheckArgs {
    /// The config file (TOML) to validate.
    #[arg(long, env = "MCP_SANDBOX_PROXY_CONFIG")]
    config: PathBuf,
}

#[derive(Debug, Args)]
struct HeadersArgs {
    /// The config file (TOML).
    #[arg(long, env = "MCP_SANDBOX_PROXY_CONFIG")]
    config: PathBuf,
    /// The authority of the request (a sandbox name, or <label>.<name> for per-server hosts).
    #[arg(long, value_name = "NAME", required_unless_present = "url")]
    sandbox: Option<String>,
    /// A proxy page URL as a host built it (its host is NAME, its query the request's): for a
    /// host that signs its policies, also says whether its signature verifies.
    #[arg(long, value_name = "URL", conflicts_with_all = ["sandbox", "csp", "embedder"])]
    url: Option<String>,
    /// Sign --csp with the host entry's first key (`policy_keys`) and print the signed URL.
    #[arg(long, requires = "csp")]
    sign: bool,
    /// How long the signed URL stays valid, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 600, requires = "sign")]
    expires_in: u64,
    /// The `?csp=` JSON the host would send, e.g. '{"connectDomains":["https://api.example.com"]}'.
    #[arg(long, value_name = "JSON")]
    csp: Option<String>,
    /// The host page's exact origin, as `?embedder=`: needed for a host entry whose `origin` is
    /// a pattern (https://*.preview.example.com).
    #[arg(long, value_name = "ORIGIN")]
    embedder: Option<String>,
}

/// `serve` with only environment variables, for a bare `mcp-sandbox-proxy`.
#[derive(Debug, Parser)]
struct ServeFromEnv {
    #[command(flatten)]
    args: ServeArgs,
}

impl Cli {
    /// Runs the chosen command to completion.
    pub async fn run(self) -> ExitCode {
        let command = self.command.unwrap_or_else(|| {
            Command::Serve(ServeFromEnv::parse_from(["mcp-sandbox-proxy"]).args)
        });
        match command {
            Command::Serve(args) => serve(args).await,
            Command::Check(args) => check(&args.config),
            Command::Headers(args) => headers(&args),
            Command::Label(args) => label(&args),
            Command::Relay(args) if args.page_config => print_page_config(),
            Command::Relay(_) => {
                print!("{}", crate::page::RELAY_JS);
                ExitCode::SUCCESS
            }
        }
    }
}

/// The page config of the embedded default's page, as `serve` would send it.
fn print_page_config() -> ExitCode {
    let Ok(loaded) = load(None) else {
        return ExitCode::FAILURE;
    };
    let Some(host) = loaded.config.hosts.first() else {
        eprintln!("error: the embedded default has no host entry");
        return ExitCode::FAILURE;
    };
    let authority = host
        .sandbox
        .authority(crate::config::default_port(loaded.config.tls.is_some()));
    let request = http::Request::get("/")
        .header(http::header::HOST, authority.as_str())
        .body(());
    let Ok(request) = request else {
        eprintln!("error: the embedded default's sandbox name is no Host: {authority}");
        return ExitCode::FAILURE;
    };
    let page = Service::new(&loaded.config)
        .handle(&request)
        .into_body()
        .into_bytes();
    match crate::page::PageTemplate::new().config_of(&page) {
        Some(config) => {
            println!("{}", String::from_utf8_lossy(config));
            ExitCode::SUCCESS
        }
        None => {
            eprintln!("error: the embedded default's page was not served");
            ExitCode::FAILURE
        }
    }
}

/// `label`: the server's label and its views' origin, a line each.
fn label(args: &LabelArgs) -> ExitCode {
    let Ok(loaded) = load(Some(&args.config)) else {
        return ExitCode::FAILURE;
    };
    let service = Service::new(&loaded.config);
    match service.view_origin(args.sandbox.as_deref(), &args.server) {
        Ok(view) => {
            println!("label: {}", view.label);
            println!("origin: {}", view.origin);
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn load(path: Option<&Path>) -> Result<Loaded, ExitCode> {
    let loaded = match path {
        Some(path) => Config::load(path),
        None => Config::embedded_default(),
    };
    match loaded {
        Ok(loaded) => Ok(loaded),
        Err(e) => {
            for problem in &e.problems {
                eprintln!("error: {problem}");
            }
            Err(ExitCode::FAILURE)
        }
    }
}

async fn serve(args: ServeArgs) -> ExitCode {
    // Taken before the config is read: a file that changes while it loads is reloaded then.
    let watched = crate::reload::Watched::before_loading(args.config.clone());
    let Ok(Loaded {
        mut config,
        warnings,
    }) = load(args.config.as_deref())
    else {
        return ExitCode::FAILURE;
    };
    crate::telemetry::config_warnings(&warnings);
    if let Some(listen) = args.listen {
        config.listen = listen;
    }
    let shutdown = shutdown_signal();
    let server =
        match Server::bind_watched(config.clone(), args.config.clone(), Some(watched)).await {
            Ok(server) => server,
            Err(e) => {
                tracing::error!(error = %e, "not started");
                return ExitCode::FAILURE;
            }
        };
    announce(&config, &server);
    server.run(shutdown).await;
    ExitCode::SUCCESS
}

/// How many hosts the start-up summary lists one by one. A platform with one entry per tenant
/// would otherwise log a line for each of 100 000 tenants at every start.
const ANNOUNCED_HOSTS: usize = 100;

/// The start-up summary: listeners, hosts, and anything an operator must not miss.
fn announce(config: &Config, server: &Server) {
    let scheme = if config.tls.is_some() {
        "https"
    } else {
        "http"
    };
    tracing::info!(
        version = crate::VERSION,
        listen = %server.public_addr(),
        admin = server.admin_addr().map(|a| a.to_string()),
        tls = config.tls.is_some(),
        hosts = config.hosts.len(),
        "listening"
    );
    for host in config.hosts.iter().take(ANNOUNCED_HOSTS) {
        tracing::info!(
            origin = %host.origin,
            sandbox = %host.sandbox,
            per_server_subdomains = host.per_server_subdomains,
            view_opt_ins = %host.view_opt_ins.names(),
            relay_messages = host.relay_messages.name(),
            "host"
        );
    }
    if let Some(more) = config.hosts.len().checked_sub(ANNOUNCED_HOSTS)
        && more > 0
    {
        tracing::info!(
            more,
            "more hosts, not listed: `check` validates them all, and /metrics counts requests per host"
        );
    }
    if config.tls.is_none() && !server.public_addr().ip().is_loopback() {
        tracing::warn!(
            listen = %server.public_addr(),
            "serving plain HTTP on a non-loopback address: put a TLS-terminating load balancer in front, or add a [tls] table"
        );
    }
    if let (Some(demo), Some(host)) = (server.demo_addr(), config.hosts.first()) {
        tracing::info!(
            proxy = %format!("{scheme}://{}/sandbox.html", host.sandbox),
            demo = %format!("http://localhost:{}/", demo.port()),
            "development default: a demo host page embeds a sample view through the proxy; give --config for anything else"
        );
    }
}

/// Registers SIGTERM and SIGINT at once, so that one arriving while the server starts begins
/// the drain instead of killing the process; the future resolves at the first of them.
#[cfg(unix)]
fn shutdown_signal() -> impl Future<Output = ()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate());
    let mut interrupt = signal(SignalKind::interrupt());
    async move {
        match (&mut term, &mut interrupt) {
            (Ok(term), Ok(interrupt)) => {
                tokio::select! {
                    _ = term.recv() => {},
                    _ = interrupt.recv() => {},
                }
            }
            (Ok(only), Err(_)) | (Err(_), Ok(only)) => {
                only.recv().await;
            }
            (Err(e), Err(_)) => {
                tracing::warn!(error = %e, "SIGTERM and SIGINT cannot be watched: stop by killing");
                std::future::pending::<()>().await;
            }
        }
    }
}

#[cfg(not(unix))]
fn shutdown_signal() -> impl Future<Output = ()> {
    async {
        let _ = tokio::signal::ctrl_c().await;
    }
}

fn check(path: &Path) -> ExitCode {
    let Ok(Loaded { config, warnings }) = load(Some(path)) else {
        return ExitCode::FAILURE;
    };
    for warning in &warnings {
        println!("warning: {warning}");
    }
    print_review(&config);
    if let Some(files) = config.served_tls() {
        let mut ordered = Vec::new();
        if let Some(acme) = &config.acme {
            ordered.extend(acme.names.iter().map(|name| name.as_str()));
            match crate::acme::plan(acme) {
                Ok(lines) => lines.iter().for_each(|line| println!("{line}")),
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::FAILURE;
                }
            }
        }
        let resolver = match tls::load_all(&files, &tls::provider()) {
            Ok(resolver) => resolver,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        };
        let now = i64::try_from(crate::signing::unix_now()).unwrap_or(i64::MAX);
        let report = resolver.report(&config.hosts, &ordered, now);
        for warning in &report.warnings {
            println!("warning: {warning}");
        }
        if !report.errors.is_empty() {
            for error in &report.errors {
                eprintln!("error: {error}");
            }
            return ExitCode::FAILURE;
        }
    }
    let tenant_files = match &config.hosts_dir {
        Some(dir) => {
            let files = crate::config::tenant_files(dir).map_or(0, |files| files.len());
            format!(" ({files} tenant file(s) in {})", dir.display())
        }
        None => String::new(),
    };
    println!(
        "ok: {} — {} host(s){tenant_files}, listen {}{}",
        path.display(),
        config.hosts.len(),
        config.listen,
        if config.tls.is_some() {
            ", TLS"
        } else {
            ", plain HTTP"
        }
    );
    ExitCode::SUCCESS
}

/// What a security reviewer reads in `check` rather than in the files only: what widens a
/// host's view policies, what its views may do in their frames, and whose policies are signed.
/// One kind of line after another, each for every host it applies to.
fn print_review(config: &Config) {
    let review: [fn(&HostEntry) -> Option<String>; 8] = [
        |host| {
            (!host.view_opt_ins.is_empty()).then(|| {
                format!(
                    "opt-in: views of {} also get {}",
                    host.origin,
                    host.view_opt_ins.describe()
                )
            })
        },
        |host| {
            (!host.view_features.is_empty()).then(|| {
                let granted: Vec<&str> = host.view_features.names().collect();
                format!(
                    "opt-in: views of {} may use {} where the host delegates it (view_features)",
                    host.origin,
                    granted.join(", ")
                )
            })
        },
        |host| {
            (host.opaque_view_storage == OpaqueViewStorage::Memory).then(|| {
                format!(
                    "opt-in: opaque views of {} get localStorage and sessionStorage in their own memory (opaque_view_storage = \"memory\")",
                    host.origin
                )
            })
        },
        |host| {
            (host.relay_messages == RelayMessages::Any).then(|| {
                format!(
                    "opt-in: views of {} exchange any message with the host, not only JSON-RPC (relay_messages = \"any\")",
                    host.origin
                )
            })
        },
        |host| {
            (host.view_policy == ViewPolicyOwner::Host).then(|| {
                format!(
                    "opt-in: views of {} run under the policy the host writes into their HTML; the page's header holds only frame-ancestors, sandbox and object-src 'none' (view_policy = \"host\")",
                    host.origin
                )
            })
        },
        |host| {
            (host.view_sandbox != ViewSandbox::default()).then(|| {
                format!(
                    "sandbox: views of {} get at most \"{}\" (view_sandbox)",
                    host.origin, host.view_sandbox
                )
            })
        },
        |host| {
            host.view_sandbox_default.as_ref().map(|default| {
                format!(
                    "sandbox: views of {} get \"{default}\" when the host asks for no tokens (view_sandbox_default)",
                    host.origin
                )
            })
        },
        |host| {
            host.policy_keys.as_ref().map(|keys| {
                format!(
                    "signed: views of {} get more than the spec's default policy only from a URL the host signed ({} key(s), policy_keys)",
                    host.origin,
                    keys.len()
                )
            })
        },
    ];
    for line_of in review {
        for line in config.hosts.iter().filter_map(line_of) {
            println!("{line}");
        }
    }
}

fn headers(args: &HeadersArgs) -> ExitCode {
    let Ok(Loaded { config, .. }) = load(Some(&args.config)) else {
        return ExitCode::FAILURE;
    };
    let service = Service::new(&config);
    let target = match request_target(args, &service) {
        Ok(target) => target,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    if args.sign {
        let scheme = if config.tls.is_some() {
            "https"
        } else {
            "http"
        };
        println!(
            "url: {scheme}://{}/sandbox.html?{}",
            target.authority, target.query
        );
    }
    let uri = if target.query.is_empty() {
        target.path.clone()
    } else {
        format!("{}?{}", target.path, target.query)
    };
    let request = Request::get(uri)
        .header(header::HOST, &target.authority)
        .body(());
    let request = match request {
        Ok(request) => request,
        Err(e) => {
            eprintln!(
                "error: {:?} is not a valid authority: {e}",
                target.authority
            );
            return ExitCode::FAILURE;
        }
    };
    let response = service.handle(&request);
    println!("{:?} {}", response.version(), response.status());
    for (name, value) in response.headers() {
        println!("{name}: {}", String::from_utf8_lossy(value.as_bytes()));
    }
    if !response.status().is_success() {
        return ExitCode::FAILURE;
    }
    signature_verdict(&service, &target)
}

/// The authority, path and raw query `headers` asks with.
struct Target {
    authority: String,
    /// The URL's path with `--url` (a host entry's `page_paths`), `/` otherwise.
    path: String,
    query: String,
}

fn request_target(args: &HeadersArgs, service: &Service) -> Result<Target, String> {
    if let Some(raw) = &args.url {
        let url = url::Url::parse(raw).map_err(|e| format!("--url {raw:?} is not a URL: {e}"))?;
        let host = url.host_str().unwrap_or_default();
        let authority = match url.port() {
            Some(port) => format!("{host}:{port}"),
            None => host.to_owned(),
        };
        let query = url.query().unwrap_or_default().to_owned();
        let path = url.path().to_owned();
        return Ok(Target {
            authority,
            path,
            query,
        });
    }
    // clap requires --sandbox without --url.
    let authority = args.sandbox.clone().unwrap_or_default();
    let mut query = url::form_urlencoded::Serializer::new(String::new());
    if let Some(embedder) = &args.embedder {
        query.append_pair(crate::page_query::EMBEDDER_PARAMETER, embedder);
    }
    if let Some(csp) = &args.csp {
        query.append_pair(crate::page_query::CSP_PARAMETER, csp);
        if args.sign {
            let expires = crate::signing::unix_now().saturating_add(args.expires_in);
            let signature = service
                .sign_policy(&authority, csp, expires)
                .map_err(|no_signer| no_signer.to_string())?;
            query.append_pair(crate::page_query::EXPIRES_PARAMETER, &expires.to_string());
            query.append_pair(crate::page_query::SIGNATURE_PARAMETER, &signature);
        }
    }
    Ok(Target {
        authority,
        path: "/".to_owned(),
        query: query.finish(),
    })
}

/// For a host that signs its policies, whether the request's `?csp=` verified: a page that got
/// the spec's default policy instead is an error, with the reason the relay would give.
fn signature_verdict(service: &Service, target: &Target) -> ExitCode {
    match service.verify_policy(&target.authority, &target.query) {
        PolicyVerdict::Unsigned | PolicyVerdict::NothingDeclared => ExitCode::SUCCESS,
        PolicyVerdict::Signed { expires } => {
            let left = expires.saturating_sub(crate::signing::unix_now());
            println!("policy: signed, valid for {left} s more");
            ExitCode::SUCCESS
        }
        PolicyVerdict::Refused(reason) => {
            eprintln!("error: the page gets the spec's default policy, not its ?csp=: {reason}");
            ExitCode::FAILURE
        }
        PolicyVerdict::Unreadable(reason) => {
            eprintln!("error: the page's query cannot be read: {reason}");
            ExitCode::FAILURE
        }
    }
}
