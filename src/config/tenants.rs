//! A `hosts_dir`: one TOML file per tenant, each adding `[[hosts]]` entries named in its own
//! messages.

use std::fs::Metadata;
use std::io;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Duration;

use super::host_entry::{self, Placed};
use super::problem::Problem;
use super::walk::{Table, Value, Walker};

/// The keys of a tenant file: its host entries, and nothing that is the whole service's.
const KEYS: &[&str] = &["hosts"];

/// The tenant files of a `hosts_dir`: every `*.toml` entry directly in it, by name, with its
/// metadata through symlinks (or why there is none: a dangling symlink, a file it may not
/// stat). Hidden names are skipped, so editors' temporary files and Kubernetes' `..data`
/// folder are not read twice. An entry that vanished since the folder was listed is not there.
pub(crate) fn tenant_files(dir: &Path) -> io::Result<Vec<(PathBuf, io::Result<Metadata>)>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let name = path.file_name().map(|n| n.to_string_lossy());
        let Some(name) = name else { continue };
        if name.starts_with('.') || !name.ends_with(".toml") {
            continue;
        }
        let metadata = std::fs::metadata(&path);
        if metadata.is_err() && std::fs::symlink_metadata(&path).is_err() {
            continue;
        }
        files.push((path, metadata));
    }
    files.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    Ok(files)
}

/// The entries of every tenant file in `dir`. A file that cannot be read, or holds
/// anything but `[[hosts]]`, is a problem of the whole config: one bad tenant file refuses
/// the load (or the reload, and the old config keeps serving).
pub(super) fn tenant_hosts(
    w: &mut Walker<'_>,
    dir: &Path,
    at: &Value<'_>,
    cache_max_age: Duration,
) -> Vec<Placed> {
    let files = match tenant_files(dir) {
        Ok(files) => files,
        Err(e) => {
            let message = format!("cannot read the folder \"{}\": {e}", dir.display());
            w.error_at(at, "hosts_dir", message);
            return Vec::new();
        }
    };
    // `hosts_dir` may name the main file's own folder: the main file is not a tenant file.
    let main_file = std::fs::canonicalize(w.file).ok();
    let mut placed = Vec::new();
    for (path, metadata) in files {
        if main_file.is_some() && std::fs::canonicalize(&path).ok() == main_file {
            continue;
        }
        let name = path.display().to_string();
        w.files.push(name.clone());
        let whole_file = |message: String| Problem {
            file: name.clone(),
            line: None,
            key: String::new(),
            message,
        };
        match &metadata {
            Ok(m) if !m.is_file() => {
                let message = "is not a regular file: skipped".to_owned();
                w.warnings.push(whole_file(message));
                continue;
            }
            Ok(_) => {}
            Err(e) => {
                w.problems
                    .push(whole_file(format!("cannot read the tenant file: {e}")));
                continue;
            }
        }
        if path.file_name().is_none_or(|n| n.to_str().is_none()) {
            let message = "has a name that is not UTF-8: rename it".to_owned();
            w.problems.push(whole_file(message));
            continue;
        }
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) => {
                w.problems
                    .push(whole_file(format!("cannot read the tenant file: {e}")));
                continue;
            }
        };
        let mut tenant = Walker::new(&name, &text, w.base);
        if let Some(doc) = tenant.document() {
            placed.extend(tenant_document(&mut tenant, doc.get_ref(), cache_max_age));
        }
        w.problems.append(&mut tenant.problems);
        w.warnings.append(&mut tenant.warnings);
    }
    placed
}

/// A tenant file: `[[hosts]]` entries and nothing else.
fn tenant_document(w: &mut Walker<'_>, doc: &Table<'_>, cache_max_age: Duration) -> Vec<Placed> {
    for (key, _) in doc.iter() {
        let name: &str = key.get_ref();
        if !KEYS.contains(&name) {
            let line = w.line(&key.span());
            let message = "is not allowed in a tenant file: it holds [[hosts]] entries only, and everything else belongs in the main config".to_owned();
            w.problem(line, name, message);
        }
    }
    let file: Rc<str> = Rc::from(w.file);
    match doc.get("hosts") {
        Some(value) => host_entry::host_entries(w, value, &file, cache_max_age),
        None => {
            let message = "has no [[hosts]] entry: it adds nothing".to_owned();
            w.warning_in(w.file, None, "", message);
            Vec::new()
        }
    }
}
