//! Who may frame one host entry's sandbox (`origin`): one origin, several exact origins (the
//! same app on `localhost` and `127.0.0.1`, or on two domains), preview patterns, or a mix; and
//! which of them one page is pinned to.

use std::borrow::Cow;
use std::fmt;

use crate::origin::{Embedder, Origin};
use crate::page_query::{EMBEDDER_PARAMETER, NamedEmbedder};

/// At most this many origins and patterns per entry: each is one more `frame-ancestors` source
/// and one more target the relay says ready to.
const MAX_EMBEDDERS: usize = 16;

/// Why a list of origins and patterns is no entry's `origin`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OriginListError {
    /// No origin at all.
    #[error("must name at least one origin")]
    Empty,
    /// More than [`MAX_EMBEDDERS`].
    #[error("lists {0} origins: at most {MAX_EMBEDDERS} may frame one sandbox")]
    TooMany(usize),
    /// One of them twice.
    #[error("lists \"{0}\" twice")]
    Twice(Embedder),
}

/// An entry's `origin`: one or more distinct origins and patterns, in the order configured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Embedders(Vec<Embedder>);

impl Embedders {
    /// An entry's origins and patterns: at least one, at most [`MAX_EMBEDDERS`], none twice.
    pub(crate) fn new(listed: Vec<Embedder>) -> Result<Self, OriginListError> {
        if listed.is_empty() {
            return Err(OriginListError::Empty);
        }
        if listed.len() > MAX_EMBEDDERS {
            return Err(OriginListError::TooMany(listed.len()));
        }
        for (i, embedder) in listed.iter().enumerate() {
            if listed[..i].contains(embedder) {
                return Err(OriginListError::Twice(embedder.clone()));
            }
        }
        Ok(Embedders(listed))
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &Embedder> {
        self.0.iter()
    }

    fn exact(&self) -> impl Iterator<Item = &Origin> {
        self.0.iter().filter_map(|embedder| match embedder {
            Embedder::Exact(origin) => Some(origin),
            Embedder::Pattern(_) => None,
        })
    }

    /// The origins a page may be framed by. Without a name: every exact origin (a pattern
    /// needs the page's own origin named, so that a page rendered for one preview can only ever
    /// be framed by it). With one (`?embedder=`): that origin alone, if it is one of these.
    pub(crate) fn pin(
        &self,
        named: Option<NamedEmbedder<'_>>,
    ) -> Result<Pinned<'_>, EmbedderError> {
        let Some(NamedEmbedder {
            parameter,
            origin: raw,
        }) = named
        else {
            let exact: Vec<&Origin> = self.exact().collect();
            if exact.is_empty() {
                return Err(EmbedderError::Unnamed {
                    served: self.to_string(),
                });
            }
            return Ok(Pinned(exact.into_iter().map(Cow::Borrowed).collect()));
        };
        let origin: Origin = raw.parse().map_err(|e| EmbedderError::NotAnOrigin {
            parameter,
            raw: raw.to_owned(),
            reason: format!("{e}"),
        })?;
        if let Some(listed) = self.exact().find(|listed| **listed == origin) {
            return Ok(Pinned(vec![Cow::Borrowed(listed)]));
        }
        let matched = self.iter().any(|embedder| match embedder {
            Embedder::Pattern(pattern) => pattern.matches(&origin),
            Embedder::Exact(_) => false,
        });
        if matched {
            Ok(Pinned(vec![Cow::Owned(origin)]))
        } else {
            Err(EmbedderError::Foreign {
                parameter,
                raw: raw.to_owned(),
                served: self.to_string(),
            })
        }
    }
}

/// Why a page cannot be pinned to the origin its query names (or names none): its `400`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EmbedderError {
    /// The entry has only patterns, and the query names no origin.
    #[error("this sandbox serves the host origins {served}: name the page's own origin in ?{p}=", p = EMBEDDER_PARAMETER)]
    Unnamed {
        /// The entry's origins and patterns.
        served: String,
    },
    /// `embedder` is not an origin.
    #[error("?{parameter}={raw:?} is not an origin: {reason}")]
    NotAnOrigin {
        /// The parameter that names it (`embedder`, `parentOrigin`).
        parameter: &'static str,
        /// The parameter as written.
        raw: String,
        /// Why it is not an origin.
        reason: String,
    },
    /// `embedder` is an origin the entry does not serve.
    #[error("?{parameter}={raw:?} is not one of this sandbox's host origins {served}")]
    Foreign {
        /// The parameter that names it (`embedder`, `parentOrigin`).
        parameter: &'static str,
        /// The parameter as written.
        raw: String,
        /// The entry's origins and patterns.
        served: String,
    },
}

impl fmt::Display for Embedders {
    /// Space-separated, as `frame-ancestors` lists sources.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        space_separated(f, self.iter())
    }
}

/// Writes `items` separated by single spaces.
fn space_separated<T: fmt::Display>(
    f: &mut fmt::Formatter<'_>,
    items: impl Iterator<Item = T>,
) -> fmt::Result {
    for (i, item) in items.enumerate() {
        if i > 0 {
            f.write_str(" ")?;
        }
        item.fmt(f)?;
    }
    Ok(())
}

/// The exact origins one page is pinned to: never empty, never a pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Pinned<'e>(Vec<Cow<'e, Origin>>);

impl Pinned<'_> {
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Origin> {
        self.0.iter().map(|origin| origin.as_ref())
    }
}

impl fmt::Display for Pinned<'_> {
    /// Space-separated: the `frame-ancestors` sources.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        space_separated(f, self.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn embedders(listed: &[&str]) -> Embedders {
        let parsed = listed.iter().map(|raw| raw.parse().unwrap()).collect();
        Embedders::new(parsed).unwrap()
    }

    #[test]
    fn a_page_without_a_name_is_pinned_to_every_exact_origin() {
        let listed = embedders(&[
            "http://localhost:6274",
            "https://*.preview.example.com",
            "http://127.0.0.1:6274",
        ]);
        let pinned = listed.pin(None).unwrap();
        assert_eq!(
            pinned.to_string(),
            "http://localhost:6274 http://127.0.0.1:6274"
        );
    }

    #[test]
    fn a_named_origin_pins_the_page_to_it_alone() {
        let listed = embedders(&["http://localhost:6274", "https://*.preview.example.com"]);
        let cases = [
            ("http://localhost:6274", "http://localhost:6274"),
            ("HTTP://LOCALHOST:6274", "http://localhost:6274"),
            (
                "https://pr-7.preview.example.com",
                "https://pr-7.preview.example.com",
            ),
        ];
        for (named, want) in cases {
            let pinned = listed
                .pin(Some(NamedEmbedder {
                    parameter: EMBEDDER_PARAMETER,
                    origin: named,
                }))
                .unwrap();
            assert_eq!(pinned.to_string(), want, "{named}");
        }
    }

    #[test]
    fn a_name_outside_the_list_is_refused_naming_the_list() {
        let listed = embedders(&["http://localhost:6274", "http://127.0.0.1:6274"]);
        for named in [
            "http://localhost:6275",
            "https://localhost:6274",
            "http://[::1]:6274",
            "*",
        ] {
            let refused = listed
                .pin(Some(NamedEmbedder {
                    parameter: EMBEDDER_PARAMETER,
                    origin: named,
                }))
                .unwrap_err()
                .to_string();
            assert!(refused.contains("?embedder="), "{named}: {refused}");
        }
        let refused = listed
            .pin(Some(NamedEmbedder {
                parameter: EMBEDDER_PARAMETER,
                origin: "http://localhost:1",
            }))
            .unwrap_err()
            .to_string();
        assert!(
            refused.ends_with("host origins http://localhost:6274 http://127.0.0.1:6274"),
            "{refused}"
        );
    }

    #[test]
    fn patterns_alone_need_a_name() {
        let listed = embedders(&["https://*.preview.example.com"]);
        let refused = listed.pin(None).unwrap_err();
        assert!(
            matches!(refused, EmbedderError::Unnamed { .. }),
            "{refused}"
        );
        assert!(refused.to_string().contains("name the page's own origin"));
    }

    #[test]
    fn a_list_is_short_and_has_no_repeats() {
        let twice = ["http://localhost:6274", "HTTP://localhost:6274"]
            .iter()
            .map(|raw| raw.parse().unwrap())
            .collect();
        assert_eq!(
            Embedders::new(twice).unwrap_err().to_string(),
            "lists \"http://localhost:6274\" twice"
        );
        assert_eq!(Embedders::new(Vec::new()), Err(OriginListError::Empty));
        let many = (1..=17)
            .map(|port| format!("http://localhost:{port}").parse().unwrap())
            .collect();
        assert_eq!(Embedders::new(many), Err(OriginListError::TooMany(17)));
    }
}
