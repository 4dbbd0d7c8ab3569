//! The numerical tools the estimators share: a Nelder-Mead minimiser, the two-sample
//! Kolmogorov-Smirnov statistic, quantiles, the normal CDF.

/// Minimises `f` from `start` by Nelder-Mead's simplex (initial steps `step` per coordinate),
/// for at most `max_evals` evaluations or until the simplex's values agree within `tol`.
/// Returns the best point and its value. `f` may return infinity to refuse a point.
pub fn nelder_mead(
    f: &mut dyn FnMut(&[f64]) -> f64,
    start: &[f64],
    step: &[f64],
    max_evals: usize,
    tol: f64,
) -> (Vec<f64>, f64) {
    let n = start.len();
    let mut simplex: Vec<(Vec<f64>, f64)> = Vec::with_capacity(n + 1);
    let mut evals = 0;
    let mut eval = |x: &[f64], evals: &mut usize| {
        *evals += 1;
        let v = f(x);
        if v.is_nan() {
            f64::INFINITY
        } else {
            v
        }
    };
    let v0 = eval(start, &mut evals);
    simplex.push((start.to_vec(), v0));
    for i in 0..n {
        let mut x = start.to_vec();
        x[i] += step[i];
        let v = eval(&x, &mut evals);
        simplex.push((x, v));
    }
    while evals < max_evals {
        simplex.sort_by(|a, b| a.1.total_cmp(&b.1));
        let (best, worst) = (simplex[0].1, simplex[n].1);
        if (worst - best).abs() <= tol * (1.0 + best.abs()) {
            break;
        }
        let centroid: Vec<f64> = (0..n).map(|i| simplex[..n].iter().map(|p| p.0[i]).sum::<f64>() / n as f64).collect();
        let towards =
            |t: f64, from: &[f64]| -> Vec<f64> { centroid.iter().zip(from).map(|(c, w)| c + t * (w - c)).collect() };
        let worst_x = simplex[n].0.clone();
        let reflected = towards(-1.0, &worst_x);
        let vr = eval(&reflected, &mut evals);
        if vr < simplex[0].1 {
            let expanded = towards(-2.0, &worst_x);
            let ve = eval(&expanded, &mut evals);
            simplex[n] = if ve < vr { (expanded, ve) } else { (reflected, vr) };
        } else if vr < simplex[n - 1].1 {
            simplex[n] = (reflected, vr);
        } else {
            let (contracted, vc) = if vr < worst {
                let c = towards(-0.5, &worst_x);
                let v = eval(&c, &mut evals);
                (c, v)
            } else {
                let c = towards(0.5, &worst_x);
                let v = eval(&c, &mut evals);
                (c, v)
            };
            if vc < worst.min(vr) {
                simplex[n] = (contracted, vc);
            } else {
                // Shrink towards the best.
                let best_x = simplex[0].0.clone();
                for p in simplex.iter_mut().skip(1) {
                    let x: Vec<f64> = best_x.iter().zip(&p.0).map(|(b, w)| b + 0.5 * (w - b)).collect();
                    let v = eval(&x, &mut evals);
                    *p = (x, v);
                }
            }
        }
    }
    simplex.sort_by(|a, b| a.1.total_cmp(&b.1));
    simplex.swap_remove(0)
}

/// The two-sample Kolmogorov-Smirnov statistic: the largest distance between the empirical
/// distribution functions of `a` and `b` (each sorted ascending). 0 when either is empty.
pub fn ks_sorted(a: &[f64], b: &[f64]) -> f64 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let (mut i, mut j, mut d) = (0usize, 0usize, 0.0f64);
    while i < a.len() && j < b.len() {
        let x = a[i].min(b[j]);
        while i < a.len() && a[i] <= x {
            i += 1;
        }
        while j < b.len() && b[j] <= x {
            j += 1;
        }
        d = d.max((i as f64 / na - j as f64 / nb).abs());
    }
    d
}

/// `ks_sorted` on unsorted samples.
pub fn ks(a: &[f64], b: &[f64]) -> f64 {
    ks_sorted(&sorted(a), &sorted(b))
}

pub fn sorted(v: &[f64]) -> Vec<f64> {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    s
}

/// The `q` quantile of sorted `v` (linear between order statistics); 0 when empty.
pub fn quantile_sorted(v: &[f64], q: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let pos = q.clamp(0.0, 1.0) * (v.len() - 1) as f64;
    let (lo, frac) = (pos.floor() as usize, pos.fract());
    if lo + 1 < v.len() {
        v[lo] + frac * (v[lo + 1] - v[lo])
    } else {
        v[lo]
    }
}

/// The median absolute deviation from the median (unscaled): a spread that a few outliers
/// (reordered packets) do not move. Reorders `v`.
pub fn mad(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let mid = v.len() / 2;
    let median = *v.select_nth_unstable_by(mid, f64::total_cmp).1;
    for x in v.iter_mut() {
        *x = (*x - median).abs();
    }
    *v.select_nth_unstable_by(mid, f64::total_cmp).1
}

/// The standard normal distribution function (Abramowitz and Stegun 7.1.26; error below 1.5e-7).
pub fn normal_cdf(z: f64) -> f64 {
    let x = z.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let poly =
        t * (0.254_829_592 + t * (-0.284_496_736 + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erf = 1.0 - poly * (-x * x).exp();
    if z >= 0.0 {
        0.5 * (1.0 + erf)
    } else {
        0.5 * (1.0 - erf)
    }
}

/// The logistic function, mapping the whole line onto (0, 1).
pub fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// Its inverse, for starting points (clamped off 0 and 1).
pub fn logit(p: f64) -> f64 {
    let p = p.clamp(1e-9, 1.0 - 1e-9);
    (p / (1.0 - p)).ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nelder_mead_finds_the_minimum_of_a_valley() {
        let mut rosenbrock = |x: &[f64]| (1.0 - x[0]).powi(2) + 100.0 * (x[1] - x[0] * x[0]).powi(2);
        let (x, v) = nelder_mead(&mut rosenbrock, &[-1.2, 1.0], &[0.5, 0.5], 5000, 1e-14);
        assert!((x[0] - 1.0).abs() < 1e-3 && (x[1] - 1.0).abs() < 1e-3 && v < 1e-6, "{x:?} {v}");
    }

    #[test]
    fn ks_is_the_largest_gap_between_the_distribution_functions() {
        assert_eq!(ks(&[1.0, 2.0, 3.0], &[1.0, 2.0, 3.0]), 0.0);
        assert_eq!(ks(&[1.0, 2.0], &[3.0, 4.0]), 1.0);
        assert!((ks(&[1.0, 2.0, 3.0, 4.0], &[3.0, 4.0, 5.0, 6.0]) - 0.5).abs() < 1e-12);
        assert!((ks(&[1.0, 1.0, 2.0], &[1.0, 2.0, 2.0]) - 1.0 / 3.0).abs() < 1e-12, "ties step together");
        assert_eq!(ks(&[], &[1.0]), 0.0);
    }

    #[test]
    fn helpers_agree_with_known_values() {
        assert!((normal_cdf(0.0) - 0.5).abs() < 1e-7);
        assert!((normal_cdf(1.96) - 0.975).abs() < 1e-4);
        assert!((normal_cdf(-1.0) - 0.158_655).abs() < 1e-5);
        assert_eq!(quantile_sorted(&[1.0, 2.0, 3.0], 0.5), 2.0);
        assert_eq!(quantile_sorted(&[1.0, 3.0], 0.25), 1.5);
        assert_eq!(mad(&mut [1.0, 2.0, 3.0, 4.0, 100.0]), 1.0);
        assert!((sigmoid(logit(0.3)) - 0.3).abs() < 1e-12);
    }
}
