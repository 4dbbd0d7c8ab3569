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
//!   come in bursts that would take a copy with its original, in whole ticks, the chance of loss
//!   read between the measured gaps ([`q_at`]);
//! - and when the last copy is more than the tail share needs, the largest messages go with one
//!   copy fewer, as far as the share allows: the same tail for fewer bytes.
//!
//! A resend is planned the same way for the messages that came that far (`reach`: every carrier
//! of every earlier round lost), with two differences ([`plan_resend`]): the recovery target does
//! not excuse it (a message lost again and again adds a recovery per round, however quick each
//! is), and when no plan reaches the share the most copies still go where they at least halve
//! the wait, leave at most ten shares waiting and the next round, copied alike, reaches the
//! share: only lost messages pay for them, and each takes a round out of the tail. Where a round
//! is quick (within the recovery target) and the next round, copied, leaves at most
//! [`DEFER_SHARES`] shares waiting, a resend's copies are put off to that round instead
//! ([`defer_resend`]): a third as many messages pay for them at 30 % loss.

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
    /// Least time between two carriers of a message: `COPY_GAPS_MS[gap_index]`.
    pub gap_ms: f64,
    pub gap_index: usize,
    /// Share of messages (the largest) that take one copy fewer.
    pub fewer_share: f64,
}

impl CopyPlan {
    pub const NONE: CopyPlan = CopyPlan { copies: 0, gap_ms: 0.0, gap_index: 0, fewer_share: 0.0 };
}

/// A resend's copies that cannot bring the tail within its share go only while they leave at
/// most this many times the share waiting (a tenth of all messages at the default 1 %).
pub const FALLBACK_SHARES: f64 = 10.0;

fn finite(x: f64) -> f64 {
    if x.is_finite() {
        x.max(0.0)
    } else {
        0.0
    }
}

/// The plan for the first send of a new message (see the module doc); [`CopyPlan::NONE`] when
/// nothing needs copies, or when no plan within the limits keeps the tail within its share (every
/// message would pay for copies that leave the p99 where the resends put it).
pub fn plan(i: &CopyInputs) -> CopyPlan {
    if finite(i.recovery_ms) <= finite(i.target_ms) {
        return CopyPlan::NONE; // a loss costs little delay: Naks and timeouts recover it
    }
    plan_round(i, 1.0, false)
}

/// The plan for a resend of a message that came to it with chance `reach` (every carrier of
/// every earlier round lost): as few copies as keep the share of messages waiting for yet another
/// recovery within the tail share, and when none within the limits does, `max_copies` at the gap
/// that leaves the fewest waiting, as long as they at least halve it, leave at most
/// [`FALLBACK_SHARES`] shares waiting and the next round, copied alike, reaches the share. Only lost messages pay for
/// these copies (`reach` of them), and at heavy loss the tail is several rounds deep: each copy
/// of a resend takes rounds out of it. Not bound by the recovery target: however quick one
/// recovery is, the rounds of a message lost again and again add up.
pub fn plan_resend(i: &CopyInputs, reach: f64) -> CopyPlan {
    plan_round(i, reach, true)
}

/// The chance that the first packet at least `gap_ms` after a lost one is lost too, read between
/// the measured gaps: geometric between the two around it, the last beyond them.
pub fn q_at(loss_after_loss: &[f64; COPY_GAPS_MS.len()], gap_ms: f64) -> f64 {
    let g = finite(gap_ms);
    let n = COPY_GAPS_MS.len();
    let k = COPY_GAPS_MS.iter().rposition(|&x| x <= g).unwrap_or(0);
    let qk = finite(loss_after_loss[k]).min(1.0);
    if k + 1 >= n {
        return qk;
    }
    let t = ((g - COPY_GAPS_MS[k]) / (COPY_GAPS_MS[k + 1] - COPY_GAPS_MS[k])).clamp(0.0, 1.0);
    let qn = finite(loss_after_loss[k + 1]).min(1.0);
    finite(qk.powf(1.0 - t) * qn.powf(t)).min(1.0)
}

/// The gaps a plan may take, each with the measure-table index at or below it and its chance of
/// loss: the next packet, then every whole number of ticks from two up to the last measured gap,
/// read between the measured gaps ([`q_at`]). A burst of 30 ms then gets a copy about 60 ms on
/// rather than at the next measured gap (80 ms), so a rescued message waits less. Before the tick
/// is known, the measured gaps only.
fn candidates(i: &CopyInputs) -> Vec<(usize, f64, f64)> {
    let tick = finite(i.tick_ms);
    let last = COPY_GAPS_MS[COPY_GAPS_MS.len() - 1];
    let at = |g: f64| (COPY_GAPS_MS.iter().rposition(|&x| x <= g).unwrap_or(0), g, q_at(&i.loss_after_loss, g));
    if tick < MIN_TICK_MS {
        return COPY_GAPS_MS.iter().map(|&g| at(g)).collect();
    }
    let mut out = vec![at(0.0)];
    let mut n = 2.0;
    while n * tick <= last {
        out.push(at(n * tick));
        n += 1.0;
    }
    out
}

/// Below this tick (none measured yet) copies are spaced by the measured gaps only.
const MIN_TICK_MS: f64 = 0.5;

/// A resend's copies are put off to the next round when that round, copied as planned, leaves at
/// most this many tail shares waiting (see [`defer_resend`]). The grids gave the same counts for
/// 3 to 10 (README, "hybrid"); at 2, 20 ms one way with 30 % loss on seeds 201-205 kept copies
/// that took hybrid's worst seed past ue4's best on bytes (96.8 a message, spread 1.2, against
/// ue4's 97.6, spread 0.5).
pub const DEFER_SHARES: f64 = 5.0;

/// Whether a resend that `reach` of the messages come to, and that [`plan_resend`] would copy,
/// goes without copies, its copies put off to the next round: only where a round is quick (the
/// resend comes within the recovery target, so one more round costs the p99 little) and the next
/// round, copied as planned, leaves at most [`DEFER_SHARES`] shares waiting. The next round is
/// paid for by the messages lost once more only: at 30 % loss a third as many. It is never put off
/// twice in a row (`after_deferred`): the messages that came that far wait a round already.
pub fn defer_resend(i: &CopyInputs, reach: f64, after_deferred: bool) -> bool {
    if after_deferred || finite(i.recovery_ms) > finite(i.target_ms) {
        return false;
    }
    let next_reach = finite(reach).min(1.0) * finite(i.loss).min(1.0); // this round uncopied fails
    let next = plan_resend(i, next_reach);
    waiting_after(i, next_reach, next) <= DEFER_SHARES * finite(i.tail_share)
}

/// Share of all messages left waiting for another recovery after a round that `reach` of them
/// come to, copied as `plan` says.
pub fn waiting_after(i: &CopyInputs, reach: f64, plan: CopyPlan) -> f64 {
    let (loss, rate, recovery_ms) = (finite(i.loss).min(1.0), finite(i.message_rate_hz), finite(i.recovery_ms));
    let q = q_at(&i.loss_after_loss, plan.gap_ms);
    let gap = finite(plan.gap_ms).max(finite(i.tick_ms));
    let wait_s = (plan.copies as f64 * gap + recovery_ms) / 1000.0;
    finite(reach).min(1.0) * loss * q.powi(plan.copies.min(64) as i32) * (1.0 + rate * wait_s)
}

/// A round's plan: `reach` of all messages come to it; `fallback` takes the best plan within the
/// limits when none reaches the share.
fn plan_round(i: &CopyInputs, reach: f64, fallback: bool) -> CopyPlan {
    let (loss, share, rate) = (finite(i.loss).min(1.0), finite(i.tail_share), finite(i.message_rate_hz));
    let (recovery_ms, tick_ms, reach) = (finite(i.recovery_ms), finite(i.tick_ms), finite(reach).min(1.0));
    let window_ms = finite(i.window_ms);
    // Share of messages waiting when `copies` copies go `gap_ms` apart and each is lost with `q`.
    let waiting = |q: f64, copies: u32, gap_ms: f64| {
        let wait_s = (copies as f64 * gap_ms + recovery_ms) / 1000.0;
        reach * loss * finite(q).min(1.0).powi(copies as i32) * (1.0 + rate * wait_s)
    };
    let uncopied = waiting(1.0, 0, 0.0);
    if i.max_copies == 0 || loss <= 0.0 || uncopied <= share {
        return CopyPlan::NONE;
    }
    let gaps = candidates(i);
    // The plan at most copies that leaves the fewest waiting, and how many it leaves.
    let mut best = (uncopied, CopyPlan::NONE);
    for copies in 1..=i.max_copies {
        for (n, &(k, gap_ms, q)) in gaps.iter().enumerate() {
            // Each gap's spacing: at least a tick (copies ride on packets).
            let gap = gap_ms.max(tick_ms);
            if n > 0 && copies as f64 * gap > window_ms {
                break; // longer gaps fit even less
            }
            let w = waiting(q, copies, gap);
            if w <= share {
                let one_fewer = waiting(q, copies - 1, gap);
                let fewer_share = if one_fewer > w { ((share - w) / (one_fewer - w)).clamp(0.0, 1.0) } else { 0.0 };
                return CopyPlan { copies, gap_ms, gap_index: k, fewer_share };
            }
            if copies == i.max_copies && w < best.0 {
                best = (w, CopyPlan { copies, gap_ms, gap_index: k, fewer_share: 0.0 });
            }
        }
    }
    // Copies that cannot reach the share still go on a resend if they leave at most
    // `FALLBACK_SHARES` shares waiting and the next round, copied the same way, reaches the
    // share. Past that (heavy loss with a long queue behind each loss) the p99 stays rounds deep
    // whatever a third of the messages pay, and the bytes are what is left to save.
    let next_round_fails = loss * q_at(&i.loss_after_loss, best.1.gap_ms).powi(best.1.copies as i32);
    let near = best.0 <= share * FALLBACK_SHARES && best.0 * next_round_fails <= share;
    if fallback && best.0 <= uncopied / 2.0 && near {
        best.1
    } else {
        CopyPlan::NONE
    }
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
    fn a_resend_is_copied_where_a_second_loss_would_reach_the_tail() {
        // 10 %: a tenth of the messages come to their first resend; uncopied, 0.1 x 0.1 x 4 =
        // 4 % would wait for a second recovery; one copy on the next packet leaves 0.4 %.
        let i = CopyInputs { tail_share: 0.01, max_copies: 1, ..inputs(0.1, [0.1; 5]) };
        assert_eq!(plan(&i), CopyPlan::NONE, "one copy of every message leaves 0.1 x 0.1 x 4.1 waiting");
        let p = plan_resend(&i, 0.1);
        assert_eq!((p.copies, p.gap_ms), (1, 0.0), "{p:?}");
        // Quick resends (within the target) do not spare a resend its copy: rounds add up.
        assert_eq!(plan_resend(&CopyInputs { recovery_ms: 50.0, ..i }, 0.1).copies, 1);
        // 1 %: a message lost twice is rarer than the share: no copy.
        assert_eq!(plan_resend(&inputs(0.01, [0.01; 5]), 0.01), CopyPlan::NONE);
        assert_eq!(plan_resend(&CopyInputs { max_copies: 0, ..i }, 0.1), CopyPlan::NONE);
    }

    #[test]
    fn a_resend_that_cannot_reach_the_share_is_copied_only_if_the_next_round_can() {
        // 30 %, a quick resend (50 ms: 1.5 wait per loss): one copy a tick on leaves about
        // 0.3 x 0.3 x 0.3 x 1.6 = 4.3 % waiting, above the share, but the next round copied
        // alike brings it to 0.4 %.
        let quick = CopyInputs { recovery_ms: 50.0, tail_share: 0.01, max_copies: 1, ..inputs(0.3, [0.3; 5]) };
        assert_eq!(plan_resend(&quick, 0.3).copies, 1);
        // A slower one (250 ms: 3.5 wait per loss): 9.7 % after one copy, 0.87 % after two rounds.
        let slow = CopyInputs { recovery_ms: 250.0, ..quick };
        assert_eq!(plan_resend(&slow, 0.3).copies, 1);
        // 500 ms (6 wait per loss): two copied rounds leave 1.5 %: none, the p99 stays rounds
        // deep whatever a third of the messages pay. At 290 ms two rounds reach 0.97 % but the
        // first leaves 10.8 %, more than ten shares: none either.
        assert_eq!(plan_resend(&CopyInputs { recovery_ms: 290.0, ..quick }, 0.3), CopyPlan::NONE);
        let slower = CopyInputs { recovery_ms: 500.0, ..quick };
        assert_eq!(plan_resend(&slower, 0.3), CopyPlan::NONE);
        // Losses that take the copy with the resend (q 0.9 at every gap): a copy does not halve
        // the waiting, none.
        assert_eq!(plan_resend(&CopyInputs { loss_after_loss: [0.9; 5], ..quick }, 0.3), CopyPlan::NONE);
        // In bursts the copy goes where the burst is over: 40 ms on, within the 100 ms window.
        let bursty = CopyInputs { loss_after_loss: [0.9, 0.6, 0.05, 0.05, 0.05], ..quick };
        let p = plan_resend(&bursty, 0.3);
        assert_eq!((p.copies, p.gap_ms, p.gap_index), (1, 40.0, 2), "{p:?}");
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

    #[test]
    fn loss_between_measured_gaps_is_read_geometrically() {
        let q = [0.8, 0.6, 0.05, 0.05, 0.02];
        assert_eq!(q_at(&q, 20.0), 0.6, "a measured gap reads its own chance");
        assert!((q_at(&q, 30.0) - (0.6f64 * 0.05).sqrt()).abs() < 1e-12, "{}", q_at(&q, 30.0));
        assert_eq!(q_at(&q, 500.0), 0.02, "beyond the last gap, the last chance");
        assert_eq!(q_at(&q, f64::NAN), 0.8);
        assert_eq!(q_at(&[f64::NAN, 0.0, 0.0, 0.0, 0.0], 10.0), 0.0);
    }

    #[test]
    fn a_burst_ending_between_measured_gaps_gets_its_copy_at_a_tick_between_them() {
        // 40 ms after a loss a packet is lost 20 % of the time, 80 ms after it 1 %: one copy at
        // 80 ms leaves 0.05 x 0.01 x 4.8 = 0.24 % waiting, and 70 ms (q = 0.2^0.25 x 0.01^0.75 =
        // 2.1 %) 0.05 x 0.021 x 4.7 = 0.497 %, within 0.5 % and 10 ms sooner.
        let i = CopyInputs { max_copies: 1, ..inputs(0.05, [0.9, 0.5, 0.2, 0.01, 0.01]) };
        let p = plan(&i);
        assert_eq!((p.copies, p.gap_ms, p.gap_index), (1, 70.0, 2), "{p:?}");
        // Before a tick is measured, the measured gaps only.
        let p = plan(&CopyInputs { tick_ms: 0.0, ..i });
        assert_eq!((p.copies, p.gap_ms, p.gap_index), (1, 80.0, 3), "{p:?}");
    }

    #[test]
    fn a_quick_resend_puts_its_copies_off_to_the_next_round_when_that_round_reaches_near_the_share() {
        // 30 %, resends 50 ms after the last carrier (within the 100 ms target): the first
        // resend would get a copy (see above), but the next round (9 % of the messages), copied,
        // leaves 0.09 x 0.3 x 0.3 x 1.6 = 1.3 % waiting: within five shares.
        let quick = CopyInputs { recovery_ms: 50.0, tail_share: 0.01, max_copies: 1, ..inputs(0.3, [0.3; 5]) };
        assert_eq!(plan_resend(&quick, 0.3).copies, 1);
        assert!(defer_resend(&quick, 0.3, false));
        // Never twice in a row, never where a round is slow.
        assert!(!defer_resend(&quick, 0.3, true));
        assert!(!defer_resend(&CopyInputs { recovery_ms: 150.0, ..quick }, 0.3, false));
        // 50 % loss: the next round (a quarter of the messages) is not copied (one copy leaves
        // more than ten shares) and leaves 0.25 x 0.5 x 1.5 = 19 % waiting: the copies go now.
        assert!(!defer_resend(&CopyInputs { loss: 0.5, loss_after_loss: [0.5; 5], ..quick }, 0.5, false));
    }
}
