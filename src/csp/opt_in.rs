//! What an operator may add to a host's view policies beyond the declared domains
//! (`view_opt_ins`), each named on purpose.

use std::collections::BTreeSet;

use crate::vocabulary::OPT_INS;

/// What an operator may add, per host, to every view policy of that host: what real views need
/// beyond domains. None is on unless the host's config entry names it (`view_opt_ins`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum OptIn {
    /// `worker-src 'self' blob:` (and the resource domains): workers built from a `Blob`, as
    /// map and chart libraries do. Without it, workers fall back to `script-src`, which has no
    /// `blob:`.
    WorkerBlob,
    /// `blob:` in `img-src` and `media-src`: images and media a view makes itself.
    BlobMedia,
    /// `'wasm-unsafe-eval'` in `script-src`: WebAssembly compilation, and not JavaScript `eval`.
    WasmUnsafeEval,
    /// `'unsafe-eval'` in `script-src`: `eval` and `new Function`, which some libraries and
    /// example views (three.js scenes sent as code) build on. A view already runs any inline
    /// script it carries, so eval adds little inside a cross-origin sandbox; but it also runs
    /// strings the view receives (tool input, fetched text) as code, so it stays the operator's
    /// choice.
    UnsafeEval,
    /// `data:` in `script-src`: scripts and modules from `data:` URLs, as pdf.js's worker (in
    /// `@modelcontextprotocol/server-pdf`) imports one. A view already runs any inline script
    /// it carries, so a `data:` script adds little inside a cross-origin sandbox; but like eval
    /// it runs code the view builds from strings it receives, so it stays the operator's choice.
    ScriptData,
}

impl OptIn {
    /// Every opt-in, in the order `check` and its errors list them.
    pub const ALL: [OptIn; 5] = [
        OptIn::WorkerBlob,
        OptIn::BlobMedia,
        OptIn::WasmUnsafeEval,
        OptIn::UnsafeEval,
        OptIn::ScriptData,
    ];

    /// What it adds to a view policy.
    pub fn adds(self) -> &'static str {
        match self {
            OptIn::WorkerBlob => "worker-src 'self' blob:",
            OptIn::BlobMedia => "blob: in img-src and media-src",
            OptIn::WasmUnsafeEval => "'wasm-unsafe-eval' in script-src",
            OptIn::UnsafeEval => "'unsafe-eval' in script-src",
            OptIn::ScriptData => "data: in script-src",
        }
    }

    /// Its place in the vocabulary's `OPT_INS`.
    fn index(self) -> usize {
        match self {
            OptIn::UnsafeEval => 0,
            OptIn::WasmUnsafeEval => 1,
            OptIn::ScriptData => 2,
            OptIn::BlobMedia => 3,
            OptIn::WorkerBlob => 4,
        }
    }

    /// The name in the config file.
    pub fn name(self) -> &'static str {
        OPT_INS[self.index()].0
    }
}

impl std::str::FromStr for OptIn {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, String> {
        OptIn::ALL
            .into_iter()
            .find(|opt_in| opt_in.name() == name)
            .ok_or_else(|| {
                let known: Vec<&str> = OptIn::ALL.iter().map(|o| o.name()).collect();
                format!(
                    "{name:?} is not a view opt-in (known: {})",
                    known.join(", ")
                )
            })
    }
}

/// The opt-ins of one host, each at most once.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct OptIns(BTreeSet<OptIn>);

impl OptIns {
    /// These opt-ins, each once.
    pub fn new(opt_ins: impl IntoIterator<Item = OptIn>) -> Self {
        OptIns(opt_ins.into_iter().collect())
    }

    /// Whether `opt_in` is among them.
    pub fn has(&self, opt_in: OptIn) -> bool {
        self.0.contains(&opt_in)
    }

    /// These, for a page whose host asks for the stricter policy (LibreChat's `strictCsp=1`):
    /// without those that let a view run code it builds (`unsafe-eval`, `wasm-unsafe-eval`,
    /// `script-data`, `worker-blob`). A host may narrow what the operator allows, never widen it.
    pub fn strict(&self) -> Self {
        OptIns(
            self.iter()
                .filter(|opt_in| *opt_in == OptIn::BlobMedia)
                .collect(),
        )
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Each, in order.
    pub fn iter(&self) -> impl Iterator<Item = OptIn> + '_ {
        self.0.iter().copied()
    }

    /// The sources they add to `directive`, in the vocabulary's order.
    pub(super) fn sources_in<'d>(
        &self,
        directive: &'d str,
    ) -> impl Iterator<Item = &'static str> + 'd {
        let opted: Vec<bool> = (0..OPT_INS.len())
            .map(|index| self.iter().any(|opt_in| opt_in.index() == index))
            .collect();
        OPT_INS
            .iter()
            .zip(opted)
            .filter(|(_, opted)| *opted)
            .flat_map(|((_, adds), _)| adds.iter())
            .filter(move |(into, _)| *into == directive)
            .map(|(_, source)| *source)
    }

    /// Their names, comma-separated, as in the config file.
    pub fn names(&self) -> String {
        self.iter().map(OptIn::name).collect::<Vec<_>>().join(", ")
    }

    /// What each adds to the policy, for `check`.
    pub fn describe(&self) -> String {
        self.iter()
            .map(|o| format!("{} ({})", o.name(), o.adds()))
            .collect::<Vec<_>>()
            .join(", ")
    }
}
