//! The model the window shows: recordings (events, series and indexes), and the time cursor.
//!
//! Nothing here draws or knows egui: views read the model at the cursor and ask the app for
//! changes, so the model is tested without a display and shared by live runs and replays alike.

pub mod anomaly;
pub mod anomaly_filter;
pub mod clients;
pub mod compare;
pub mod connection;
pub mod heap;
pub mod index;
pub mod kept;
pub mod limits;
pub mod marks;
pub mod payloads;
pub mod playback;
pub mod recording;
pub mod shown;
pub mod store;
pub mod verdict;

pub use crate::lane::{ClientInfo, LaneColor, LaneInfo, Origin, Protocol, WireFormat};
pub use connection::Connection;
pub use playback::{Playback, SPEEDS};
pub use recording::Recording;
pub use shown::Shown;
pub use store::{Sample, SideSeries, Store};

#[cfg(test)]
mod tests {
    /// Source lines (comments aside) of every `.rs` file under `dir`, with their file.
    fn code_lines(dir: &std::path::Path, out: &mut Vec<(String, String)>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                code_lines(&p, out);
            } else if p.extension().is_some_and(|e| e == "rs") {
                for line in std::fs::read_to_string(&p).unwrap().lines() {
                    let code = line.split("//").next().unwrap_or("");
                    out.push((p.display().to_string(), code.to_string()));
                }
            }
        }
    }

    #[test]
    fn the_model_and_the_app_state_use_no_gui_crate() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut lines = Vec::new();
        for dir in ["model", "params", "session"] {
            code_lines(&root.join(dir), &mut lines);
        }
        for file in ["state.rs", "command.rs", "files.rs", "settings.rs"] {
            for line in std::fs::read_to_string(root.join("app").join(file)).unwrap().lines() {
                lines.push((file.to_string(), line.split("//").next().unwrap_or("").to_string()));
            }
        }
        assert!(lines.len() > 1000, "only {} lines read", lines.len());
        // Spelled in pieces so this test's own lines do not match.
        let crates = [concat!("eg", "ui"), concat!("efr", "ame")];
        for (file, code) in lines {
            assert!(!crates.iter().any(|c| code.contains(c)), "{file} uses a GUI crate: {code}");
        }
    }

    /// The session files sit below the model: the model builds recordings from sessions and
    /// saves them back as sessions, so a session module that named the model would make an
    /// import circle. The lane description both read lives below both (`crate::lane`).
    #[test]
    fn the_session_files_and_the_lane_description_never_import_the_model() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut lines = Vec::new();
        code_lines(&root.join("session"), &mut lines);
        for line in std::fs::read_to_string(root.join("lane.rs")).unwrap().lines() {
            lines.push(("lane.rs".to_string(), line.split("//").next().unwrap_or("").to_string()));
        }
        assert!(lines.len() > 1000, "only {} lines read", lines.len());
        let model = concat!("crate::", "model");
        for (file, code) in lines {
            assert!(!code.contains(model), "{file} imports the model: {code}");
        }
    }
}
