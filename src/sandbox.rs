//! The iframe sandbox tokens a host's views may ever get (`view_sandbox`), and the page's own
//! CSP `sandbox` policy made from them.
//!
//! A frame's sandbox should be the intersection of its own flags and its ancestors', and the
//! relay gives a view only tokens from this set. But WebKit drops the ancestors' flags for a
//! child frame whose `sandbox` attribute is changed and that is then navigated: a view could
//! make such a child and open windows or move the chat's tab from it. A document sandboxed by
//! its own header keeps its flags for everything below it in every engine, so the page carries
//! the set as a `sandbox` policy: whatever a view does, nothing below the page has more.

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

/// One iframe sandbox token a view may be given.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SandboxToken {
    /// `allow-downloads`.
    Downloads,
    /// `allow-forms`.
    Forms,
    /// `allow-modals`.
    Modals,
    /// `allow-pointer-lock`.
    PointerLock,
    /// `allow-popups`.
    Popups,
    /// `allow-popups-to-escape-sandbox`.
    PopupsToEscapeSandbox,
    /// `allow-same-origin`: a view that can script its proxy page.
    SameOrigin,
    /// `allow-scripts`, which every view needs.
    Scripts,
}

impl SandboxToken {
    const ALL: [SandboxToken; 8] = [
        SandboxToken::Downloads,
        SandboxToken::Forms,
        SandboxToken::Modals,
        SandboxToken::PointerLock,
        SandboxToken::Popups,
        SandboxToken::PopupsToEscapeSandbox,
        SandboxToken::SameOrigin,
        SandboxToken::Scripts,
    ];

    /// The token as HTML writes it.
    pub fn name(self) -> &'static str {
        match self {
            SandboxToken::Downloads => "allow-downloads",
            SandboxToken::Forms => "allow-forms",
            SandboxToken::Modals => "allow-modals",
            SandboxToken::PointerLock => "allow-pointer-lock",
            SandboxToken::Popups => "allow-popups",
            SandboxToken::PopupsToEscapeSandbox => "allow-popups-to-escape-sandbox",
            SandboxToken::SameOrigin => "allow-same-origin",
            SandboxToken::Scripts => "allow-scripts",
        }
    }
}

impl FromStr for SandboxToken {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        if let Some(token) = SandboxToken::ALL.into_iter().find(|t| t.name() == name) {
            return Ok(token);
        }
        // SECURITY: a view must never replace the chat it is shown in.
        if name.starts_with("allow-top-navigation") {
            return Err(format!(
                "\"{name}\" is never given: a view must not navigate the chat's own tab"
            ));
        }
        let known: Vec<&str> = SandboxToken::ALL.iter().map(|t| t.name()).collect();
        Err(format!(
            "\"{}\" is not a sandbox token a view may get: one of {}",
            name.escape_debug(),
            known.join(", ")
        ))
    }
}

/// The tokens a host's views may ever get: the relay intersects every view's `sandbox` with
/// it, and the page's header carries it (with what the page itself needs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ViewSandbox(BTreeSet<SandboxToken>);

impl Default for ViewSandbox {
    /// What a view may do without the operator's say: run scripts, keep its origin (WebGL and
    /// referrer-bound APIs need a real one), send forms, show dialogs, lock the pointer. Never
    /// pop-ups (a window outside the chat) or downloads (spec: a view asks the host with
    /// `ui/download-file`), unless the operator allows them.
    fn default() -> Self {
        ViewSandbox(BTreeSet::from([
            SandboxToken::Scripts,
            SandboxToken::SameOrigin,
            SandboxToken::Forms,
            SandboxToken::Modals,
            SandboxToken::PointerLock,
        ]))
    }
}

/// A view sandbox without `allow-scripts`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("must hold \"allow-scripts\": a view without scripts cannot speak to its host")]
pub struct NoScripts;

impl ViewSandbox {
    /// A set of tokens; it must hold `allow-scripts`, without which a view cannot speak to its
    /// host at all.
    pub fn new(tokens: impl IntoIterator<Item = SandboxToken>) -> Result<Self, NoScripts> {
        let tokens: BTreeSet<SandboxToken> = tokens.into_iter().collect();
        if !tokens.contains(&SandboxToken::Scripts) {
            return Err(NoScripts);
        }
        Ok(ViewSandbox(tokens))
    }

    /// Whether `token` is among them.
    pub fn has(&self, token: SandboxToken) -> bool {
        self.0.contains(&token)
    }

    /// Each, in order.
    pub fn iter(&self) -> impl Iterator<Item = SandboxToken> + '_ {
        self.0.iter().copied()
    }

    /// The page's own `sandbox` policy: these tokens, and `allow-same-origin` even where views
    /// may not have it, since the relay needs its origin (`sessionStorage`, cookies to clear).
    /// An opaque view still cannot script the page: the relay gives it no `allow-same-origin`.
    pub fn page_policy(&self) -> String {
        let mut tokens = self.0.clone();
        tokens.insert(SandboxToken::SameOrigin);
        let names: Vec<&str> = tokens.iter().map(|t| t.name()).collect();
        format!("sandbox {}", names.join(" "))
    }
}

impl fmt::Display for ViewSandbox {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.iter().map(SandboxToken::name).collect();
        f.write_str(&names.join(" "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_page_policy_gives_no_popup_no_download_and_no_top_navigation() {
        assert_eq!(
            ViewSandbox::default().page_policy(),
            "sandbox allow-forms allow-modals allow-pointer-lock allow-same-origin allow-scripts"
        );
    }

    #[test]
    fn the_page_keeps_its_origin_when_views_may_not() {
        let opaque = ViewSandbox::new([SandboxToken::Scripts]).unwrap();
        assert_eq!(
            opaque.page_policy(),
            "sandbox allow-same-origin allow-scripts"
        );
        assert!(!opaque.has(SandboxToken::SameOrigin));
    }

    #[test]
    fn tokens_parse_by_name_and_top_navigation_never_does() {
        for token in SandboxToken::ALL {
            assert_eq!(token.name().parse::<SandboxToken>(), Ok(token));
        }
        for never in [
            "allow-top-navigation",
            "allow-top-navigation-by-user-activation",
            "allow-top-navigation-to-custom-protocols",
        ] {
            let error = never.parse::<SandboxToken>().unwrap_err();
            assert!(error.contains("never"), "{error}");
        }
        assert!("allow-everything".parse::<SandboxToken>().is_err());
        assert!(ViewSandbox::new([SandboxToken::Forms]).is_err());
    }
}
