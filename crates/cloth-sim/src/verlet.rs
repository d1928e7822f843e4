//! The explicit alternative of the second seed ("maximum stretch and bending springs"):
//! position Verlet on a mass-spring network built from the same mesh, followed by the iterated
//! maximum-stretch pass.

use crate::strain::{EdgeSet, StrainLimit};
use cloth_mesh::{ClothMesh, Vec3};
use rayon::prelude::*;

/// Settings of the explicit Verlet integrator.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VerletSettings {
    /// Largest time step (s); each frame is split into equal steps no larger than this.
    pub h: f64,
    /// Stiffness of the springs on mesh edges (N/m per spring). Low on purpose: the
    /// maximum-stretch pass, not the spring, keeps the cloth from stretching far.
    pub stretch_stiffness: f64,
    /// Stiffness of the bending springs between the two opposite vertices of every interior
    /// edge (the "two-ring" neighbours), N/m per spring.
    pub bend_stiffness: f64,
    /// Velocity damping rate (1/s): each step keeps a fraction `1 - damping * h` of the
    /// previous displacement.
    pub damping: f64,
    /// The maximum-stretch pass applied after every step.
    pub strain_limit: StrainLimit,
}

impl Default for VerletSettings {
    fn default() -> Self {
        Self {
            h: 1.0 / 600.0,
            stretch_stiffness: 50.0,
            bend_stiffness: 5.0,
            damping: 0.5,
            strain_limit: StrainLimit::default(),
        }
    }
}

/// A spring between two vertices with rest length (m) and stiffness (N/m).
#[derive(Clone, Copy, Debug)]
struct Spring {
    i: usize,
    j: usize,
    rest: f64,
    k: f64,
}

/// State of the Verlet integrator: springs, previous positions, scratch.
pub(crate) struct Verlet {
    springs: Vec<Spring>,
    /// Springs incident to each vertex, as (spring index, sign), CSR: deterministic gather.
    incident_start: Vec<usize>,
    incident: Vec<(usize, f64)>,
    pub edges: EdgeSet,
    pub x_prev: Vec<Vec3>,
    spring_force: Vec<Vec3>,
    accel: Vec<Vec3>,
}

impl Verlet {
    /// Builds the spring network of `mesh` (rest lengths from the (u, v) rest plane).
    pub fn new(
        mesh: &ClothMesh,
        settings: &VerletSettings,
        x: &[Vec3],
        v: &[Vec3],
        h: f64,
    ) -> Self {
        let uv = mesh.rest();
        let mut springs: Vec<Spring> = mesh
            .edges()
            .iter()
            .map(|e| Spring {
                i: e.v[0],
                j: e.v[1],
                rest: (uv[e.v[1]] - uv[e.v[0]]).norm(),
                k: settings.stretch_stiffness,
            })
            .collect();
        springs.extend(mesh.hinges().iter().map(|hg| Spring {
            i: hg.v[2],
            j: hg.v[3],
            rest: (uv[hg.v[3]] - uv[hg.v[2]]).norm(),
            k: settings.bend_stiffness,
        }));
        let n = x.len();
        let mut count = vec![0usize; n + 1];
        for s in &springs {
            count[s.i + 1] += 1;
            count[s.j + 1] += 1;
        }
        for i in 0..n {
            count[i + 1] += count[i];
        }
        let mut fill = count.clone();
        let mut incident = vec![(0, 0.0); count[n]];
        for (k, s) in springs.iter().enumerate() {
            incident[fill[s.i]] = (k, 1.0);
            fill[s.i] += 1;
            incident[fill[s.j]] = (k, -1.0);
            fill[s.j] += 1;
        }
        // Start with x_prev = x - h v so the first step sees the initial velocity.
        let x_prev = x.iter().zip(v).map(|(x, v)| x - v * h).collect();
        Self {
            springs,
            incident_start: count,
            incident,
            edges: EdgeSet::from_mesh(mesh),
            x_prev,
            spring_force: Vec::new(),
            accel: vec![Vec3::zeros(); n],
        }
    }

    /// One Verlet step of size h. `inv_mass[i] == 0` marks pinned vertices; `pinned` gives
    /// their positions at the end of the step. `gravity` in m/s^2.
    #[allow(clippy::too_many_arguments)]
    pub fn step(
        &mut self,
        x: &mut [Vec3],
        pinned: &[(usize, Vec3)],
        masses: &[f64],
        inv_mass: &[f64],
        gravity: &Vec3,
        settings: &VerletSettings,
        h: f64,
        h_prev: f64,
    ) {
        // Spring forces (parallel over springs), gathered per vertex in a fixed order.
        self.spring_force.resize(self.springs.len(), Vec3::zeros());
        self.spring_force
            .par_iter_mut()
            .zip(self.springs.par_iter())
            .for_each(|(f, s)| {
                let d = x[s.j] - x[s.i];
                let len = d.norm();
                *f = if len > 0.0 {
                    d * (s.k * (len - s.rest) / len)
                } else {
                    Vec3::zeros()
                };
            });
        let (start, inc, sf) = (&self.incident_start, &self.incident, &self.spring_force);
        self.accel.par_iter_mut().enumerate().for_each(|(i, a)| {
            let mut f = Vec3::zeros();
            for &(k, sign) in &inc[start[i]..start[i + 1]] {
                f += sf[k] * sign;
            }
            *a = f / masses[i] + gravity;
        });
        // Position Verlet with a variable step (time-corrected): the previous displacement is
        // scaled by h / h_prev.
        let keep = (1.0 - settings.damping * h).max(0.0) * (h / h_prev);
        let h2 = h * h;
        x.par_iter_mut()
            .zip(self.x_prev.par_iter_mut())
            .zip(self.accel.par_iter().zip(inv_mass.par_iter()))
            .for_each(|((x, xp), (a, &w))| {
                let old = *x;
                if w > 0.0 {
                    *x += (old - *xp) * keep + a * h2;
                }
                *xp = old;
            });
        for &(i, p) in pinned {
            x[i] = p;
        }
        self.edges.project(x, inv_mass, &settings.strain_limit);
    }
}
