//! Random SPD block systems shared by the integration tests.
#![allow(dead_code)]

use cloth_mesh::{GridPattern, grid};
use cloth_solver::{BlockMatrix, Constraint, Matrix3, Vector3};

/// SplitMix64: tiny deterministic generator so proptest only has to draw a seed.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [lo, hi).
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        let u = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        lo + (hi - lo) * u
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    pub fn vec3(&mut self, scale: f64) -> Vector3<f64> {
        Vector3::new(
            self.uniform(-scale, scale),
            self.uniform(-scale, scale),
            self.uniform(-scale, scale),
        )
    }
}

/// A random SPD block system: `A = diag(mass) + sum_e K_e`, `K_e = k B^T B` over random
/// 2-4 particle stencils, with its assembly data kept for the plan path.
pub struct System {
    pub n: usize,
    pub pairs: Vec<(usize, usize)>,
    pub entries: Vec<(usize, usize)>,
    pub blocks: Vec<Matrix3<f64>>,
    pub masses: Vec<Matrix3<f64>>,
    pub a: BlockMatrix,
    pub b: Vec<Vector3<f64>>,
    pub z: Vec<Vector3<f64>>,
    pub constraints: Vec<Constraint>,
}

pub fn random_constraint(rng: &mut Rng, kind: usize) -> Constraint {
    loop {
        let c = match kind % 4 {
            0 => Ok(Constraint::Free),
            1 => Constraint::plane(rng.vec3(1.0)),
            2 => Constraint::line(rng.vec3(1.0), rng.vec3(1.0)),
            _ => Ok(Constraint::Fixed),
        };
        if let Ok(c) = c {
            return c;
        }
    }
}

/// `n` particles, `n_elems` elements of stiffness up to `k_max`, random constraints of all
/// kinds (about `constrained_fraction` of the particles), random `b` and `z`.
pub fn random_system(
    n: usize,
    n_elems: usize,
    k_max: f64,
    constrained_fraction: f64,
    seed: u64,
) -> System {
    let mut rng = Rng::new(seed);
    let mut pairs = Vec::new();
    let mut entries = Vec::new();
    let mut blocks = Vec::new();
    for _ in 0..n_elems {
        let size = 2 + rng.below(3).min(n.saturating_sub(2));
        let mut st: Vec<usize> = Vec::new();
        while st.len() < size.min(n) {
            let v = rng.below(n);
            if !st.contains(&v) {
                st.push(v);
            }
        }
        let s = st.len();
        let m = 1 + rng.below(3 * s);
        let bmat = nalgebra::DMatrix::from_fn(m, 3 * s, |_, _| rng.uniform(-1.0, 1.0));
        let k = rng.uniform(0.0, k_max);
        let kmat = (bmat.transpose() * &bmat) * k;
        for a in 0..s {
            for c in a..s {
                let blk: Matrix3<f64> = kmat.fixed_view::<3, 3>(3 * a, 3 * c).into_owned();
                entries.push((st[a], st[c]));
                blocks.push(blk);
                if a != c {
                    pairs.push((st[a], st[c]));
                }
            }
        }
    }
    let masses: Vec<Matrix3<f64>> = (0..n)
        .map(|_| Matrix3::identity() * rng.uniform(0.5, 2.0))
        .collect();
    let mut a = BlockMatrix::new(n, &pairs).expect("valid pairs");
    for (i, m) in masses.iter().enumerate() {
        a.add_diagonal(i, m);
    }
    for (&(i, j), blk) in entries.iter().zip(&blocks) {
        a.add_block(i, j, blk).expect("in pattern");
    }
    let constraints = (0..n)
        .map(|_| {
            if rng.uniform(0.0, 1.0) < constrained_fraction {
                let kind = 1 + rng.below(3);
                random_constraint(&mut rng, kind)
            } else {
                Constraint::Free
            }
        })
        .collect();
    let b = (0..n).map(|_| rng.vec3(1.0)).collect();
    let z = (0..n).map(|_| rng.vec3(1.0)).collect();
    System {
        n,
        pairs,
        entries,
        blocks,
        masses,
        a,
        b,
        z,
        constraints,
    }
}

pub fn norm(v: &[Vector3<f64>]) -> f64 {
    v.iter().map(|x| x.norm_squared()).sum::<f64>().sqrt()
}

pub fn to_flat(v: &[Vector3<f64>]) -> nalgebra::DVector<f64> {
    nalgebra::DVector::from_iterator(3 * v.len(), v.iter().flat_map(|x| x.iter().copied()))
}

/// Elasticity-like SPD block matrix on a `side x side` grid of spacing `1/(side-1)`: mass
/// `m` per particle plus, for every edge and one diagonal per cell, a spring block
/// `k (d d^T + 0.1 I)` along the edge direction `d` (a vector Laplacian, stiff relative to
/// the mass as in cloth). Returns the matrix and the grid positions (z = 0 plane, slightly
/// waved out of plane so the rotation modes are not degenerate).
pub fn grid_system(side: usize, m: f64, k: f64) -> (BlockMatrix, Vec<Vector3<f64>>) {
    let n = side * side;
    let id = |r: usize, c: usize| r * side + c;
    let hgrid = 1.0 / (side - 1) as f64;
    let pos: Vec<Vector3<f64>> = (0..n)
        .map(|i| {
            let (r, c) = ((i / side) as f64 * hgrid, (i % side) as f64 * hgrid);
            Vector3::new(c, r, 0.05 * (3.0 * c).sin() * (2.0 * r).cos())
        })
        .collect();
    let mut pairs = Vec::new();
    for r in 0..side {
        for c in 0..side {
            if c + 1 < side {
                pairs.push((id(r, c), id(r, c + 1)));
            }
            if r + 1 < side {
                pairs.push((id(r, c), id(r + 1, c)));
            }
            if r + 1 < side && c + 1 < side {
                pairs.push((id(r, c), id(r + 1, c + 1)));
            }
        }
    }
    let mut a = BlockMatrix::new(n, &pairs).expect("valid pairs");
    for i in 0..n {
        a.add_diagonal(i, &(Matrix3::identity() * m));
    }
    for &(i, j) in &pairs {
        let d = (pos[j] - pos[i]).normalize();
        let kb = (d * d.transpose() + Matrix3::identity() * 0.1) * k;
        a.add_diagonal(i, &kb);
        a.add_diagonal(j, &kb);
        a.add_block(i, j, &(-kb)).expect("in pattern");
    }
    (a, pos)
}

/// The particle positions of cloth-forces' test sheet (`tests/common/solver_problem.rs` there):
/// a `side x side` grid over 1 m (alternating diagonals), stretched by 1% along x and waved
/// out of plane, `phase` shifting the wave.
pub fn sheet_positions(side: usize, phase: f64) -> Vec<Vector3<f64>> {
    let mesh = grid(side, side, 1.0, 1.0, GridPattern::Alternating).expect("valid grid");
    mesh.positions()
        .iter()
        .map(|p| {
            Vector3::new(
                p.x * 1.01,
                0.1 * (4.0 * p.x + phase).sin() * (3.0 * p.z - phase).cos(),
                p.z,
            )
        })
        .collect()
}
