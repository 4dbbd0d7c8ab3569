//! The application: its state ([`AppState`], no egui), the commands views send it
//! ([`AppCommand`]), file work off the UI thread ([`files`]), persisted settings, the tab
//! shown and the Tune tab's sweep job ([`tune`]). The frame loop that ties this to the views is [`crate::window`], above both.

pub mod clock;
mod command;
mod compare_with;
mod file_flow;
pub mod files;
pub mod lag;
mod link_file;
pub mod live_log;
mod live_log_rebuild;
pub mod live_log_spans;
mod load_flow;
pub mod marks;
pub mod paths;
mod proxy_start;
pub mod readback;
mod rerun;
pub mod reveal;
pub mod settings;
mod state;
pub mod tab;
mod transport_switch;
pub mod tune;

pub use clock::{Clock, ManualClock, SystemClock};
pub use command::{AppCommand, GuardChoice};
pub use compare_with::{CompareWith, Compared};
pub use marks::MarkCommand;
pub use paths::PromptKind;
pub use proxy_start::ProxyRequest;
pub use reveal::{Reveal, RevealSeen, RevealTarget};
pub use settings::{Launch, Settings};
pub use state::{AppState, MAX_FRAME_GAP};
pub use tab::{Tab, TABS};
pub use tune::{TuneJob, TuneSetup};
