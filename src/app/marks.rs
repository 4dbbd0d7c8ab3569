//! What the marks, the selection and the bookmarks do to the app state ([`MarkCommand`]).
//!
//! The mark and the selection are the window's ([`AppState::marks`], forgotten by a new run);
//! bookmarks are the recording's: they live on the first lane ([`crate::model::Recording`]
//! carries the session header), so a save writes them and an open brings them back.

use ackscope_protocol::SimTime;

use super::{AppState, RevealTarget};
use crate::model::marks::Mark;
use crate::session::{Bookmark, BookmarkTarget};

/// Something done to the marks or the bookmarks.
#[derive(Debug, Clone, PartialEq)]
pub enum MarkCommand {
    /// Mark this point (`None`: clear the mark).
    Set(Option<Mark>),
    /// Ctrl+M: mark the selection (the cursor's instant when nothing is selected); clears the
    /// mark when it is already there.
    Toggle,
    /// Ctrl+Shift+M: mark the cursor's instant.
    MarkCursor,
    /// Remember what the user selected (a row clicked, a go-to): Ctrl+M marks it, the status bar
    /// gives its distance from the mark.
    Select(Mark),
    /// Bookmark the selection (or the cursor's instant), named `Some` or "Bookmark N".
    AddBookmark(Option<String>),
    RemoveBookmark(usize),
    RenameBookmark(usize, String),
    /// Move the cursor to bookmark `i` and show its packet or message.
    GoToBookmark(usize),
}

impl AppState {
    /// The first lane's run: marks belong to it, and outlive a memory-window trim, which
    /// replaces the lane's recording with one of the run's newest events.
    pub fn run_id(&self) -> u64 {
        self.lanes.first().map_or(0, |l| l.run_id())
    }

    /// The mark of the run shown.
    pub fn current_mark(&self) -> Option<Mark> {
        self.marks.mark(self.run_id())
    }

    /// The selection of the run shown.
    pub fn selection(&self) -> Option<Mark> {
        self.marks.selected(self.run_id())
    }

    /// The run's bookmarks.
    pub fn bookmarks(&self) -> &[Bookmark] {
        self.lanes.first().map_or(&[], |l| &l.bookmarks[..])
    }

    /// The selection, else the cursor's instant: what Ctrl+M and Ctrl+B act on.
    fn point_here(&self) -> Mark {
        self.selection().unwrap_or(Mark::instant(self.cursor()))
    }

    /// The point bookmark `b` names, with its packet's direction and sequence when the lane
    /// shown has it.
    fn point_of(&self, b: &Bookmark) -> Mark {
        let at = SimTime(b.at_us);
        match b.target {
            Some(BookmarkTarget::Packet { lane, uid, client }) => {
                let client = client.unwrap_or(ackscope_protocol::FIRST_CLIENT);
                let lanes = self.shown_lanes();
                // That client's packet log: uids count per client.
                let shown = lanes.get(lane).map(|rec| crate::model::Shown::focus(rec, client));
                let row = shown.as_ref().and_then(|l| l.packets.row_by_uid(uid, &l.ledger));
                row.map_or(Mark::instant(at), |r| Mark::packet(lane, uid, r.dir, r.seq, at).of_client(client))
            }
            Some(BookmarkTarget::Message { lane, side, id }) => Mark::message(lane, side, id, at),
            None => Mark::instant(at),
        }
    }

    pub(super) fn apply_mark(&mut self, cmd: MarkCommand) {
        let run = self.run_id();
        match cmd {
            MarkCommand::Set(m) => self.marks.set_mark(run, m),
            MarkCommand::Toggle => {
                let here = self.point_here();
                let next = (self.current_mark() != Some(here)).then_some(here);
                self.marks.set_mark(run, next);
            }
            MarkCommand::MarkCursor => self.marks.set_mark(run, Some(Mark::instant(self.cursor()))),
            MarkCommand::Select(m) => self.marks.select(run, m),
            MarkCommand::AddBookmark(name) => {
                let here = self.point_here();
                let Some(lane) = self.lanes.first_mut() else { return };
                let name = name.unwrap_or_else(|| format!("Bookmark {}", lane.bookmarks.len() + 1));
                // In time order, so the menu reads as the run goes.
                let at = lane.bookmarks.partition_point(|b| b.at_us <= here.at.0);
                lane.bookmarks.insert(at, here.to_bookmark(name));
            }
            MarkCommand::RemoveBookmark(i) => {
                if let Some(lane) = self.lanes.first_mut().filter(|l| i < l.bookmarks.len()) {
                    lane.bookmarks.remove(i);
                }
            }
            MarkCommand::RenameBookmark(i, name) => {
                if let Some(b) = self.lanes.first_mut().and_then(|l| l.bookmarks.get_mut(i)) {
                    b.name = name;
                }
            }
            MarkCommand::GoToBookmark(i) => {
                let Some(b) = self.bookmarks().get(i).cloned() else { return };
                let at = SimTime(b.at_us);
                match b.target {
                    Some(BookmarkTarget::Packet { lane, uid, client }) => {
                        // The packet is in its client's log: show that client first.
                        let client = client.unwrap_or(ackscope_protocol::FIRST_CLIENT);
                        if self.lanes.get(lane).is_some_and(|l| l.client(client).is_some()) {
                            self.focus = client;
                        }
                        self.reveal_target(RevealTarget::Packet { lane, uid }, Some(at))
                    }
                    Some(BookmarkTarget::Message { lane, side, id }) => {
                        self.reveal_target(RevealTarget::Message { lane, side, id }, Some(at))
                    }
                    None => self.playback.seek(at),
                }
                let point = self.point_of(&b);
                self.marks.select(run, point);
            }
        }
    }
}
