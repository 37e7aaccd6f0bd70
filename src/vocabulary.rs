//! The names the service and the relay both read, written once. The service's types take them
//! from here; build.rs writes them into the relay as its first part (see `relay_vocabulary` in
//! build.rs), so no name here is typed in the relay's sources.
//!
//! build.rs compiles this file too: constants only, and nothing but `core`.

/// The four domain lists a server declares in `_meta.ui.csp`, in the spec's spelling: the keys
/// of the `?csp=` JSON and of `sandbox-resource-ready`'s `csp`.
pub const DOMAIN_LISTS: [&str; 4] = [
    "connectDomains",
    "resourceDomains",
    "frameDomains",
    "baseUriDomains",
];

/// The same lists as servers written for the Apps SDK declare them (`_meta["openai/widgetCSP"]`,
/// which several hosts pass on unchanged), in [`DOMAIN_LISTS`] order; it has no `base-uri` list.
/// Read where the spec's key is absent (or `null`): given both, the spec's spelling wins.
pub const APPS_SDK_LISTS: [Option<&str>; 4] = [
    Some("connect_domains"),
    Some("resource_domains"),
    Some("frame_domains"),
    None,
];

/// The Apps SDK's list of the sites a view may send the user to without the host asking: no
/// directive of a view policy grants it, so it is read into no list, and the relay says so.
#[allow(dead_code, reason = "only the relay reads it")]
pub const APPS_SDK_REDIRECT_LIST: &str = "redirect_domains";

/// The directives of the view policy each list's sources go into, in [`DOMAIN_LISTS`] order.
/// `worker-src` is in the policy only with the `worker-blob` opt-in.
pub const LIST_DIRECTIVES: [&[&str]; 4] = [
    &["connect-src"],
    &[
        "script-src",
        "style-src",
        "img-src",
        "font-src",
        "media-src",
        "worker-src",
    ],
    &["frame-src"],
    &["base-uri"],
];

/// Each view opt-in, by its name in the config (`view_opt_ins`), with the source it adds to
/// each directive. Within a directive the sources come in this order.
pub const OPT_INS: [(&str, &[(&str, &str)]); 5] = [
    ("unsafe-eval", &[("script-src", "'unsafe-eval'")]),
    ("wasm-unsafe-eval", &[("script-src", "'wasm-unsafe-eval'")]),
    ("script-data", &[("script-src", "data:")]),
    (
        "blob-media",
        &[("img-src", "blob:"), ("media-src", "blob:")],
    ),
    ("worker-blob", &[("worker-src", "blob:")]),
];

/// The page query's parameter that carries the declared domains, as JSON.
pub const CSP_PARAMETER: &str = "csp";

/// The same, as mcp-use's inspector writes it into its sandbox URL: read where `csp` is absent.
pub const WIDGET_CSP_PARAMETER: &str = "widget_csp";

/// The page query's parameter that marks a page the relay asked for again, with the `csp` its
/// resource declared.
pub const UPGRADE_PARAMETER: &str = "upgrade";

/// The browser features an operator may grant a host's views (`view_features`): the
/// Permissions Policy features Chromium 156 knows (`document.featurePolicy.features()`) that a
/// view can use, and `web-share`, which Firefox and Safari know. Left out: the spec's four
/// permissions (each view asks for those, and its host grants them), client hints (`ch-*`), and
/// what is no view's to decide: the local network and loopback, cross-origin isolation, ad and
/// tracking APIs, `unload`. The relay denies a view each of these the entry does not grant.
pub const VIEW_FEATURES: [&str; 31] = [
    "accelerometer",
    "autoplay",
    "clipboard-read",
    "compute-pressure",
    "display-capture",
    "encrypted-media",
    "fullscreen",
    "gamepad",
    "gyroscope",
    "hid",
    "idle-detection",
    "keyboard-map",
    "language-detector",
    "local-fonts",
    "magnetometer",
    "midi",
    "otp-credentials",
    "payment",
    "picture-in-picture",
    "publickey-credentials-create",
    "publickey-credentials-get",
    "screen-wake-lock",
    "serial",
    "speaker-selection",
    "storage-access",
    "summarizer",
    "translator",
    "usb",
    "web-share",
    "window-management",
    "xr-spatial-tracking",
];
