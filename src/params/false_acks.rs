//! `ack.ack_expiry_ms = 0`, asked for explicitly or not at all.
//!
//! An expiry of 0 means "never": an endpoint that heard nothing for a long time keeps acking what
//! it received before the silence. Once the sender's 16-bit sequence numbers wrap past those
//! (65,536 packets later), the stale receipts read as acks of new packets that never arrived:
//! false acks, which the reliability layer then never resends. It is a setting for studying that
//! failure, not a tuning choice, so the command line refuses it unless `--allow-false-acks` says
//! it is meant, and the window warns beside the control.

use ackscope_protocol::{Action, Scenario, Step};
use anyhow::{bail, Result};

/// The parameter this module guards.
pub const ACK_EXPIRY: &str = "ack.ack_expiry_ms";

/// The flag that accepts it.
pub const ALLOW_FLAG: &str = "--allow-false-acks";

/// Why 0 is dangerous, in one line (the window's warning and the refusal's middle).
pub const WHY: &str = "0 never expires acks, so after a silence the receiver acks packets from before it and, once \
    sequence numbers wrap, the sender takes them as acks of new packets (false acks, never resent)";

/// Whether `scenario` never expires acks.
pub fn never_expires(scenario: &Scenario) -> bool {
    scenario.ack.ack_expiry_ms == 0.0
}

/// Whether `step` sets the ack expiry to 0.
fn sets_zero(step: &Step) -> bool {
    matches!(&step.action, Action::Set(c)
        if c.name() == ACK_EXPIRY && c.value().as_f64() == Some(0.0))
}

/// Refuses `scenario` (and its script and `actions`, a session's log) when any of them sets
/// `ack.ack_expiry_ms` to 0, unless `allowed` (the command's `--allow-false-acks`).
pub fn check(scenario: &Scenario, actions: &[Step], allowed: bool) -> Result<()> {
    if allowed {
        return Ok(());
    }
    if never_expires(scenario) || scenario.script.iter().chain(actions).any(sets_zero) {
        bail!("'{ACK_EXPIRY}' = 0 is refused: {WHY}; pass {ALLOW_FLAG} to run it anyway");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ackscope_protocol::{ParamChange, SimTime};

    #[test]
    fn zero_is_refused_by_name_with_the_flag_unless_allowed_and_other_values_pass() {
        let mut s = Scenario::default();
        check(&s, &[], false).unwrap();
        s.ack.ack_expiry_ms = 0.0;
        let e = check(&s, &[], false).unwrap_err().to_string();
        assert!(e.contains("'ack.ack_expiry_ms'") && e.contains("false acks") && e.contains(ALLOW_FLAG), "{e}");
        check(&s, &[], true).unwrap();
        let later = [Step::new(SimTime::from_secs_f64(1.0), Action::Set(ParamChange::parse(ACK_EXPIRY, "0")))];
        assert!(check(&Scenario::default(), &later, false).is_err(), "a logged change to 0 is refused too");
        let fine = [Step::new(SimTime::from_secs_f64(1.0), Action::Set(ParamChange::parse(ACK_EXPIRY, "1")))];
        check(&Scenario::default(), &fine, false).unwrap();
    }
}
