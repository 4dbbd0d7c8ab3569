//! The model the window shows: recordings (events, series and indexes), and the time cursor.
//!
//! Nothing here draws or knows egui: views read the model at the cursor and ask the app for
//! changes, so the model is tested without a display and shared by live runs and replays alike.

pub mod index;
pub mod playback;
pub mod recording;
pub mod store;

pub use playback::{Playback, SPEEDS};
pub use recording::Recording;
pub use store::{Sample, SideSeries, Store};
