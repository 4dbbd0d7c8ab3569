//! Loss: independent random loss and a Gilbert-Elliott chain on the link's own 1 ms grid, fitted
//! by maximum likelihood.
//!
//! The link decides a packet sent at `t` from the chain's state at step `floor(t / 1 ms)`: in the
//! bad state it drops with chance `h` (`burst.loss_in_bad_percent`), then, if not, with chance `l`
//! (`loss_percent`) whatever the state. The chain moves good -> bad with chance `p` and bad ->
//! good with chance `r` per step (`burst.p_percent`, `burst.r_percent`). Between packets `k`
//! steps apart the chain's transition is closed-form, `P_k(bad | good) = pi (1 - lambda^k)` and
//! `P_k(bad | bad) = pi + (1 - pi) lambda^k` with `pi = p / (p + r)`, `lambda = 1 - p - r`, so the
//! likelihood of the observed lost / delivered sequence is one forward pass of a two-state hidden
//! Markov model over the packets, whatever their spacing ([`super::hmm`]). It is maximised over
//! `(p, r, h, l)` by Nelder-Mead from several starting points (one from the runs of losses, two
//! around it), then by Baum-Welch from the best of them, which climbs whatever the simplex left.
//! The likelihood's curvature there gives each fitted value's standard deviation, the limit a
//! capture of this length sets (`sd_percent`): the loss in the bad state is the hardest to pin
//! down, since a burst holds few packets and the good state's losses next to it look alike.
//!
//! Bursts are kept only when they explain the losses clearly better than independent loss: twice
//! the log-likelihood gain over the best independent-loss model must exceed
//! [`BURST_EVIDENCE`] (a likelihood-ratio test for the three extra parameters, far past the 0.1 %
//! level). Otherwise `p = 0` and `l` is the lost share.

pub use super::hmm::LossObs;
use super::hmm::{baum_welch, log_likelihood, standard_errors, Params, P_MAX, R_MIN};
use super::stats::{logit, nelder_mead, sigmoid};

/// Twice the log-likelihood gain bursts must bring (chi-square with 3 degrees of freedom: 16.3
/// at 0.1 %; higher, since `p` and `r` sit on the boundary when bursts are absent).
pub const BURST_EVIDENCE: f64 = 25.0;

/// The fitted loss, in the link's units (percent; `p` and `r` per 1 ms step).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct LossFit {
    pub loss_percent: f64,
    /// 0 when bursts were not kept.
    pub p_percent: f64,
    pub r_percent: f64,
    pub loss_in_bad_percent: f64,
    /// Twice the log-likelihood gain of the burst model over independent loss.
    pub evidence: f64,
    /// Baum-Welch iterations taken (0 when bursts were not searched for).
    pub em_iterations: usize,
    /// The statistical limit of this capture: the standard deviations of the fitted
    /// `[p, r, loss_in_bad, loss]` (percent) that the likelihood's curvature at its maximum gives
    /// (the Cramer-Rao bound); `None` without bursts or where the curvature is not negative.
    pub sd_percent: Option<[f64; 4]>,
}

/// `Params` to and from the unbounded coordinates Nelder-Mead searches.
fn from_x(x: &[f64]) -> Params {
    Params { p: P_MAX * sigmoid(x[0]), r: R_MIN + (1.0 - R_MIN) * sigmoid(x[1]), h: sigmoid(x[2]), l: sigmoid(x[3]) }
}

fn to_x(m: Params) -> Vec<f64> {
    vec![logit(m.p / P_MAX), logit((m.r - R_MIN) / (1.0 - R_MIN)), logit(m.h), logit(m.l)]
}

/// Fits loss to `obs` (in send order; see the module doc).
pub fn fit(obs: &[LossObs]) -> LossFit {
    let n = obs.len() as f64;
    let lost = obs.iter().filter(|o| o.lost).count() as f64;
    if n == 0.0 || lost == 0.0 {
        return LossFit { r_percent: 25.0, loss_in_bad_percent: 100.0, ..Default::default() };
    }
    let f = lost / n;
    let bernoulli = if lost == n { 0.0 } else { lost * f.ln() + (n - lost) * (1.0 - f).ln() };
    let independent =
        LossFit { loss_percent: 100.0 * f, r_percent: 25.0, loss_in_bad_percent: 100.0, ..Default::default() };
    if lost == n {
        return independent;
    }
    let mut best: Option<(Params, f64)> = None;
    for start in starts(obs, f) {
        let mut objective = |x: &[f64]| -log_likelihood(obs, from_x(x));
        let (x, v) = nelder_mead(&mut objective, &to_x(start), &[1.0, 1.0, 1.0, 1.0], 600, 1e-10);
        if best.is_none_or(|(_, b)| -v > b) {
            best = Some((from_x(&x), -v));
        }
    }
    // Baum-Welch from Nelder-Mead's best: it climbs whatever the simplex left (on captures of
    // the links in `examples/fit_accuracy.rs` it finds nothing left: the simplex's point is the
    // maximum, and the spread of the fitted values is the capture's own, `sd_percent`).
    let (nm, _) = best.expect("at least one start");
    let (m, ll, em_iterations) = baum_welch(obs, nm);
    let evidence = 2.0 * (ll - bernoulli);
    if evidence < BURST_EVIDENCE || !evidence.is_finite() {
        return LossFit { evidence: evidence.max(0.0), ..independent };
    }
    LossFit {
        loss_percent: 100.0 * m.l,
        p_percent: 100.0 * m.p,
        r_percent: 100.0 * m.r,
        loss_in_bad_percent: 100.0 * m.h,
        evidence,
        em_iterations,
        sd_percent: standard_errors(obs, m).map(|s| [100.0 * s.p, 100.0 * s.r, 100.0 * s.h, 100.0 * s.l]),
    }
}

/// Starting points: from the runs of consecutive losses (their mean length in packets and the
/// median packet spacing give a burst length in ms), with the bad state losing everything, and
/// two variations.
fn starts(obs: &[LossObs], f: f64) -> Vec<Params> {
    let mut runs = 0usize;
    let mut in_run = false;
    for o in obs {
        if o.lost && !in_run {
            runs += 1;
        }
        in_run = o.lost;
    }
    let lost = obs.iter().filter(|o| o.lost).count();
    let mean_run = lost as f64 / runs.max(1) as f64;
    let mut gaps: Vec<u64> = obs.windows(2).map(|w| w[1].step - w[0].step).filter(|g| *g > 0).collect();
    gaps.sort_unstable();
    let spacing_ms = gaps.get(gaps.len() / 2).copied().unwrap_or(1).max(1) as f64;
    let burst_ms = (mean_run * spacing_ms).max(1.0);
    let r = (1.0 / burst_ms).clamp(R_MIN * 2.0, 0.9);
    let bad_share = (f * 0.8).clamp(1e-4, 0.9);
    let p = (bad_share * r / (1.0 - bad_share)).clamp(1e-5, P_MAX * 0.9);
    let l = (f * 0.2).clamp(1e-4, 0.5);
    vec![
        Params { p, r, h: 0.95, l },
        Params { p: p * 0.5, r: r * 0.5, h: 0.6, l: l * 0.5 },
        Params { p: (p * 2.0).min(P_MAX * 0.9), r: (r * 3.0).min(0.9), h: 0.99, l: f * 0.05 + 1e-4 },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Packets every `gap` ms through a Gilbert-Elliott chain stepped per ms (an independent
    /// simulation of the model, with its own generator: `hmm`'s test sampler).
    fn simulate(m: Params, gap: u64, packets: usize, seed: u64) -> Vec<LossObs> {
        crate::fit::hmm::tests::sample(m, &[gap], packets, seed)
    }

    #[test]
    fn independent_loss_is_not_taken_for_bursts() {
        for seed in 1..4 {
            let obs = simulate(Params { p: 0.0, r: 0.5, h: 1.0, l: 0.05 }, 10, 20_000, seed);
            let fit = fit(&obs);
            assert_eq!(fit.p_percent, 0.0, "seed {seed}: {fit:?}");
            assert!((fit.loss_percent - 5.0).abs() < 0.5, "seed {seed}: {fit:?}");
        }
    }

    #[test]
    fn bursts_are_fitted_back_in_the_links_units() {
        let truth = Params { p: 0.004, r: 0.04, h: 0.9, l: 0.01 };
        for seed in 1..4 {
            let obs = simulate(truth, 5, 60_000, seed);
            let fit = fit(&obs);
            let close = |got: f64, want: f64, tol: f64| (got - want).abs() <= tol * want;
            assert!(close(fit.p_percent, 0.4, 0.15), "seed {seed}: {fit:?}");
            assert!(close(fit.r_percent, 4.0, 0.15), "seed {seed}: {fit:?}");
            assert!((fit.loss_in_bad_percent - 90.0).abs() < 5.0, "seed {seed}: {fit:?}");
            assert!((fit.loss_percent - 1.0).abs() < 0.5, "seed {seed}: {fit:?}");
        }
    }

    #[test]
    fn no_loss_and_all_lost_are_answered_without_a_search() {
        let none: Vec<LossObs> = (0..100).map(|i| LossObs { step: i * 10, lost: false }).collect();
        assert_eq!(fit(&none).loss_percent, 0.0);
        let all: Vec<LossObs> = (0..100).map(|i| LossObs { step: i * 10, lost: true }).collect();
        assert_eq!(fit(&all).loss_percent, 100.0);
        assert_eq!(fit(&[]).loss_percent, 0.0);
    }
}
