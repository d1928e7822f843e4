//! The explicit alternative of the second seed ("maximum stretch and bending springs"):
//! position Verlet on a mass-spring network built from the same mesh, followed by the iterated
//! maximum-stretch pass.

use crate::step::check_range;
use crate::strain::{EdgeSet, StrainLimit};
use crate::{SimError, State, World};
use cloth_mesh::{Par, Vec3};
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
    /// Threads (default: the current rayon pool); results do not depend on it.
    pub par: Par,
}

impl Default for VerletSettings {
    fn default() -> Self {
        Self {
            h: 1.0 / 600.0,
            stretch_stiffness: 50.0,
            bend_stiffness: 5.0,
            damping: 0.5,
            strain_limit: StrainLimit::default(),
            par: Par::default(),
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

/// The explicit integrator: its settings, spring network and scratch. The state belongs to the
/// caller; the velocity of a vertex is its last step's displacement divided by that step
/// (position Verlet in velocity form, so a step of any size can follow any other).
pub struct Verlet {
    /// Settings; may be changed between steps.
    pub settings: VerletSettings,
    springs: Vec<Spring>,
    /// Springs incident to each vertex, as (spring index, sign), CSR: deterministic gather.
    incident_start: Vec<usize>,
    incident: Vec<(usize, f64)>,
    edges: EdgeSet,
    inv_mass: Vec<f64>,
    spring_force: Vec<Vec3>,
    accel: Vec<Vec3>,
    x_old: Vec<Vec3>,
    targets: Vec<Vec3>,
}

impl Verlet {
    /// Builds the spring network of `world`'s cloth (rest lengths from the (u, v) rest plane:
    /// edges at [`cloth_mesh::ClothMesh::edge_rest_lengths`], bending springs across each hinge
    /// unfolded flat, [`cloth_mesh::ClothMesh::hinge_rest`]).
    pub fn new(world: &World, settings: VerletSettings) -> Result<Self, SimError> {
        check_range("solver.verlet_h", settings.h, 0.0, f64::INFINITY)?;
        let mesh = &world.cloth.mesh;
        let mut springs: Vec<Spring> = mesh
            .edges()
            .iter()
            .zip(mesh.edge_rest_lengths())
            .map(|(e, &rest)| Spring {
                i: e.v[0],
                j: e.v[1],
                rest,
                k: settings.stretch_stiffness,
            })
            .collect();
        // Bending springs span the two triangles of each hinge unfolded flat in rest space.
        springs.extend(mesh.hinges().iter().enumerate().map(|(h, hg)| {
            let r = mesh.hinge_rest(h);
            Spring {
                i: hg.v[2],
                j: hg.v[3],
                rest: (r[3] - r[2]).norm(),
                k: settings.bend_stiffness,
            }
        }));
        let n = mesh.num_vertices();
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
        Ok(Self {
            settings,
            springs,
            incident_start: count,
            incident,
            edges: EdgeSet::from_mesh(mesh),
            inv_mass: world.inverse_masses(),
            spring_force: Vec::new(),
            accel: vec![Vec3::zeros(); n],
            x_old: Vec::new(),
            targets: Vec::new(),
        })
    }

    /// One Verlet step of size `h` (s): spring and gravity accelerations, the damped position
    /// update `x + (1 - d h) h v + a h^2`, pins moved to their targets at `t + h`, the
    /// maximum-stretch pass, and `v = (x_new - x) / h`. Colliders are ignored.
    pub fn step(&mut self, world: &World, state: &mut State, h: f64) -> Result<(), SimError> {
        check_range("h", h, 0.0, f64::INFINITY)?;
        let par = self.settings.par;
        par.install(|| self.advance(world, state, h));
        Ok(())
    }

    fn advance(&mut self, world: &World, state: &mut State, h: f64) {
        let x = &state.x;
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
        let masses = &world.cloth.masses;
        let gravity = world.cloth.external.gravity;
        self.accel.par_iter_mut().enumerate().for_each(|(i, a)| {
            let mut f = Vec3::zeros();
            for &(k, sign) in &inc[start[i]..start[i + 1]] {
                f += sf[k] * sign;
            }
            *a = f / masses[i] + gravity;
        });
        // Position Verlet with a variable step: the last displacement is `h_prev v`, scaled
        // to this step's length and damped.
        let keep = (1.0 - self.settings.damping * h).max(0.0) * h;
        let h2 = h * h;
        self.x_old.clone_from(&state.x);
        state
            .x
            .par_iter_mut()
            .zip(state.v.par_iter())
            .zip(self.accel.par_iter().zip(self.inv_mass.par_iter()))
            .for_each(|((x, v), (a, &w))| {
                if w > 0.0 {
                    *x += v * keep + a * h2;
                }
            });
        for pin in &world.pins {
            pin.targets(state.t + h, &mut self.targets);
            for (&i, p) in pin.vertices.iter().zip(&self.targets) {
                state.x[i] = *p;
            }
        }
        self.edges
            .project(&mut state.x, &self.inv_mass, &self.settings.strain_limit);
        for ((v, x), x0) in state.v.iter_mut().zip(&state.x).zip(&self.x_old) {
            *v = (x - x0) / h;
        }
        state.t += h;
    }

    /// Largest edge stretch and compression at `x` (dimensionless).
    pub fn edge_extremes(&self, x: &[Vec3]) -> (f64, f64) {
        self.edges.extremes(x)
    }
}
