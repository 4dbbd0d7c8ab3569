//! A file written as a stream and put in place only when complete.
//!
//! `session::write_atomic` takes the whole text at once; an export streams rows instead, so it
//! writes through [`AtomicFile`]: a temporary file beside the target with the same name pattern
//! (`.NAME.tmp-PID`, so whatever cleans up after an interrupted save finds these too), synced and
//! renamed over the target by [`AtomicFile::commit`]; dropped uncommitted, the temporary file is
//! removed and the target is untouched. A target that exists and is not a regular file (a pipe,
//! `/dev/stdout`) cannot be replaced by a rename and is written directly.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};

/// A file being written; see the module docs.
pub struct AtomicFile {
    path: PathBuf,
    /// The temporary file, or `None` when writing the target directly.
    tmp: Option<PathBuf>,
    out: Option<BufWriter<File>>,
    bytes: u64,
}

impl AtomicFile {
    /// Starts writing `path` (nothing changes there until [`Self::commit`]).
    pub fn create(path: &Path) -> Result<Self> {
        let origin = path.display().to_string();
        match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => bail!("{origin}: is a directory"),
            Ok(m) if !m.is_file() => {
                let f = File::options().write(true).open(path).with_context(|| format!("{origin}: cannot write"))?;
                return Ok(Self { path: path.into(), tmp: None, out: Some(BufWriter::new(f)), bytes: 0 });
            }
            _ => {}
        }
        let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let name = path.file_name().ok_or_else(|| anyhow!("{origin}: not a file name"))?.to_string_lossy();
        let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
        let f = File::create(&tmp).with_context(|| format!("{origin}: cannot create the file"))?;
        Ok(Self { path: path.into(), tmp: Some(tmp), out: Some(BufWriter::new(f)), bytes: 0 })
    }

    /// The target.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Bytes written so far.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Flushes, syncs and renames the file into place; the bytes written.
    pub fn commit(mut self) -> Result<u64> {
        let origin = self.path.display().to_string();
        let out = self.out.take().ok_or_else(|| anyhow!("{origin}: already closed"))?;
        let f = out.into_inner().map_err(|e| anyhow!("{origin}: write failed: {}", e.error()))?;
        if let Some(tmp) = &self.tmp {
            f.sync_all().with_context(|| format!("{origin}: sync failed"))?;
            std::fs::rename(tmp, &self.path).with_context(|| format!("{origin}: cannot replace the file"))?;
            self.tmp = None;
        }
        Ok(self.bytes)
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let out = self.out.as_mut().ok_or_else(|| io::Error::other("closed"))?;
        let n = out.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.as_mut().map_or(Ok(()), |o| o.flush())
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        self.out = None;
        if let Some(tmp) = self.tmp.take() {
            let _ = std::fs::remove_file(tmp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("ackscope-atomic-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn the_target_changes_only_on_commit_and_an_abandoned_file_leaves_nothing() {
        let dir = temp_dir("commit");
        let path = dir.join("out.csv");
        std::fs::write(&path, "old\n").unwrap();
        let mut f = AtomicFile::create(&path).unwrap();
        f.write_all(b"new\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old\n");
        drop(f);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old\n");
        let mut f = AtomicFile::create(&path).unwrap();
        f.write_all(b"new\n").unwrap();
        assert_eq!(f.commit().unwrap(), 4);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new\n");
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left, vec![std::ffi::OsString::from("out.csv")], "no temporary file left");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_directory_or_a_missing_folder_is_refused_naming_the_target() {
        let dir = temp_dir("refuse");
        let e = AtomicFile::create(&dir).err().unwrap().to_string();
        assert!(e.contains("is a directory") && e.contains(&dir.display().to_string()), "{e}");
        let missing = dir.join("no/such/out.csv");
        let e = format!("{:#}", AtomicFile::create(&missing).err().unwrap());
        assert!(e.starts_with(&missing.display().to_string()), "{e}");
        std::fs::remove_dir_all(dir).unwrap();
    }
}
