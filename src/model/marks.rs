//! Marks and deltas: the one thing the user marked (a packet, a message or an instant, as
//! Wireshark's Ctrl+M marks a packet), what is selected now, and the time and sequence distance
//! of any packet, message or anomaly from the mark.
//!
//! A mark names its lane by position and its packet by link send `uid` (unique in a lane), so it
//! stays right while the lane grows; it belongs to the run it was made in (the first lane's
//! recording id), and a new run or another file forgets it. Sequence deltas are only given
//! between two packets of one lane and direction (and message id deltas between two messages of
//! one lane and side): across directions the numbers count different things.

use ackscope_protocol::{ClientId, Dir, Side, SimTime, FIRST_CLIENT};

use crate::session::{Bookmark, BookmarkTarget};

/// What a mark (or the selection) is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkTarget {
    /// A moment of the run, nothing in particular.
    Instant,
    /// Link send `uid` of `client` in lane `lane`, with its direction and sequence.
    Packet { lane: usize, client: ClientId, uid: u64, dir: Dir, seq: u32 },
    /// Message `id` sent by `side` in lane `lane`.
    Message { lane: usize, side: Side, id: u64 },
}

/// A point of the run: an instant and what is there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mark {
    pub at: SimTime,
    pub target: MarkTarget,
}

impl Mark {
    pub fn instant(at: SimTime) -> Self {
        Self { at, target: MarkTarget::Instant }
    }

    /// A packet of the first client ([`Self::of_client`] names another).
    pub fn packet(lane: usize, uid: u64, dir: Dir, seq: u32, at: SimTime) -> Self {
        Self { at, target: MarkTarget::Packet { lane, client: FIRST_CLIENT, uid, dir, seq } }
    }

    /// This point on `client`'s packet (uids count per client); no change to another target.
    pub fn of_client(mut self, client: ClientId) -> Self {
        if let MarkTarget::Packet { client: c, .. } = &mut self.target {
            *c = client;
        }
        self
    }

    pub fn message(lane: usize, side: Side, id: u64, at: SimTime) -> Self {
        Self { at, target: MarkTarget::Message { lane, side, id } }
    }

    /// How far `other` is from this mark: time, and sequence (or message id) when both are on
    /// the same kind of thing in the same lane and direction.
    pub fn delta_to(&self, other: &Mark) -> Delta {
        let dt_us = other.at.0 as i64 - self.at.0 as i64;
        let step = match (self.target, other.target) {
            (
                MarkTarget::Packet { lane: l0, client: c0, dir: d0, seq: s0, .. },
                MarkTarget::Packet { lane: l1, client: c1, dir: d1, seq: s1, .. },
            ) if l0 == l1 && c0 == c1 && d0 == d1 => Some(Step::Seq(seq_step(s0, s1, dt_us))),
            (
                MarkTarget::Message { lane: l0, side: s0, id: i0 },
                MarkTarget::Message { lane: l1, side: s1, id: i1 },
            ) if l0 == l1 && s0 == s1 => Some(Step::Id(i1 as i64 - i0 as i64)),
            _ => None,
        };
        Delta { dt_us, step }
    }

    /// In words: "A->B seq 120 at 1.2340 s", "message A #42 at 0.5000 s", "1.2340 s".
    pub fn describe(&self) -> String {
        let at = format!("{:.4} s", self.at.as_secs_f64());
        match self.target {
            MarkTarget::Instant => at,
            MarkTarget::Packet { dir, seq, client: FIRST_CLIENT, .. } => format!("{} seq {seq} at {at}", dir.label()),
            MarkTarget::Packet { dir, seq, client, .. } => format!("client {client} {} seq {seq} at {at}", dir.label()),
            MarkTarget::Message { side, id, .. } => format!("message {side:?} #{id} at {at}"),
        }
    }

    /// The bookmark target of this point (an instant has none).
    pub fn bookmark_target(&self) -> Option<BookmarkTarget> {
        match self.target {
            MarkTarget::Instant => None,
            MarkTarget::Packet { lane, client, uid, .. } => {
                Some(BookmarkTarget::Packet { lane, uid, client: (client != FIRST_CLIENT).then_some(client) })
            }
            MarkTarget::Message { lane, side, id } => Some(BookmarkTarget::Message { lane, side, id }),
        }
    }

    /// A bookmark named `name` at this point.
    pub fn to_bookmark(&self, name: String) -> Bookmark {
        Bookmark { name, at_us: self.at.0, target: self.bookmark_target() }
    }
}

/// Sequence distance from `s0` to `s1`, `dt_us` after it. Most formats' sequences are 16 bits and
/// wrap (reliable.io, ENet; UE4's are smaller still and recorded widened): when both values fit 16
/// bits and the plain difference runs against time by more than half that space, the sequence
/// wrapped in between, so the distance is taken across the wrap (65,530 -> 4 ten packets later
/// is +10, not -65,526). Sequences that do not wrap at 16 bits (KCP's 32-bit sn) never go back
/// by half the space while time goes forward, so they read as the plain difference.
fn seq_step(s0: u32, s1: u32, dt_us: i64) -> i64 {
    const SPACE: i64 = 1 << 16;
    let plain = s1 as i64 - s0 as i64;
    let both_16 = s0 < SPACE as u32 && s1 < SPACE as u32;
    if both_16 && plain.abs() > SPACE / 2 && (plain < 0) != (dt_us < 0) && dt_us != 0 {
        plain - plain.signum() * SPACE
    } else {
        plain
    }
}

/// A sequence or message id distance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Seq(i64),
    Id(i64),
}

/// The distance of a point from the mark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Delta {
    /// Signed: negative before the mark.
    pub dt_us: i64,
    pub step: Option<Step>,
}

/// The delta column's heading for `mark`, as wide as [`Delta::column`]: a message mark counts
/// message ids, anything else packet sequences.
pub fn delta_header(mark: &Mark) -> String {
    let step = if matches!(mark.target, MarkTarget::Message { .. }) { "Δid" } else { "Δseq" };
    format!("{:>11} {step:>7}", "Δt mark s")
}

impl Delta {
    pub fn dt_s(&self) -> f64 {
        self.dt_us as f64 / 1e6
    }

    /// "Δt +0.0500 s, Δseq +15" (the status bar's words).
    pub fn text(&self) -> String {
        let mut s = format!("Δt {:+.4} s", self.dt_s());
        match self.step {
            Some(Step::Seq(n)) => s.push_str(&format!(", Δseq {n:+}")),
            Some(Step::Id(n)) => s.push_str(&format!(", Δid {n:+}")),
            None => {}
        }
        s
    }

    /// The fixed-width column a list row starts with: time then sequence (or id) delta.
    pub fn column(&self) -> String {
        let step = match self.step {
            Some(Step::Seq(n) | Step::Id(n)) => format!("{n:+}"),
            None => String::new(),
        };
        format!("{:>+11.4} {step:>7}", self.dt_s())
    }
}

impl Delta {
    /// "+1.234s +3": the few characters a timeline row's gutter has room for.
    pub fn short(&self) -> String {
        match self.step {
            Some(Step::Seq(n) | Step::Id(n)) => format!("{:+.3}s {n:+}", self.dt_s()),
            None => format!("{:+.3}s", self.dt_s()),
        }
    }
}

/// The short form of [`column_for`] (a timeline's gutter).
pub fn short_for(mark: Option<&Mark>, point: &Mark) -> Option<String> {
    let m = mark?;
    Some(if m == point { "MARK".into() } else { m.delta_to(point).short() })
}

/// The column of the marked row itself.
pub fn mark_column() -> String {
    format!("{:>11} {:>7}", "MARK", "")
}

/// The column for `point` (the mark's own row says so), or `None` without a mark.
pub fn column_for(mark: Option<&Mark>, point: &Mark) -> Option<String> {
    let m = mark?;
    Some(if m == point { mark_column() } else { m.delta_to(point).column() })
}

/// The mark and the selection of the window, each kept with the run it was made in.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Marks {
    mark: Option<(u64, Mark)>,
    selected: Option<(u64, Mark)>,
}

impl Marks {
    /// The mark, if it was made in run `run` (the first lane's recording id).
    pub fn mark(&self, run: u64) -> Option<Mark> {
        self.mark.filter(|(r, _)| *r == run).map(|(_, m)| m)
    }

    /// What was selected last (a row clicked, a go-to), if in run `run`.
    pub fn selected(&self, run: u64) -> Option<Mark> {
        self.selected.filter(|(r, _)| *r == run).map(|(_, m)| m)
    }

    pub fn set_mark(&mut self, run: u64, mark: Option<Mark>) {
        self.mark = mark.map(|m| (run, m));
    }

    pub fn select(&mut self, run: u64, point: Mark) {
        self.selected = Some((run, point));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequence_deltas_only_within_one_lane_and_direction() {
        let t = |ms: u64| SimTime(ms * 1000);
        let m = Mark::packet(0, 10, Dir::AtoB, 100, t(1000));
        let same = Mark::packet(0, 30, Dir::AtoB, 115, t(1250));
        assert_eq!(m.delta_to(&same), Delta { dt_us: 250_000, step: Some(Step::Seq(15)) });
        assert_eq!(m.delta_to(&same).text(), "Δt +0.2500 s, Δseq +15");
        let back = Mark::packet(0, 5, Dir::AtoB, 90, t(900));
        assert_eq!(m.delta_to(&back).text(), "Δt -0.1000 s, Δseq -10");
        // Across a 16-bit wrap: ten packets on from 65,530 is seq 4.
        let near_end = Mark::packet(0, 1, Dir::AtoB, 65_530, t(1000));
        let wrapped = Mark::packet(0, 11, Dir::AtoB, 4, t(1100));
        assert_eq!(near_end.delta_to(&wrapped).step, Some(Step::Seq(10)));
        assert_eq!(wrapped.delta_to(&near_end).step, Some(Step::Seq(-10)));
        assert_eq!(m.delta_to(&Mark::packet(0, 11, Dir::BtoA, 7, t(1000))).step, None);
        assert_eq!(m.delta_to(&Mark::packet(1, 11, Dir::AtoB, 7, t(1000))).step, None);
        let msg = Mark::message(0, Side::A, 40, t(0));
        assert_eq!(msg.delta_to(&Mark::message(0, Side::A, 43, t(10))).step, Some(Step::Id(3)));
        assert_eq!(msg.delta_to(&Mark::message(0, Side::B, 43, t(10))).step, None);
        assert_eq!(column_for(Some(&m), &m), Some(mark_column()));
        assert_eq!(column_for(None, &m), None);
        assert_eq!(delta_header(&m).chars().count(), m.delta_to(&same).column().chars().count());
        assert!(delta_header(&msg).ends_with("    Δid"));
    }

    #[test]
    fn a_mark_of_another_run_is_forgotten() {
        let mut marks = Marks::default();
        marks.set_mark(7, Some(Mark::instant(SimTime(5))));
        assert_eq!(marks.mark(7), Some(Mark::instant(SimTime(5))));
        assert_eq!(marks.mark(8), None);
    }
}
