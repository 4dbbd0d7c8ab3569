//! The Gilbert-Elliott link as the two-state hidden Markov model it is, over the packets a
//! capture saw: its likelihood (a scaled forward pass) and its maximum-likelihood fit by
//! Baum-Welch (expectation-maximisation).
//!
//! The model is the link's own (`protocol/src/link/burst.rs`, `lossy.rs`): a chain stepped once
//! per 1 ms grid step, good -> bad with chance `p` and bad -> good with chance `r` per step; a
//! packet sent during step `s` sees the state of step `s`, is dropped with chance `h` in the bad
//! state (`burst.loss_in_bad_percent`), then, if not, with chance `l` in either state
//! (`loss_percent`). So a packet is lost with chance `l` in the good state and `b = h + (1 - h) l`
//! in the bad one, and `h = (b - l) / (1 - l)`.
//!
//! Packets sit `k` steps apart, any `k`. Between them the chain's transition is closed-form,
//! `P^k = Pi + lambda^k (I - Pi)` with `Pi`'s rows the stationary `(1 - pi, pi)`, `pi = p / (p + r)`
//! and `lambda = 1 - p - r`; and so is the expected number of one-step transitions u -> v inside
//! a gap whose ends are in states x and y: `P[u][v] * sum_t P^t[x][u] P^(k-1-t)[v][y] / P^k[x][y]`,
//! whose sum is `k A C + (A D + B C) S + B D k lambda^(k-1)` with `P^t[x][u] = A + B lambda^t`,
//! `P^t[v][y] = C + D lambda^t` and `S = sum_{t<k} lambda^t`. The E-step therefore costs one
//! forward and one backward pass over the packets, not over every 1 ms step of a long idle
//! capture, and the M-step is the textbook one: `p` is the expected good -> bad steps over the
//! expected steps spent good, `r` likewise, `l` and `b` the expected lost shares in each state.
//! The first packet's state is taken stationary and its term left out of the M-step (one packet
//! among thousands).

/// The chain's four chances, as fractions (`p`, `r` per 1 ms step).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Params {
    pub p: f64,
    pub r: f64,
    pub h: f64,
    pub l: f64,
}

/// Bounds of the link's parameter table: p up to 50 %, r from 0.1 % to 100 %.
pub const P_MAX: f64 = 0.5;
pub const R_MIN: f64 = 0.001;

/// Baum-Welch stops after this many iterations at most...
pub const EM_MAX_ITERATIONS: usize = 400;
/// ...or when an iteration gains less log-likelihood than this.
pub const EM_TOLERANCE: f64 = 1e-7;

/// One packet: its step on the 1 ms grid and whether it was lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LossObs {
    pub step: u64,
    pub lost: bool,
}

impl Params {
    /// Loss chances in the good and the bad state.
    fn emissions(self) -> [f64; 2] {
        [self.l, self.h + (1.0 - self.h) * self.l]
    }
    fn stationary_bad(self) -> f64 {
        if self.p + self.r <= 0.0 {
            0.0
        } else {
            self.p / (self.p + self.r)
        }
    }
    /// `P^k` as `[[gg, gb], [bg, bb]]`.
    fn power(self, k: u64) -> [[f64; 2]; 2] {
        let pi = self.stationary_bad();
        let lk = lambda_pow(1.0 - self.p - self.r, k);
        let to_bad = pi * (1.0 - lk);
        let stay_bad = pi + (1.0 - pi) * lk;
        [[1.0 - to_bad, to_bad], [1.0 - stay_bad, stay_bad]]
    }
}

fn lambda_pow(lambda: f64, k: u64) -> f64 {
    lambda.powi(k.min(i32::MAX as u64) as i32)
}

/// The log-likelihood of `obs` (in send order) under `m`, the chain stationary at the first
/// packet. Negative infinity when `m` cannot give `obs`.
pub fn log_likelihood(obs: &[LossObs], m: Params) -> f64 {
    let e = m.emissions();
    let mut state = [1.0 - m.stationary_bad(), m.stationary_bad()];
    let mut last_step = obs.first().map_or(0, |o| o.step);
    // P^k for the gap between consecutive packets: most gaps repeat (a fixed send rate).
    let (mut cached_k, mut cached) = (u64::MAX, [[0.0; 2]; 2]);
    // The product of the packets' likelihoods, its logarithm taken only before it could
    // underflow: one `ln` per packet was most of the fit's time.
    let (mut ll, mut product) = (0.0, 1.0f64);
    for o in obs {
        let k = o.step - last_step;
        last_step = o.step;
        if k > 0 {
            if k != cached_k {
                cached_k = k;
                cached = m.power(k);
            }
            let bad = state[0] * cached[0][1] + state[1] * cached[1][1];
            state = [1.0 - bad, bad];
        }
        let (eg, eb) = if o.lost { (e[0], e[1]) } else { (1.0 - e[0], 1.0 - e[1]) };
        let c = state[0] * eg + state[1] * eb;
        if c <= 0.0 || c.is_nan() {
            return f64::NEG_INFINITY;
        }
        product *= c;
        if product < 1e-200 {
            ll += product.ln();
            product = 1.0;
        }
        let good = state[0] * eg / c;
        state = [good, 1.0 - good];
    }
    ll + product.ln()
}

/// Expected one-step transitions inside a gap, indexed `[x][y][u][v]`.
type GapSteps = [[[[f64; 2]; 2]; 2]; 2];

/// For a gap of `k` steps: `T[x][y][u][v] = P[u][v] * sum_{t<k} P^t[x][u] P^(k-1-t)[v][y]`, the
/// (unnormalised) expected u -> v steps inside a gap from x to y (see the module doc).
fn gap_transitions(m: Params, k: u64) -> GapSteps {
    let pi = [1.0 - m.stationary_bad(), m.stationary_bad()];
    let lambda = 1.0 - m.p - m.r;
    let s = if (1.0 - lambda).abs() < 1e-12 { k as f64 } else { (1.0 - lambda_pow(lambda, k)) / (1.0 - lambda) };
    let last = lambda_pow(lambda, k - 1) * k as f64;
    let one = [[1.0 - m.p, m.p], [m.r, 1.0 - m.r]];
    let delta = |a: usize, b: usize| if a == b { 1.0 } else { 0.0 };
    let mut t = [[[[0.0; 2]; 2]; 2]; 2];
    for (x, tx) in t.iter_mut().enumerate() {
        for (y, txy) in tx.iter_mut().enumerate() {
            for (u, txyu) in txy.iter_mut().enumerate() {
                for (v, cell) in txyu.iter_mut().enumerate() {
                    let (a, b) = (pi[u], delta(x, u) - pi[u]);
                    let (c, d) = (pi[y], delta(v, y) - pi[y]);
                    let sum = k as f64 * a * c + (a * d + b * c) * s + b * d * last;
                    *cell = one[u][v] * sum.max(0.0);
                }
            }
        }
    }
    t
}

/// The expected counts of one E-step.
#[derive(Default)]
struct Expected {
    /// One-step transitions u -> v.
    steps: [[f64; 2]; 2],
    /// Packets in each state, and lost packets in each state.
    packets: [f64; 2],
    lost: [f64; 2],
}

/// One E-step: scaled forward and backward passes, then the expected counts.
fn expect(obs: &[LossObs], m: Params) -> Expected {
    let n = obs.len();
    let e = m.emissions();
    let emit = |o: &LossObs| if o.lost { [e[0], e[1]] } else { [1.0 - e[0], 1.0 - e[1]] };
    let gap = |i: usize| obs[i].step - obs[i - 1].step;
    let mut cache: Vec<(u64, [[f64; 2]; 2])> = Vec::new();
    let mut power = |k: u64| match cache.iter().find(|(ck, _)| *ck == k) {
        Some((_, p)) => *p,
        None => {
            let p = m.power(k);
            if cache.len() < 64 {
                cache.push((k, p));
            }
            p
        }
    };
    // Forward: alpha[i] is the state's distribution given packets 0..=i; scale[i] its norm.
    let mut alpha = vec![[0.0f64; 2]; n];
    let mut scale = vec![1.0f64; n];
    let mut prior = [1.0 - m.stationary_bad(), m.stationary_bad()];
    for i in 0..n {
        if i > 0 {
            let pk = power(gap(i));
            let a = alpha[i - 1];
            prior = [a[0] * pk[0][0] + a[1] * pk[1][0], a[0] * pk[0][1] + a[1] * pk[1][1]];
        }
        let em = emit(&obs[i]);
        let joint = [prior[0] * em[0], prior[1] * em[1]];
        let c = (joint[0] + joint[1]).max(f64::MIN_POSITIVE);
        scale[i] = c;
        alpha[i] = [joint[0] / c, joint[1] / c];
    }
    // Backward, accumulating the counts as it goes.
    let mut out = Expected::default();
    let mut beta = [1.0f64; 2];
    let mut tcache: Vec<(u64, GapSteps)> = Vec::new();
    for i in (0..n).rev() {
        let gamma = [alpha[i][0] * beta[0], alpha[i][1] * beta[1]];
        let norm = gamma[0] + gamma[1];
        for (x, g) in gamma.iter().enumerate() {
            let g = g / norm;
            out.packets[x] += g;
            if obs[i].lost {
                out.lost[x] += g;
            }
        }
        if i == 0 {
            break;
        }
        let k = gap(i);
        let em = emit(&obs[i]);
        // w[x][y] = alpha[i-1][x] e_y(o_i) beta[i][y] / c_i: the pair's posterior over P^k[x][y].
        let w = |x: usize, y: usize| alpha[i - 1][x] * em[y] * beta[y] / scale[i];
        if k > 0 {
            let t = match tcache.iter().find(|(ck, _)| *ck == k) {
                Some((_, t)) => *t,
                None => {
                    let t = gap_transitions(m, k);
                    if tcache.len() < 64 {
                        tcache.push((k, t));
                    }
                    t
                }
            };
            for (x, tx) in t.iter().enumerate() {
                for (y, txy) in tx.iter().enumerate() {
                    let wxy = w(x, y);
                    for (row, trow) in out.steps.iter_mut().zip(txy) {
                        for (cell, t) in row.iter_mut().zip(trow) {
                            *cell += wxy * t;
                        }
                    }
                }
            }
        }
        // beta[i-1][x] = sum_y P^k[x][y] e_y(o_i) beta[i][y] / c_i.
        let pk = power(k);
        let nb = [
            (pk[0][0] * em[0] * beta[0] + pk[0][1] * em[1] * beta[1]) / scale[i],
            (pk[1][0] * em[0] * beta[0] + pk[1][1] * em[1] * beta[1]) / scale[i],
        ];
        // Scaled by the forward pass's norms, so that alpha[i] * beta[i] sums to 1 at every
        // packet: the posteriors come out normalised and nothing underflows.
        beta = nb;
    }
    out
}

/// The M-step: the chances that make the expected counts most likely, within the link's bounds.
fn maximise(x: &Expected, m: Params) -> Params {
    let from_good = x.steps[0][0] + x.steps[0][1];
    let from_bad = x.steps[1][0] + x.steps[1][1];
    let p = if from_good > 0.0 { x.steps[0][1] / from_good } else { m.p };
    let r = if from_bad > 0.0 { x.steps[1][0] / from_bad } else { m.r };
    let l = if x.packets[0] > 0.0 { x.lost[0] / x.packets[0] } else { m.l };
    let b = if x.packets[1] > 0.0 { x.lost[1] / x.packets[1] } else { m.h + (1.0 - m.h) * m.l };
    let h = if l < 1.0 { ((b - l) / (1.0 - l)).clamp(0.0, 1.0) } else { m.h };
    Params { p: p.clamp(1e-9, P_MAX), r: r.clamp(R_MIN, 1.0), h, l: l.clamp(0.0, 1.0 - 1e-12) }
}

/// Baum-Welch from `start`: the maximum-likelihood chain (a local maximum near `start`), its
/// log-likelihood and the iterations taken. Deterministic: a fixed iteration cap and tolerance.
pub fn baum_welch(obs: &[LossObs], start: Params) -> (Params, f64, usize) {
    let mut m = start;
    let mut ll = log_likelihood(obs, m);
    for it in 1..=EM_MAX_ITERATIONS {
        let next = maximise(&expect(obs, m), m);
        let next_ll = log_likelihood(obs, next);
        // EM never lowers the likelihood but for the first packet's term it leaves out: stop
        // there, or when the gain is below the tolerance.
        if next_ll.is_nan() || next_ll < ll {
            return (m, ll, it);
        }
        let gain = next_ll - ll;
        m = next;
        ll = next_ll;
        if gain < EM_TOLERANCE {
            return (m, ll, it);
        }
    }
    (m, ll, EM_MAX_ITERATIONS)
}

/// The standard deviations of the maximum-likelihood `m` over `obs`: the square roots of the
/// diagonal of the inverse of the observed information (minus the log-likelihood's Hessian,
/// by central differences). A value on its bound (a good state that loses nothing, `l = 0`, or
/// a bad state that loses everything) has no curvature to read: it is held there, left out of
/// the matrix, and its deviation given as 0. `None` when the Hessian of the rest is not
/// negative definite (a flat direction).
pub fn standard_errors(obs: &[LossObs], m: Params) -> Option<Params> {
    let x = [m.p, m.r, m.h, m.l];
    let bounds = [(0.0, P_MAX), (R_MIN, 1.0), (0.0, 1.0), (0.0, 1.0)];
    // Each step stays inside the bounds: half the room there is, at most 0.1 % of the value.
    let room: Vec<f64> = x.iter().zip(bounds).map(|(v, (lo, hi))| (v - lo).min(hi - v)).collect();
    let free: Vec<usize> = (0..4).filter(|i| room[*i] > 1e-7).collect();
    let step: Vec<f64> = (0..4).map(|i| (x[i].abs() * 1e-3).max(1e-7).min(room[i] / 2.0)).collect();
    let at = |d: &[(usize, f64)]| {
        let mut y = x;
        for (i, s) in d {
            y[*i] += s;
        }
        log_likelihood(obs, Params { p: y[0], r: y[1], h: y[2], l: y[3] })
    };
    let centre = at(&[]);
    let n = free.len();
    let mut info = vec![vec![0.0f64; n]; n];
    for (a, &i) in free.iter().enumerate() {
        let si = step[i];
        info[a][a] = -(at(&[(i, si)]) - 2.0 * centre + at(&[(i, -si)])) / (si * si);
        for (b, &j) in free.iter().enumerate().take(a) {
            let sj = step[j];
            let v = (at(&[(i, si), (j, sj)]) - at(&[(i, si), (j, -sj)]) - at(&[(i, -si), (j, sj)])
                + at(&[(i, -si), (j, -sj)]))
                / (4.0 * si * sj);
            info[a][b] = -v;
            info[b][a] = -v;
        }
    }
    let inv = invert(info)?;
    let mut sd = [0.0f64; 4];
    for (a, &i) in free.iter().enumerate() {
        let v = inv[a][a];
        if !(v.is_finite() && v > 0.0) {
            return None;
        }
        sd[i] = v.sqrt();
    }
    Some(Params { p: sd[0], r: sd[1], h: sd[2], l: sd[3] })
}

/// The inverse of a symmetric positive-definite matrix by Gauss-Jordan with partial pivoting;
/// `None` when it is singular or not positive definite.
fn invert(a: Vec<Vec<f64>>) -> Option<Vec<Vec<f64>>> {
    let n = a.len();
    if a.iter().enumerate().any(|(i, row)| row[i].is_nan() || row[i] <= 0.0 || !row[i].is_finite()) {
        return None;
    }
    let mut m = a;
    let mut inv: Vec<Vec<f64>> = (0..n).map(|i| (0..n).map(|j| if i == j { 1.0 } else { 0.0 }).collect()).collect();
    for c in 0..n {
        let pivot = (c..n).max_by(|x, y| m[*x][c].abs().total_cmp(&m[*y][c].abs()))?;
        if m[pivot][c].abs() < 1e-300 {
            return None;
        }
        m.swap(c, pivot);
        inv.swap(c, pivot);
        let d = m[c][c];
        for k in 0..n {
            m[c][k] /= d;
            inv[c][k] /= d;
        }
        for r in 0..n {
            if r != c {
                let f = m[r][c];
                for k in 0..n {
                    m[r][k] -= f * m[c][k];
                    inv[r][k] -= f * inv[c][k];
                }
            }
        }
    }
    Some(inv)
}

#[cfg(test)]
pub(in crate::fit) mod tests {
    use super::*;

    /// The expected counts the plain way: forward-backward over every 1 ms step of the chain,
    /// steps without a packet emitting nothing.
    fn dense(obs: &[LossObs], m: Params) -> Expected {
        let (first, last) = (obs[0].step, obs[obs.len() - 1].step);
        let steps = (last - first + 1) as usize;
        let e = m.emissions();
        let mut emit = vec![vec![[1.0, 1.0]]; steps];
        for o in obs {
            let em = if o.lost { [e[0], e[1]] } else { [1.0 - e[0], 1.0 - e[1]] };
            emit[(o.step - first) as usize].push(em);
        }
        let em = |t: usize| emit[t].iter().fold([1.0, 1.0], |a, b| [a[0] * b[0], a[1] * b[1]]);
        let one = [[1.0 - m.p, m.p], [m.r, 1.0 - m.r]];
        let pi = m.stationary_bad();
        let mut alpha = vec![[0.0; 2]; steps];
        let mut scale = vec![0.0; steps];
        for t in 0..steps {
            let prior = if t == 0 {
                [1.0 - pi, pi]
            } else {
                let a = alpha[t - 1];
                [a[0] * one[0][0] + a[1] * one[1][0], a[0] * one[0][1] + a[1] * one[1][1]]
            };
            let j = [prior[0] * em(t)[0], prior[1] * em(t)[1]];
            scale[t] = j[0] + j[1];
            alpha[t] = [j[0] / scale[t], j[1] / scale[t]];
        }
        let mut out = Expected::default();
        let mut beta = [1.0; 2];
        for t in (0..steps).rev() {
            for x in 0..2 {
                let g = alpha[t][x] * beta[x];
                for _ in 1..emit[t].len() {
                    out.packets[x] += g;
                }
            }
            if t == 0 {
                break;
            }
            for x in 0..2 {
                for y in 0..2 {
                    out.steps[x][y] += alpha[t - 1][x] * one[x][y] * em(t)[y] * beta[y] / scale[t];
                }
            }
            let nb: Vec<f64> =
                (0..2).map(|x| (0..2).map(|y| one[x][y] * em(t)[y] * beta[y]).sum::<f64>() / scale[t]).collect();
            beta = [nb[0], nb[1]];
        }
        out
    }

    /// Packets after each of `gaps` ms in turn (cycled) through a Gilbert-Elliott chain stepped
    /// per ms, with a generator of its own (xorshift): the model simulated apart from the fit.
    pub(in crate::fit) fn sample(m: Params, gaps: &[u64], packets: usize, seed: u64) -> Vec<LossObs> {
        let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut u = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        let (mut bad, mut step, mut out) = (false, 0u64, Vec::new());
        for i in 0..packets {
            let g = gaps[i % gaps.len()];
            for _ in 0..g {
                let x = u();
                bad = if bad { x >= m.r } else { x < m.p };
            }
            step += g;
            let lost = (bad && u() < m.h) || u() < m.l;
            out.push(LossObs { step, lost });
        }
        out
    }

    #[test]
    fn the_closed_form_gap_counts_equal_the_step_by_step_ones() {
        let m = Params { p: 0.03, r: 0.2, h: 0.7, l: 0.05 };
        // Gaps of 0 (two packets in one step), 1, several, and long idle ones.
        let obs = sample(Params { p: 0.05, r: 0.15, h: 0.9, l: 0.02 }, &[3, 0, 1, 7, 40, 2], 300, 5);
        let (fast, slow) = (expect(&obs, m), dense(&obs, m));
        for u in 0..2 {
            assert!((fast.packets[u] - slow.packets[u]).abs() < 1e-8, "{u}: {} {}", fast.packets[u], slow.packets[u]);
            for v in 0..2 {
                let (a, b) = (fast.steps[u][v], slow.steps[u][v]);
                assert!((a - b).abs() < 1e-7 * (1.0 + b), "{u}->{v}: {a} vs {b}");
            }
        }
        assert!(fast.steps[0][1] > 1.0 && fast.steps[1][0] > 1.0);
    }

    #[test]
    fn baum_welch_climbs_and_lands_near_the_truth() {
        let truth = Params { p: 0.004, r: 0.05, h: 0.8, l: 0.01 };
        let obs = sample(truth, &[2, 3], 200_000, 11);
        let start = Params { p: 0.01, r: 0.1, h: 0.5, l: 0.03 };
        let (m, ll, it) = baum_welch(&obs, start);
        assert!(ll > log_likelihood(&obs, start), "{m:?}");
        assert!(it > 1 && it <= EM_MAX_ITERATIONS);
        assert!((m.p - truth.p).abs() < 0.1 * truth.p, "{m:?}");
        assert!((m.r - truth.r).abs() < 0.1 * truth.r, "{m:?}");
        assert!((m.h - truth.h).abs() < 0.03, "{m:?}");
        assert!((m.l - truth.l).abs() < 0.002, "{m:?}");
        // The curvature's limit is small at 200,000 packets and the fit is within a few of it.
        let sd = standard_errors(&obs, m).expect("a maximum inside the bounds");
        assert!(sd.h > 0.0 && sd.h < 0.01, "{sd:?}");
        assert!((m.h - truth.h).abs() < 4.0 * sd.h, "{m:?} {sd:?}");
        assert!((m.p - truth.p).abs() < 4.0 * sd.p, "{m:?} {sd:?}");
        // The good state's loss held on its bound: no step below 0, the others still read.
        let on_bound = standard_errors(&obs, Params { l: 0.0, ..m }).expect("the rest is curved");
        assert_eq!(on_bound.l, 0.0);
        assert!(on_bound.h > 0.0 && on_bound.h < 0.01 && on_bound.p > 0.0, "{on_bound:?}");
    }
}
