//! The in-window path field's model: what the user is asked for, completion of a typed path
//! from the file system and the recent files, and turning the typed text into a path.
//!
//! Where no file dialog can be shown (no desktop portal and no zenity: servers, CI, minimal
//! desktops) rfd returns nothing within milliseconds, so Open and Save would do nothing at all;
//! this field takes over then. It is plain text so it works everywhere, and completes like a
//! shell: directories end in `/`, only session files (`.ron`) are offered, `~/` is the home
//! directory, and relative paths are read from the working directory.

use std::path::{Path, PathBuf};

/// Session files are RON; only these and directories are offered.
const EXTENSION: &str = "ron";
/// Most suggestions listed under the field.
const MAX_SUGGESTIONS: usize = 40;

/// What the path field is asking for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptKind {
    Open,
    Save,
    /// A base name for exported tables (`NAME-packets.csv`, ...; see `ExportTargets::beside`).
    Export,
    /// A second recording to show beside the one shown (`AppState::compare_with`).
    CompareWith,
    /// A fitted link file to load into the link (the Link panel's *Load fitted link...*).
    LinkFile,
}

impl PromptKind {
    /// The window title and the button that commits.
    pub fn verb(self) -> &'static str {
        match self {
            PromptKind::Open => "Open",
            PromptKind::Save => "Save",
            PromptKind::Export => "Export",
            PromptKind::CompareWith => "Compare with",
            PromptKind::LinkFile => "Load link",
        }
    }
}

/// The path the typed text names: `~/` expanded, relative to `cwd`, and for a save `.ron` added
/// when the name has no extension (so the file is found again by Open's filter).
pub fn resolve(typed: &str, cwd: &Path, kind: PromptKind) -> Option<PathBuf> {
    let typed = typed.trim();
    if typed.is_empty() || typed.ends_with('/') {
        return None;
    }
    let mut p = expand(typed, cwd);
    if kind == PromptKind::Save && p.extension().is_none() {
        p.set_extension(EXTENSION);
    }
    Some(p)
}

/// `typed` as a path: `~/` is the home directory, a relative path is under `cwd`.
fn expand(typed: &str, cwd: &Path) -> PathBuf {
    if let Some(rest) = typed.strip_prefix("~/") {
        if let Some(home) = std::env::var_os("HOME") {
            return PathBuf::from(home).join(rest);
        }
    }
    cwd.join(typed)
}

/// Completions of `typed`: the entries of the directory it names that start with its last
/// part (directories first, with a trailing `/`, then `.ron` files; hidden ones only when the
/// part starts with a dot), then recent files whose path contains the text. Each is the full
/// text to put in the field.
pub fn completions(typed: &str, cwd: &Path, recent: &[PathBuf]) -> Vec<String> {
    let (dir_text, prefix) = match typed.rfind('/') {
        Some(i) => (&typed[..=i], &typed[i + 1..]),
        None => ("", typed),
    };
    let dir = if dir_text.is_empty() { cwd.to_path_buf() } else { expand(dir_text, cwd) };
    let mut dirs = Vec::new();
    let mut files = Vec::new();
    if let Ok(entries) = std::fs::read_dir(&dir) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if !name.starts_with(prefix) || (name.starts_with('.') && !prefix.starts_with('.')) {
                continue;
            }
            let is_dir = e.file_type().is_ok_and(|t| t.is_dir()) || e.path().is_dir();
            if is_dir {
                dirs.push(format!("{dir_text}{name}/"));
            } else if Path::new(&name).extension().is_some_and(|x| x == EXTENSION) {
                files.push(format!("{dir_text}{name}"));
            }
        }
    }
    dirs.sort();
    files.sort();
    let mut out: Vec<String> = dirs.into_iter().chain(files).collect();
    let needle = typed.to_lowercase();
    for r in recent {
        let shown = r.display().to_string();
        if shown.to_lowercase().contains(&needle) && !out.contains(&shown) {
            out.push(shown);
        }
    }
    out.truncate(MAX_SUGGESTIONS);
    out
}

/// The longest text every suggestion starts with (what Tab completes to), if longer than
/// `typed`.
pub fn common_prefix(typed: &str, suggestions: &[String]) -> Option<String> {
    let first = suggestions.first()?;
    let mut len = first.len();
    for s in &suggestions[1..] {
        len = first.bytes().zip(s.bytes()).take(len).take_while(|(a, b)| a == b).count();
    }
    while !first.is_char_boundary(len) {
        len -= 1;
    }
    (len > typed.len() && first[..len].starts_with(typed)).then(|| first[..len].to_string())
}

/// A size for people: bytes, KiB, MiB or GiB with one decimal.
pub fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["bytes", "KiB", "MiB", "GiB"];
    let mut v = bytes as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} bytes")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completion_lists_directories_then_sessions_then_matching_recent_files() {
        let dir = std::env::temp_dir().join(format!("ackscope-paths-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("runs")).unwrap();
        std::fs::create_dir_all(dir.join(".hidden")).unwrap();
        for f in ["run-a.ron", "run-b.ron", "notes.txt", "other.ron"] {
            std::fs::write(dir.join(f), "x").unwrap();
        }
        let recent = vec![PathBuf::from("/elsewhere/run-old.ron"), PathBuf::from("/elsewhere/x.ron")];
        let all = completions("", &dir, &[]);
        assert_eq!(all, ["runs/", "other.ron", "run-a.ron", "run-b.ron"], "no hidden entries, no .txt");
        let r = completions("run", &dir, &recent);
        assert_eq!(r, ["runs/", "run-a.ron", "run-b.ron", "/elsewhere/run-old.ron"]);
        assert_eq!(common_prefix("run", &r[1..3]), Some("run-".into()));
        assert_eq!(common_prefix("run", &r), None, "nothing longer is shared");
        std::fs::write(dir.join("runs/deep.ron"), "x").unwrap();
        assert_eq!(completions("runs/", &dir, &[]), ["runs/deep.ron"]);
        assert_eq!(completions(".h", &dir, &[]), [".hidden/"]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn typed_text_resolves_against_the_working_directory() {
        let cwd = Path::new("/work/here");
        assert_eq!(resolve("a.ron", cwd, PromptKind::Open), Some(cwd.join("a.ron")));
        assert_eq!(resolve("out/run", cwd, PromptKind::Save), Some(cwd.join("out/run.ron")));
        assert_eq!(resolve("/abs/run", cwd, PromptKind::Open), Some(PathBuf::from("/abs/run")));
        assert_eq!(resolve("  ", cwd, PromptKind::Save), None);
        assert_eq!(resolve("dir/", cwd, PromptKind::Save), None);
        assert_eq!(human_size(512), "512 bytes");
        assert_eq!(human_size(1536), "1.5 KiB");
        assert_eq!(human_size(3 * 1024 * 1024), "3.0 MiB");
    }
}
