//! Pure statistics of the suite: median, power-law fit, spread ratio.

use serde::Serialize;

/// Median of `values` (mean of the two middle values for an even count); `None` when empty
/// or when any value is NaN.
pub fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() || values.iter().any(|x| x.is_nan()) {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    Some(if v.len() % 2 == 1 {
        v[m]
    } else {
        0.5 * (v[m - 1] + v[m])
    })
}

/// Index of the lower-median element of `values` (the run whose other figures are reported).
pub fn median_index(values: &[f64]) -> Option<usize> {
    if values.is_empty() || values.iter().any(|x| x.is_nan()) {
        return None;
    }
    let mut idx: Vec<usize> = (0..values.len()).collect();
    idx.sort_by(|&a, &b| values[a].total_cmp(&values[b]).then(a.cmp(&b)));
    Some(idx[(values.len() - 1) / 2])
}

/// A power law `t = c n^p` fitted by least squares on `(ln n, ln t)`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PowerFit {
    /// Exponent `p`.
    pub exponent: f64,
    /// Prefactor `c` (units of `t`).
    pub prefactor: f64,
    /// Coefficient of determination of the log-log fit (1 = exact).
    pub r_squared: f64,
    /// Points used.
    pub points: usize,
}

impl PowerFit {
    /// The fitted `t` at `n`.
    pub fn at(&self, n: f64) -> f64 {
        self.prefactor * n.powf(self.exponent)
    }
}

/// Least-squares fit of `ln t = ln c + p ln n` over the points `(n, t)`. `None` unless there
/// are at least two points, all positive and finite, with at least two distinct `n`.
pub fn fit_power_law(points: &[(f64, f64)]) -> Option<PowerFit> {
    if points.len() < 2
        || points
            .iter()
            .any(|&(n, t)| !(n.is_finite() && t.is_finite() && n > 0.0 && t > 0.0))
    {
        return None;
    }
    let k = points.len() as f64;
    let xs: Vec<f64> = points.iter().map(|p| p.0.ln()).collect();
    let ys: Vec<f64> = points.iter().map(|p| p.1.ln()).collect();
    let mx = xs.iter().sum::<f64>() / k;
    let my = ys.iter().sum::<f64>() / k;
    let sxx: f64 = xs.iter().map(|x| (x - mx).powi(2)).sum();
    if sxx <= 1e-300 {
        return None;
    }
    let sxy: f64 = xs.iter().zip(&ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    let p = sxy / sxx;
    let a = my - p * mx;
    let ss_tot: f64 = ys.iter().map(|y| (y - my).powi(2)).sum();
    let ss_res: f64 = xs
        .iter()
        .zip(&ys)
        .map(|(x, y)| (y - a - p * x).powi(2))
        .sum();
    Some(PowerFit {
        exponent: p,
        prefactor: a.exp(),
        r_squared: if ss_tot > 0.0 {
            1.0 - ss_res / ss_tot
        } else {
            1.0
        },
        points: points.len(),
    })
}

/// `max / min` of positive finite values (`None` when empty or any value is not).
pub fn spread_ratio(values: &[f64]) -> Option<f64> {
    if values.is_empty() || values.iter().any(|x| !(x.is_finite() && *x > 0.0)) {
        return None;
    }
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    Some(max / min)
}

/// Smallest stable `k` in `lo_unstable + 1 ..= hi_stable` by bisection, assuming stability
/// is monotone in `k` and `stable(hi_stable)` holds, to a relative resolution: it stops once
/// `hi - lo <= resolution * hi` (or they are adjacent), so the returned stable `k` is at most
/// a fraction `resolution` above the threshold. Returns it with the probes made,
/// `(k, stable)`, in order.
pub fn bisect_min_stable(
    lo_unstable: usize,
    hi_stable: usize,
    resolution: f64,
    mut stable: impl FnMut(usize) -> bool,
) -> (usize, Vec<(usize, bool)>) {
    let (mut lo, mut hi) = (lo_unstable, hi_stable);
    let mut probes = Vec::new();
    while hi > lo + 1 && (hi - lo) as f64 > resolution * hi as f64 {
        let mid = lo + (hi - lo) / 2;
        let ok = stable(mid);
        probes.push((mid, ok));
        if ok {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    (hi, probes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_odd_even_and_nan() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[7.0]), Some(7.0));
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[1.0, f64::NAN]), None);
    }

    #[test]
    fn median_index_points_at_lower_median() {
        let v = [5.0, 1.0, 3.0, 9.0];
        assert_eq!(median_index(&v), Some(2)); // 3.0 is the lower middle of 1,3,5,9
        let w = [2.0, 8.0, 4.0];
        assert_eq!(median_index(&w), Some(2));
        assert_eq!(median_index(&[]), None);
    }

    #[test]
    fn fit_recovers_exponent_and_prefactor_of_exact_power_law() {
        for &(c, p) in &[(2.0e-5, 1.5), (3.0, 1.0), (0.7, 1.2), (1e-3, 2.0)] {
            let pts: Vec<(f64, f64)> = [484.0, 900.0, 2601.0, 7396.0, 19881.0, 50176.0]
                .iter()
                .map(|&n: &f64| (n, c * n.powf(p)))
                .collect();
            let fit = fit_power_law(&pts).unwrap();
            assert!((fit.exponent - p).abs() < 1e-10, "{fit:?}");
            assert!((fit.prefactor / c - 1.0).abs() < 1e-8, "{fit:?}");
            assert!((fit.r_squared - 1.0).abs() < 1e-12);
            assert!((fit.at(1000.0) / (c * 1000f64.powf(p)) - 1.0).abs() < 1e-8);
        }
    }

    #[test]
    fn fit_with_multiplicative_noise_stays_near_exponent() {
        // Deterministic +-10% wiggle: the slope error is bounded by the noise over the span.
        let pts: Vec<(f64, f64)> = (0..8)
            .map(|i| {
                let n = 500.0 * 2f64.powi(i);
                let wiggle = if i % 2 == 0 { 1.1 } else { 0.9 };
                (n, 1e-4 * n.powf(1.3) * wiggle)
            })
            .collect();
        let fit = fit_power_law(&pts).unwrap();
        assert!((fit.exponent - 1.3).abs() < 0.05, "{fit:?}");
        assert!(fit.r_squared < 1.0 && fit.r_squared > 0.95);
    }

    #[test]
    fn fit_rejects_degenerate_input() {
        assert!(fit_power_law(&[(100.0, 1.0)]).is_none());
        assert!(fit_power_law(&[(100.0, 1.0), (100.0, 2.0)]).is_none());
        assert!(fit_power_law(&[(100.0, 1.0), (200.0, 0.0)]).is_none());
        assert!(fit_power_law(&[(100.0, 1.0), (200.0, f64::NAN)]).is_none());
    }

    #[test]
    fn spread_ratio_is_max_over_min() {
        assert_eq!(spread_ratio(&[2.0, 3.0, 1.5]), Some(2.0));
        assert_eq!(spread_ratio(&[1.0]), Some(1.0));
        assert_eq!(spread_ratio(&[1.0, -1.0]), None);
        assert_eq!(spread_ratio(&[]), None);
    }

    #[test]
    fn bisection_finds_threshold_with_log_probes() {
        for threshold in 2..=64 {
            let (k, probes) = bisect_min_stable(1, 64, 0.0, |k| k >= threshold);
            assert_eq!(k, threshold);
            assert!(probes.len() <= 6, "{threshold}: {probes:?}");
            assert!(probes.iter().all(|&(k, ok)| ok == (k >= threshold)));
        }
        // Already adjacent: no probe.
        assert_eq!(
            bisect_min_stable(3, 4, 0.0, |_| unreachable!()),
            (4, vec![])
        );
    }

    #[test]
    fn bisection_stops_at_relative_resolution() {
        for threshold in 321..=640 {
            let (k, probes) = bisect_min_stable(320, 640, 0.05, |k| k >= threshold);
            assert!(
                k >= threshold && k as f64 <= threshold as f64 * 1.06,
                "{threshold} -> {k}"
            );
            assert!(probes.len() <= 5, "{threshold}: {probes:?}");
        }
    }
}
