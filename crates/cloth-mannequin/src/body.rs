//! The mannequin as a signed distance field: a smooth union of ellipsoids, round cones and
//! rounded boxes (metres, y up, facing +z, the body's left at +x), and its skeleton.
//!
//! Proportions follow an adult of 1.70 m: head top at 1.70 m, shoulders at 1.41 m, waist at
//! 1.05 m, hips at 0.90 m, knees at 0.48 m, ankles at 0.08 m, feet on y = 0. The arms hang
//! 45 degrees from the vertical (A-pose).

use cloth_mesh::nalgebra::{Matrix3, Vector3};

/// A 3D vector (m).
pub type V3 = Vector3<f64>;

/// Unit direction of the left arm in the A-pose: 45 degrees down from horizontal, outward.
pub fn arm_dir(side: f64) -> V3 {
    V3::new(side, -1.0, 0.0).normalize()
}

/// One skeleton joint: name, parent index, world position in the bind pose (m).
#[derive(Clone, Debug)]
pub struct Joint {
    /// glTF node name.
    pub name: String,
    /// Index of the parent joint (`None` for the root).
    pub parent: Option<usize>,
    /// World position in the bind pose (m); the bind pose has no joint rotation.
    pub position: V3,
}

/// Shoulder (glenohumeral joint) centre of the left arm (m).
const SHOULDER: [f64; 3] = [0.165, 1.405, -0.012];
/// Upper arm, forearm and hand lengths (m).
const UPPER_ARM: f64 = 0.29;
const FOREARM: f64 = 0.25;
const HAND: f64 = 0.18;
/// Hip joint, knee and ankle centres of the left leg (m).
const HIP: [f64; 3] = [0.09, 0.90, 0.0];
const KNEE: [f64; 3] = [0.10, 0.48, 0.005];
const ANKLE: [f64; 3] = [0.11, 0.08, -0.01];

fn v(a: [f64; 3]) -> V3 {
    V3::new(a[0], a[1], a[2])
}
fn mirror(p: V3, side: f64) -> V3 {
    V3::new(p.x * side, p.y, p.z)
}

/// Elbow, wrist and hand tip of the arm on `side` (+1 left, -1 right).
pub fn arm_points(side: f64) -> (V3, V3, V3, V3) {
    let s = mirror(v(SHOULDER), side);
    let d = arm_dir(side);
    let e = s + d * UPPER_ARM;
    let w = e + d * FOREARM;
    (s, e, w, w + d * HAND)
}

/// The skeleton: 19 joints, parents before children (glTF node order of the file).
pub fn skeleton() -> Vec<Joint> {
    let mut j: Vec<Joint> = Vec::new();
    let mut add = |name: &str, parent: Option<usize>, p: V3| {
        j.push(Joint {
            name: name.to_string(),
            parent,
            position: p,
        });
        j.len() - 1
    };
    let hips = add("hips", None, V3::new(0.0, 0.93, -0.01));
    let spine = add("spine", Some(hips), V3::new(0.0, 1.04, -0.015));
    let chest = add("chest", Some(spine), V3::new(0.0, 1.20, -0.015));
    let neck = add("neck", Some(chest), V3::new(0.0, 1.43, -0.015));
    add("head", Some(neck), V3::new(0.0, 1.53, 0.0));
    for (side, tag) in [(1.0, "l"), (-1.0, "r")] {
        let (s, e, w, _) = arm_points(side);
        let clav = add(
            &format!("shoulder_{tag}"),
            Some(chest),
            V3::new(0.03 * side, 1.385, -0.015),
        );
        let up = add(&format!("upper_arm_{tag}"), Some(clav), s);
        let fore = add(&format!("forearm_{tag}"), Some(up), e);
        add(&format!("hand_{tag}"), Some(fore), w);
    }
    for (side, tag) in [(1.0, "l"), (-1.0, "r")] {
        let thigh = add(&format!("thigh_{tag}"), Some(hips), mirror(v(HIP), side));
        let shin = add(&format!("shin_{tag}"), Some(thigh), mirror(v(KNEE), side));
        add(&format!("foot_{tag}"), Some(shin), mirror(v(ANKLE), side));
    }
    j
}

/// Index of the joint called `name` in [`skeleton`].
pub fn joint_index(joints: &[Joint], name: &str) -> usize {
    joints
        .iter()
        .position(|j| j.name == name)
        .unwrap_or_else(|| panic!("no joint {name}"))
}

/// A solid primitive of the body.
#[derive(Clone, Debug)]
enum Prim {
    /// Ellipsoid: centre, local axes (columns of `axes`), radii along them.
    Ellipsoid { c: V3, axes: Matrix3<f64>, r: V3 },
    /// Round cone: sphere of radius ra at a swept to radius rb at b (a capsule when equal).
    RoundCone { a: V3, b: V3, ra: f64, rb: f64 },
    /// Axis-aligned box of half extents `h` with edges rounded by `round`.
    RoundBox { c: V3, h: V3, round: f64 },
}

impl Prim {
    fn ellipsoid(c: V3, r: V3) -> Prim {
        Prim::Ellipsoid {
            c,
            axes: Matrix3::identity(),
            r,
        }
    }

    /// Signed distance (m), negative inside; exact for round cones and boxes, a close bound
    /// near the surface for ellipsoids (Quilez's k0 (k0 - 1) / k1 estimate).
    fn sdf(&self, p: &V3) -> f64 {
        match self {
            Prim::Ellipsoid { c, axes, r } => {
                let q = axes.transpose() * (p - c);
                let k0 = q.component_div(r).norm();
                let k1 = q.component_div(&r.component_mul(r)).norm();
                if k1 == 0.0 {
                    -r.min()
                } else {
                    k0 * (k0 - 1.0) / k1
                }
            }
            Prim::RoundCone { a, b, ra, rb } => round_cone(p, a, b, *ra, *rb),
            Prim::RoundBox { c, h, round } => {
                let q = (p - c).abs() - (h - V3::repeat(*round));
                let outside = q.map(|x| x.max(0.0)).norm();
                outside + q.max().min(0.0) - round
            }
        }
    }
}

/// Exact signed distance to a round cone (Quilez, "distance functions": sdRoundCone with two
/// end points).
fn round_cone(p: &V3, a: &V3, b: &V3, r1: f64, r2: f64) -> f64 {
    let ba = b - a;
    let l2 = ba.dot(&ba);
    let rr = r1 - r2;
    let a2 = l2 - rr * rr;
    let il2 = 1.0 / l2;
    let pa = p - a;
    let y = pa.dot(&ba);
    let z = y - l2;
    let xv = pa * l2 - ba * y;
    let x2 = xv.dot(&xv);
    let y2 = y * y * l2;
    let z2 = z * z * l2;
    let k = rr.signum() * rr * rr * x2;
    if z.signum() * a2 * z2 > k {
        return (x2 + z2).sqrt() * il2 - r2;
    }
    if y.signum() * a2 * y2 < k {
        return (x2 + y2).sqrt() * il2 - r1;
    }
    ((x2 * a2 * il2).sqrt() + y * rr) * il2 - r1
}

/// Polynomial smooth minimum with blend radius k (m) (Quilez, "smooth minimum").
fn smin(a: f64, b: f64, k: f64) -> f64 {
    let h = (k - (a - b).abs()).max(0.0) / k;
    a.min(b) - h * h * k * 0.25
}

/// The body: primitives grouped into the core (torso, neck, head) and four limbs, each with the
/// joint that carries it.
pub struct Body {
    core: Vec<Part>,
    limbs: Vec<Vec<Part>>,
    /// Blend radius (m) between each limb and the core.
    attach: Vec<f64>,
}

/// A primitive, the joint carrying it, and its blend radius (m) with the primitives before it
/// in its chain (0: a hard union).
type Part = (Prim, usize, f64);

/// The torso, neck and head.
fn core_parts(j: &dyn Fn(&str) -> usize) -> Vec<Part> {
    vec![
        // Pelvis and buttocks.
        (
            Prim::ellipsoid(V3::new(0.0, 0.92, -0.012), V3::new(0.172, 0.12, 0.128)),
            j("hips"),
            0.0,
        ),
        // Abdomen (natural waist at 1.05 m).
        (
            Prim::ellipsoid(V3::new(0.0, 1.06, -0.008), V3::new(0.142, 0.16, 0.104)),
            j("spine"),
            0.08,
        ),
        // Rib cage.
        (
            Prim::ellipsoid(V3::new(0.0, 1.255, 0.0), V3::new(0.172, 0.19, 0.127)),
            j("chest"),
            0.08,
        ),
        // Neck.
        (
            Prim::RoundCone {
                a: V3::new(0.0, 1.40, -0.02),
                b: V3::new(0.0, 1.54, -0.005),
                ra: 0.058,
                rb: 0.05,
            },
            j("neck"),
            0.05,
        ),
        // Head (top at 1.70 m) and jaw.
        (
            Prim::ellipsoid(V3::new(0.0, 1.595, 0.012), V3::new(0.077, 0.105, 0.096)),
            j("head"),
            0.03,
        ),
        (
            Prim::ellipsoid(V3::new(0.0, 1.535, 0.04), V3::new(0.055, 0.05, 0.06)),
            j("head"),
            0.03,
        ),
    ]
}

/// The arm on `side` (+1 left, -1 right; joint names end in `tag`): its trapezius, which
/// belongs to the core so that both sides blend alike, and the limb (upper arm, forearm, hand).
fn arm_parts(side: f64, tag: &str, j: &dyn Fn(&str) -> usize) -> (Part, Vec<Part>) {
    let (s, e, w, _) = arm_points(side);
    let d = arm_dir(side);
    let trapezius = (
        Prim::RoundCone {
            a: V3::new(0.02 * side, 1.40, -0.025),
            b: s + V3::new(-0.02 * side, 0.0, -0.005),
            ra: 0.06,
            rb: 0.046,
        },
        j(&format!("shoulder_{tag}")),
        0.05,
    );
    let thick = V3::new(-d.y, d.x, 0.0) * side; // palm normal, in the arm's plane
    let hand_axes = Matrix3::from_columns(&[d, thick, V3::z()]);
    let limb = vec![
        (
            Prim::RoundCone {
                a: s,
                b: e,
                ra: 0.048,
                rb: 0.038,
            },
            j(&format!("upper_arm_{tag}")),
            0.0,
        ),
        (
            Prim::RoundCone {
                a: e,
                b: w,
                ra: 0.037,
                rb: 0.026,
            },
            j(&format!("forearm_{tag}")),
            0.02,
        ),
        (
            Prim::Ellipsoid {
                c: w + d * 0.085,
                axes: hand_axes,
                r: V3::new(0.092, 0.024, 0.046),
            },
            j(&format!("hand_{tag}")),
            0.02,
        ),
    ];
    (trapezius, limb)
}

/// The leg on `side` (+1 left, -1 right): thigh, shin, calf and foot.
fn leg_parts(side: f64, tag: &str, j: &dyn Fn(&str) -> usize) -> Vec<Part> {
    let hip = mirror(v(HIP), side);
    let knee = mirror(v(KNEE), side);
    let ankle = mirror(v(ANKLE), side);
    vec![
        (
            Prim::RoundCone {
                a: hip + V3::new(0.0, -0.02, -0.005),
                b: knee,
                ra: 0.084,
                rb: 0.05,
            },
            j(&format!("thigh_{tag}")),
            0.0,
        ),
        (
            Prim::RoundCone {
                a: knee,
                b: ankle,
                ra: 0.05,
                rb: 0.033,
            },
            j(&format!("shin_{tag}")),
            0.03,
        ),
        // Calf.
        (
            Prim::ellipsoid(
                knee + V3::new(0.0, -0.13, -0.022),
                V3::new(0.045, 0.11, 0.042),
            ),
            j(&format!("shin_{tag}")),
            0.04,
        ),
        // Foot: heel at z = -0.07, toes at z = 0.19, sole on y = 0.
        (
            Prim::RoundBox {
                c: V3::new(0.112 * side, 0.036, 0.06),
                h: V3::new(0.046, 0.036, 0.13),
                round: 0.03,
            },
            j(&format!("foot_{tag}")),
            0.03,
        ),
    ]
}

/// Blend radius (m) between each limb and the core.
const LIMB_ATTACH: f64 = 0.05;

impl Body {
    /// The mannequin.
    pub fn new(joints: &[Joint]) -> Body {
        let j = |n: &str| joint_index(joints, n);
        let mut core = core_parts(&j);
        let mut limbs = Vec::new();
        let mut attach = Vec::new();
        for (side, tag) in [(1.0, "l"), (-1.0, "r")] {
            let (trapezius, arm) = arm_parts(side, tag, &j);
            core.push(trapezius);
            limbs.push(arm);
            attach.push(LIMB_ATTACH);
        }
        for (side, tag) in [(1.0, "l"), (-1.0, "r")] {
            limbs.push(leg_parts(side, tag, &j));
            attach.push(LIMB_ATTACH);
        }
        Body {
            core,
            limbs,
            attach,
        }
    }

    fn chain(prims: &[Part], p: &V3) -> f64 {
        let mut d = f64::INFINITY;
        for (prim, _, k) in prims {
            let di = prim.sdf(p);
            d = if *k > 0.0 && d.is_finite() {
                smin(d, di, *k)
            } else {
                d.min(di)
            };
        }
        d
    }

    /// Signed distance (m) to the body surface, negative inside. Each limb is blended with the
    /// core separately and the results are united with a hard minimum, so limbs never blend
    /// with each other (the legs stay apart).
    pub fn sdf(&self, p: &V3) -> f64 {
        let core = Self::chain(&self.core, p);
        let mut d = f64::INFINITY;
        for (limb, k) in self.limbs.iter().zip(&self.attach) {
            d = d.min(smin(core, Self::chain(limb, p), *k));
        }
        d
    }

    /// Gradient of [`Body::sdf`] by central differences (step 0.1 mm).
    pub fn gradient(&self, p: &V3) -> V3 {
        let e = 1e-4;
        let g = |a: V3| (self.sdf(&(p + a)) - self.sdf(&(p - a))) / (2.0 * e);
        V3::new(g(V3::x() * e), g(V3::y() * e), g(V3::z() * e))
    }

    /// For every primitive, the joint carrying it and its signed distance to `p` (m).
    pub fn part_distances(&self, p: &V3, out: &mut Vec<(usize, f64)>) {
        out.clear();
        for (prim, joint, _) in self.core.iter().chain(self.limbs.iter().flatten()) {
            out.push((*joint, prim.sdf(p)));
        }
    }
}
