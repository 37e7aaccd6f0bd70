//! The browser features an operator grants every view of a host beyond the spec's four
//! permissions (`view_features`): Permissions Policy features the relay adds to the view
//! frame's `allow`, beside what the host asked for.

use std::fmt;
use std::str::FromStr;

use crate::vocabulary::VIEW_FEATURES as KNOWN;

use super::walk::near_miss;

/// The spec's permissions, as Permissions Policy names them: a view asks for them in its
/// resource's `permissions` and the host grants them, so an operator does not grant them to all.
const SPEC_PERMISSIONS: [&str; 4] = ["camera", "microphone", "geolocation", "clipboard-write"];

/// One feature `view_features` may name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ViewFeature(&'static str);

impl ViewFeature {
    /// Its Permissions Policy name.
    pub fn name(self) -> &'static str {
        self.0
    }
}

/// Why a name is no feature `view_features` may grant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FeatureError {
    /// One of the spec's four permissions, which each view asks for.
    SpecPermission(String),
    /// No feature of that name, and the nearest one, if any is near.
    Unknown(String, Option<&'static str>),
}

impl fmt::Display for FeatureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FeatureError::SpecPermission(name) => write!(
                f,
                "\"{name}\" is one of the spec's permissions: each view asks for it (its resource's permissions) and the host grants it"
            ),
            FeatureError::Unknown(name, Some(nearest)) => {
                write!(
                    f,
                    "unknown feature \"{name}\" — did you mean \"{nearest}\"?"
                )
            }
            FeatureError::Unknown(name, None) => write!(
                f,
                "unknown feature \"{name}\": view_features takes Permissions Policy features such as \"fullscreen\" (docs/configuration.md#view-features)"
            ),
        }
    }
}

impl FromStr for ViewFeature {
    type Err = FeatureError;

    fn from_str(name: &str) -> Result<Self, FeatureError> {
        if let Some(known) = KNOWN.iter().find(|known| **known == name) {
            return Ok(ViewFeature(known));
        }
        if SPEC_PERMISSIONS.contains(&name) {
            return Err(FeatureError::SpecPermission(name.to_owned()));
        }
        Err(FeatureError::Unknown(
            name.to_owned(),
            near_miss(name, &KNOWN),
        ))
    }
}

/// The features a host entry grants its views: sorted, each once; none by default.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ViewFeatures(Vec<ViewFeature>);

impl ViewFeatures {
    /// The features of `granted`, each once.
    pub fn new(mut granted: Vec<ViewFeature>) -> Self {
        granted.sort();
        granted.dedup();
        ViewFeatures(granted)
    }

    /// Their names, in order.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.0.iter().map(|feature| feature.name())
    }

    /// Whether none is granted.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_features_are_sorted_lower_case_names_and_none_is_a_spec_permission() {
        let mut sorted = KNOWN;
        sorted.sort();
        assert_eq!(sorted, KNOWN);
        for name in KNOWN {
            assert!(
                name.bytes().all(|b| b.is_ascii_lowercase() || b == b'-'),
                "{name}"
            );
            assert!(!SPEC_PERMISSIONS.contains(&name), "{name}");
        }
    }

    #[test]
    fn a_near_miss_names_the_feature_and_a_spec_permission_says_why() {
        let refused = |name: &str| name.parse::<ViewFeature>().unwrap_err().to_string();
        assert_eq!(
            refused("fulscreen"),
            "unknown feature \"fulscreen\" — did you mean \"fullscreen\"?"
        );
        assert_eq!(
            refused("picture-in-pictures"),
            "unknown feature \"picture-in-pictures\" — did you mean \"picture-in-picture\"?"
        );
        assert!(refused("camera").starts_with("\"camera\" is one of the spec's permissions"));
        assert!(
            refused("local-network-access")
                .starts_with("unknown feature \"local-network-access\": ")
        );
        let granted = ViewFeatures::new(vec![
            "fullscreen".parse().unwrap(),
            "autoplay".parse().unwrap(),
            "fullscreen".parse().unwrap(),
        ]);
        assert_eq!(
            granted.names().collect::<Vec<_>>(),
            ["autoplay", "fullscreen"]
        );
    }
}
