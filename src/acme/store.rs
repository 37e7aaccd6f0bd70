//! The state directory: each name's certificate chain and key, and the account's credentials.
//! Every file is written whole or not at all (a temporary file, synced, then renamed), keys and
//! credentials readable by the service's user only.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::Path;

/// Who may read a file written here.
#[derive(Clone, Copy)]
pub(crate) enum Readers {
    /// A certificate chain: anyone.
    Anyone,
    /// A private key or the account's credentials: the service's user only.
    Owner,
}

/// Writes `bytes` to `path` so that a reader sees the old file or the new one, never a part.
pub(crate) fn write_atomically(path: &Path, bytes: &[u8], readers: Readers) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir)?;
    let file_name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let temporary = dir.join(format!(".{file_name}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut options = OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(match readers {
                Readers::Anyone => 0o644,
                Readers::Owner => 0o600,
            });
        }
        let mut file = options.open(&temporary)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&temporary, path)?;
        // The rename itself survives a crash only once the folder is synced.
        File::open(dir)?.sync_all()
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temporary);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_replaces_the_file_whole_and_keys_stay_private() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("certs").join("a.key");
        write_atomically(&path, b"first", Readers::Owner).unwrap();
        write_atomically(&path, b"second", Readers::Owner).unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"second");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
        }
        let left: Vec<_> = fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, ["a.key"], "no temporary file is left");
    }
}
