//! How many blind copies a new reliable message gets, and how far apart they go.
//!
//! A copy is sent before the sender can know whether the first carrier arrived: it costs its
//! bytes every time and saves a resend's wait only when the first carrier is lost. So copies are
//! planned from what the endpoint measured ([`super::estimate`]):
//!
//! - none while a resend would come within the recovery target anyway: a loss then costs little
//!   delay, and Naks and timeouts recover it for no bytes spent in advance;
//! - otherwise, all within the recovery target of the first send, as few as keep the share of
//!   messages that wait for a resend within the tail share. A message waits when every carrier
//!   is lost (`loss x q^copies`, `q` the chance that a packet a gap after a lost one is lost
//!   too), and so do the messages queued behind it until its resend arrives (ordered delivery),
//!   hence the factor `1 + message rate x wait`;
//! - none either when no plan within the limits (`max_copies`, the window) reaches the share:
//!   the tail then stays where the resends put it, and copies would only add their bytes;
//! - spaced by the shortest gap that meets the share: the next packet when losses are
//!   independent (a rescued message is late by one packet interval), further apart when they
//!   come in bursts that would take a copy with its original;
//! - and when the last copy is more than the tail share needs, the largest messages go with one
//!   copy fewer, as far as the share allows: the same tail for fewer bytes.

use super::estimate::COPY_GAPS_MS;

/// What a plan is made from (all measured by the endpoint, or its settings).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CopyInputs {
    /// Share of packets lost.
    pub loss: f64,
    /// Chance that the first packet at least `COPY_GAPS_MS[k]` after a lost one is lost.
    pub loss_after_loss: [f64; COPY_GAPS_MS.len()],
    /// Reliable messages sent per second (those that queue behind one that waits).
    pub message_rate_hz: f64,
    /// How long after its last carrier a lost message goes again (Nak or timeout).
    pub recovery_ms: f64,
    /// Copies go only when `recovery_ms` exceeds this.
    pub target_ms: f64,
    /// All copies of a round go within this of its first send (the target, and before the
    /// first carrier's ack could come).
    pub window_ms: f64,
    /// Share of messages allowed to wait for a resend (0..1).
    pub tail_share: f64,
    /// Most copies per message.
    pub max_copies: u32,
    /// The shortest spacing between two packets (one send tick).
    pub tick_ms: f64,
}

/// Copies for the next new messages.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CopyPlan {
    /// Copies of each message.
    pub copies: u32,
    /// Least time between two carriers of a message.
    pub gap_ms: f64,
    /// Share of messages (the largest) that take one copy fewer.
    pub fewer_share: f64,
}

impl CopyPlan {
    pub const NONE: CopyPlan = CopyPlan { copies: 0, gap_ms: 0.0, fewer_share: 0.0 };
}

fn finite(x: f64) -> f64 {
    if x.is_finite() {
        x.max(0.0)
    } else {
        0.0
    }
}

/// The plan for `i` (see the module doc); [`CopyPlan::NONE`] when nothing needs copies.
pub fn plan(i: &CopyInputs) -> CopyPlan {
    let (loss, share, rate) = (finite(i.loss).min(1.0), finite(i.tail_share), finite(i.message_rate_hz));
    let (recovery_ms, target_ms, tick_ms) = (finite(i.recovery_ms), finite(i.target_ms), finite(i.tick_ms));
    let window_ms = finite(i.window_ms);
    // Share of messages waiting when `copies` copies go `gap_ms` apart and each is lost with `q`.
    let waiting = |q: f64, copies: u32, gap_ms: f64| {
        let wait_s = (copies as f64 * gap_ms + recovery_ms) / 1000.0;
        loss * finite(q).min(1.0).powi(copies as i32) * (1.0 + rate * wait_s)
    };
    if i.max_copies == 0 || loss <= 0.0 || recovery_ms <= target_ms || waiting(1.0, 0, 0.0) <= share {
        return CopyPlan::NONE;
    }
    // Each gap's spacing: at least a tick (copies ride on packets).
    let spacing = |k: usize| COPY_GAPS_MS[k].max(tick_ms);
    for copies in 1..=i.max_copies {
        for (k, &q) in i.loss_after_loss.iter().enumerate() {
            let gap = spacing(k);
            if k > 0 && copies as f64 * gap > window_ms {
                break; // longer gaps fit even less
            }
            let w = waiting(q, copies, gap);
            if w <= share {
                let one_fewer = waiting(q, copies - 1, gap);
                let fewer_share = if one_fewer > w { ((share - w) / (one_fewer - w)).clamp(0.0, 1.0) } else { 0.0 };
                return CopyPlan { copies, gap_ms: COPY_GAPS_MS[k], fewer_share };
            }
        }
    }
    // No plan within the limits brings the tail within its share: copies would cost their bytes
    // and leave the tail (the p99) where the resends put it anyway.
    CopyPlan::NONE
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 10 messages a second, a resend 300 ms after the last carrier: 4 wait per loss uncopied.
    fn inputs(loss: f64, q: [f64; 5]) -> CopyInputs {
        CopyInputs {
            loss,
            loss_after_loss: q,
            message_rate_hz: 10.0,
            recovery_ms: 300.0,
            target_ms: 100.0,
            window_ms: 100.0,
            tail_share: 0.005,
            max_copies: 4,
            tick_ms: 10.0,
        }
    }

    #[test]
    fn no_copies_without_loss_with_a_quick_resend_or_within_the_share() {
        assert_eq!(plan(&inputs(0.0, [0.0; 5])), CopyPlan::NONE);
        assert_eq!(plan(&inputs(f64::NAN, [0.0; 5])), CopyPlan::NONE);
        // 0.1 % loss x 4 waiting = 0.4 %, within 0.5 %.
        assert_eq!(plan(&inputs(0.001, [0.001; 5])), CopyPlan::NONE);
        assert_eq!(plan(&CopyInputs { max_copies: 0, ..inputs(0.3, [0.3; 5]) }), CopyPlan::NONE);
        assert_eq!(plan(&CopyInputs { recovery_ms: 90.0, ..inputs(0.3, [0.3; 5]) }), CopyPlan::NONE);
    }

    #[test]
    fn independent_loss_takes_the_next_packet_and_as_few_copies_as_the_share_allows() {
        // 1 %: one copy a tick later leaves 0.01 x 0.01 x (1 + 10 x 0.31) = 0.041 % waiting.
        let p = plan(&inputs(0.01, [0.01; 5]));
        assert_eq!((p.copies, p.gap_ms), (1, 0.0));
        // The largest (0.5 - 0.041) / (4 - 0.041) = 11.6 % may go without their copy.
        assert!((p.fewer_share - 0.1160).abs() < 0.001, "{p:?}");
        // 30 %: even four copies leave 0.3^5 x 4.4 = 1.1 % waiting: no plan reaches 0.5 %, so
        // none is made.
        assert_eq!(plan(&inputs(0.3, [0.3; 5])), CopyPlan::NONE);
        // At 2 % four copies do: 0.3^5 x 4.4 = 1.1 %, and the largest may take three.
        let p = plan(&CopyInputs { tail_share: 0.02, ..inputs(0.3, [0.3; 5]) });
        assert_eq!((p.copies, p.gap_ms), (4, 0.0), "{p:?}");
        assert!(p.fewer_share > 0.0 && p.fewer_share < 1.0, "{p:?}");
    }

    #[test]
    fn bursts_spread_the_copies_within_the_target() {
        // The next packets share a burst (q 0.8, 0.6 at 20 ms); 40 ms on it is mostly over.
        let p = plan(&inputs(0.05, [0.8, 0.6, 0.05, 0.05, 0.05]));
        assert_eq!((p.copies, p.gap_ms), (2, 40.0), "{p:?}");
        // A window of 50 ms leaves room for one copy 40 ms on, not two, and four copies on the
        // next packets stay in the burst: no plan reaches the share, none is made.
        let p = plan(&CopyInputs { window_ms: 50.0, ..inputs(0.05, [0.8, 0.6, 0.05, 0.05, 0.05]) });
        assert_eq!(p, CopyPlan::NONE);
    }
}
