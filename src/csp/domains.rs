//! The four domain lists a server declares, and the validated sources a view may use in each.

use std::collections::BTreeSet;

use super::source::{DropReason, HostSource};
use crate::vocabulary::{APPS_SDK_LISTS, DOMAIN_LISTS, LIST_DIRECTIVES};

/// The four domain lists a server declares in `_meta.ui.csp`, in the spec's spelling.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DomainList {
    /// `connectDomains`: `connect-src`.
    Connect,
    /// `resourceDomains`: scripts, styles, images, fonts, media (and workers with `worker-blob`).
    Resource,
    /// `frameDomains`: `frame-src`.
    Frame,
    /// `baseUriDomains`: `base-uri`.
    BaseUri,
}

impl DomainList {
    /// The four, in the spec's order.
    pub const ALL: [DomainList; 4] = [
        DomainList::Connect,
        DomainList::Resource,
        DomainList::Frame,
        DomainList::BaseUri,
    ];

    /// Its place in the vocabulary's lists.
    fn index(self) -> usize {
        match self {
            DomainList::Connect => 0,
            DomainList::Resource => 1,
            DomainList::Frame => 2,
            DomainList::BaseUri => 3,
        }
    }

    /// The key in the `?csp=` JSON object and in `sandbox-resource-ready.params.csp`.
    pub(crate) fn key(self) -> &'static str {
        DOMAIN_LISTS[self.index()]
    }

    /// The key the Apps SDK writes it under (`connect_domains`), if it has the list; read where
    /// the spec's key is absent.
    pub(crate) fn apps_sdk_key(self) -> Option<&'static str> {
        APPS_SDK_LISTS[self.index()]
    }

    /// The directives of the view policy its sources go into.
    pub(crate) fn directives(self) -> &'static [&'static str] {
        LIST_DIRECTIVES[self.index()]
    }
}

/// One entry the policy builder refused, kept for the log, the metrics and the page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dropped {
    pub list: DomainList,
    pub entry: String,
    pub reason: DropReason,
}

/// The validated domains a view may use: sorted, deduplicated host-sources per list.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Domains {
    connect: BTreeSet<HostSource>,
    resource: BTreeSet<HostSource>,
    frame: BTreeSet<HostSource>,
    base_uri: BTreeSet<HostSource>,
}

impl Domains {
    pub(crate) fn list(&self, list: DomainList) -> &BTreeSet<HostSource> {
        match list {
            DomainList::Connect => &self.connect,
            DomainList::Resource => &self.resource,
            DomainList::Frame => &self.frame,
            DomainList::BaseUri => &self.base_uri,
        }
    }

    /// The sources that go into `directive`: those of the list that fills it, if one does.
    pub(super) fn filling(&self, directive: &str) -> Option<&BTreeSet<HostSource>> {
        let list = DomainList::ALL
            .into_iter()
            .find(|list| list.directives().contains(&directive))?;
        Some(self.list(list))
    }

    pub(super) fn list_mut(&mut self, list: DomainList) -> &mut BTreeSet<HostSource> {
        match list {
            DomainList::Connect => &mut self.connect,
            DomainList::Resource => &mut self.resource,
            DomainList::Frame => &mut self.frame,
            DomainList::BaseUri => &mut self.base_uri,
        }
    }
}
