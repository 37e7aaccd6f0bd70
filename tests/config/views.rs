//! What a host entry's views get beyond their domains: opt-ins, sandbox tokens and their default, the relay's messages, who writes the policy.

use super::*;

#[test]
fn view_opt_ins_are_off_by_default_and_only_known_names_are_taken() {
    use mcp_sandbox_proxy::{OptIn, OptIns};
    let off = parse(&host("https://chat.example.com", "chat.sandbox.test"));
    assert_eq!(off.hosts[0].view_opt_ins, OptIns::default());
    let on = parse(&format!(
        "{}view_opt_ins = [\"wasm-unsafe-eval\", \"worker-blob\", \"worker-blob\"]\n",
        host("https://chat.example.com", "chat.sandbox.test")
    ));
    assert_eq!(
        on.hosts[0].view_opt_ins,
        OptIns::new([OptIn::WorkerBlob, OptIn::WasmUnsafeEval])
    );
    for (value, message) in [
        (
            "[\"worker-blob\", \"unsafe-eval-please\"]",
            "c.toml:5: hosts[0].view_opt_ins[1] \"unsafe-eval-please\" is not a view opt-in (known: worker-blob, blob-media, wasm-unsafe-eval, unsafe-eval, script-data)",
        ),
        (
            "[1]",
            "c.toml:5: hosts[0].view_opt_ins[0] must be a string, not integer",
        ),
        (
            "\"worker-blob\"",
            "c.toml:5: hosts[0].view_opt_ins must be a list of view opt-ins, like [\"worker-blob\"], not string",
        ),
    ] {
        let text = format!(
            "{}view_opt_ins = {value}\n",
            host("https://chat.example.com", "chat.sandbox.test")
        );
        assert_eq!(errors(&text), [message], "{value}");
    }
}

#[test]
fn view_features_grant_none_by_default_and_only_known_features_beyond_the_spec_permissions() {
    let base = host("https://chat.example.com", "chat.sandbox.test");
    assert!(parse(&base).hosts[0].view_features.is_empty());
    let granted = parse(&format!(
        "{base}view_features = [\"picture-in-picture\", \"fullscreen\", \"fullscreen\"]\n"
    ));
    assert_eq!(
        granted.hosts[0].view_features.names().collect::<Vec<_>>(),
        ["fullscreen", "picture-in-picture"]
    );
    for (value, message) in [
        (
            "[\"fullscreen\", \"fulscreen\"]",
            "c.toml:5: hosts[0].view_features[1] unknown feature \"fulscreen\" — did you mean \"fullscreen\"?",
        ),
        (
            "[\"camera\"]",
            "c.toml:5: hosts[0].view_features[0] \"camera\" is one of the spec's permissions: each view asks for it (its resource's permissions) and the host grants it",
        ),
        (
            "[\"local-network-access\"]",
            "c.toml:5: hosts[0].view_features[0] unknown feature \"local-network-access\": view_features takes Permissions Policy features such as \"fullscreen\" (docs/configuration.md#view-features)",
        ),
        (
            "\"fullscreen\"",
            "c.toml:5: hosts[0].view_features must be a list of browser features, like [\"fullscreen\"], not string",
        ),
    ] {
        assert_eq!(
            errors(&format!("{base}view_features = {value}\n")),
            [message],
            "{value}"
        );
    }
}

#[test]
fn view_sandbox_takes_known_tokens_with_scripts_and_never_top_navigation() {
    use mcp_sandbox_proxy::{SandboxToken, ViewSandbox};
    let base = host("https://chat.example.com", "chat.sandbox.test");
    assert_eq!(parse(&base).hosts[0].view_sandbox, ViewSandbox::default());
    let opaque = parse(&format!("{base}view_sandbox = [\"allow-scripts\"]\n"));
    assert_eq!(
        opaque.hosts[0].view_sandbox,
        ViewSandbox::new([SandboxToken::Scripts]).unwrap()
    );
    for (value, message) in [
        (
            "[\"allow-scripts\", \"allow-top-navigation\"]",
            "c.toml:5: hosts[0].view_sandbox[1] \"allow-top-navigation\" is never given: a view must not navigate the chat's own tab",
        ),
        (
            "[\"allow-forms\"]",
            "c.toml:5: hosts[0].view_sandbox must hold \"allow-scripts\": a view without scripts cannot speak to its host",
        ),
        (
            "[\"allow-scripts\", \"allow-all\"]",
            "c.toml:5: hosts[0].view_sandbox[1] \"allow-all\" is not a sandbox token a view may get: one of allow-downloads, allow-forms, allow-modals, allow-pointer-lock, allow-popups, allow-popups-to-escape-sandbox, allow-same-origin, allow-scripts",
        ),
        (
            "\"allow-scripts\"",
            "c.toml:5: hosts[0].view_sandbox must be a list of sandbox tokens, like [\"allow-scripts\", \"allow-forms\"], not string",
        ),
    ] {
        assert_eq!(
            errors(&format!("{base}view_sandbox = {value}\n")),
            [message],
            "{value}"
        );
    }
}

#[test]
fn view_sandbox_default_is_within_the_ceiling() {
    use mcp_sandbox_proxy::{SandboxToken, ViewSandbox};
    let base = host("https://chat.example.com", "chat.sandbox.test");
    let parsed = parse(&format!(
        "{base}view_sandbox_default = [\"allow-scripts\", \"allow-forms\"]\n"
    ));
    assert_eq!(
        parsed.hosts[0].view_sandbox_default,
        Some(ViewSandbox::new([SandboxToken::Scripts, SandboxToken::Forms]).unwrap())
    );
    let outside = errors(&format!(
        "{base}view_sandbox = [\"allow-scripts\"]\nview_sandbox_default = [\"allow-scripts\", \"allow-popups\"]\n"
    ));
    assert_eq!(
        outside,
        [
            "c.toml:6: hosts[0].view_sandbox_default holds allow-popups, which view_sandbox (\"allow-scripts\") does not allow: a default is within the ceiling"
        ]
    );
    let no_scripts = errors(&format!("{base}view_sandbox_default = [\"allow-forms\"]\n"));
    assert!(
        no_scripts[0].contains("hosts[0].view_sandbox_default"),
        "{no_scripts:?}"
    );
}

#[test]
fn relay_messages_is_json_rpc_unless_the_operator_says_any() {
    let loaded = Config::parse(
        "c.toml",
        &format!(
            "{}relay_messages = \"any\"\n",
            host("https://a.example.com", "a.sandbox.test")
        ),
        Path::new("/etc/p"),
    )
    .unwrap();
    assert_eq!(
        loaded.config.hosts[0].relay_messages,
        mcp_sandbox_proxy::RelayMessages::Any
    );
    let default = Config::parse(
        "c.toml",
        &host("https://a.example.com", "a.sandbox.test"),
        Path::new("/etc/p"),
    )
    .unwrap();
    assert_eq!(
        default.config.hosts[0].relay_messages,
        mcp_sandbox_proxy::RelayMessages::JsonRpc
    );
    assert_eq!(
        errors(&format!(
            "{}relay_messages = \"mcp-ui\"\n",
            host("https://a.example.com", "a.sandbox.test")
        )),
        [
            "c.toml:5: hosts[0].relay_messages \"mcp-ui\" is not a choice: \"json-rpc\" (the spec's, the default) or \"any\" (a host whose views speak a wire of their own)"
        ]
    );
}

#[test]
fn view_policy_is_the_service_s_or_the_host_s_and_a_host_s_is_never_signed() {
    use mcp_sandbox_proxy::ViewPolicyOwner;
    let base = host("https://chat.example.com", "chat.sandbox.test");
    assert_eq!(parse(&base).hosts[0].view_policy, ViewPolicyOwner::Service);
    assert_eq!(
        parse(&format!("{base}view_policy = \"host\"\n")).hosts[0].view_policy,
        ViewPolicyOwner::Host
    );
    let bad = errors(&format!("{base}view_policy = \"meta\"\n"));
    assert!(
        bad[0].contains("hosts[0].view_policy \"meta\" is not a choice"),
        "{bad:?}"
    );
    let signed = errors(&format!(
        "{base}view_policy = \"host\"\npolicy_keys = [\"{}\"]\n",
        "ab".repeat(32)
    ));
    assert_eq!(signed.len(), 1, "{signed:?}");
    assert!(signed[0].contains("hosts[0].policy_keys signs ?csp=, which a host entry with view_policy = \"host\" does not use"), "{signed:?}");
}

#[test]
fn opaque_view_storage_is_the_browsers_by_default_or_memory() {
    use mcp_sandbox_proxy::OpaqueViewStorage;
    let base = host("https://chat.example.com", "chat.sandbox.test");
    let storage = |extra: &str| parse(&format!("{base}{extra}")).hosts[0].opaque_view_storage;
    assert_eq!(storage(""), OpaqueViewStorage::None);
    assert_eq!(
        storage("opaque_view_storage = \"memory\"\n"),
        OpaqueViewStorage::Memory
    );
    let refused = errors(&format!("{base}opaque_view_storage = \"disk\"\n"));
    assert_eq!(refused.len(), 1);
    assert!(
        refused[0].starts_with("c.toml:5: hosts[0].opaque_view_storage \"disk\""),
        "{refused:?}"
    );
}
