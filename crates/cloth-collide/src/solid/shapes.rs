//! Signed distance, outward normal and closest surface point of the analytic shapes, in the
//! shape's local frame. Conventions: the distance is negative inside; the normal is unit and
//! points out of the solid; `point = q - distance * normal` lies on the surface.

use cloth_mesh::Vec3;

use crate::geometry::primitives::any_perpendicular;

/// Result of a local point query.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct LocalProj {
    pub distance: f64,
    pub normal: Vec3,
    pub point: Vec3,
}

impl LocalProj {
    fn from_normal(q: &Vec3, distance: f64, normal: Vec3) -> Self {
        LocalProj {
            distance,
            normal,
            point: q - normal * distance,
        }
    }
}

/// Sphere of radius r centred at the origin. At the centre the normal is +y.
pub(crate) fn sphere(q: &Vec3, r: f64) -> LocalProj {
    let l = q.norm();
    let n = if l > 0.0 { q / l } else { Vec3::y() };
    LocalProj::from_normal(q, l - r, n)
}

/// Half-space y <= 0.
pub(crate) fn plane(q: &Vec3) -> LocalProj {
    LocalProj::from_normal(q, q.y, Vec3::y())
}

/// Radial unit direction in the x-z plane (+x on the axis).
fn radial(q: &Vec3) -> (f64, Vec3) {
    let rho = (q.x * q.x + q.z * q.z).sqrt();
    if rho > 0.0 {
        (rho, Vec3::new(q.x / rho, 0.0, q.z / rho))
    } else {
        (0.0, Vec3::x())
    }
}

/// Capsule: segment from (0, -length/2, 0) to (0, length/2, 0) swept by radius r.
pub(crate) fn capsule(q: &Vec3, r: f64, length: f64) -> LocalProj {
    let h = 0.5 * length;
    let c = Vec3::new(0.0, q.y.clamp(-h, h), 0.0);
    let d = q - c;
    let l = d.norm();
    let n = if l > 0.0 {
        d / l
    } else if length > 0.0 {
        any_perpendicular(&Vec3::y())
    } else {
        Vec3::y()
    };
    LocalProj::from_normal(q, l - r, n)
}

/// Solid cylinder of radius r, axis local y, from y = -length/2 to y = length/2, flat caps.
pub(crate) fn cylinder(q: &Vec3, r: f64, length: f64) -> LocalProj {
    let h = 0.5 * length;
    let (rho, rad) = radial(q);
    let dr = rho - r;
    let da = q.y.abs() - h;
    let ax = if q.y >= 0.0 { Vec3::y() } else { -Vec3::y() };
    if dr <= 0.0 && da <= 0.0 {
        // Inside: the nearer of the side and the cap (ties go to the cap).
        if dr > da {
            LocalProj::from_normal(q, dr, rad)
        } else {
            LocalProj::from_normal(q, da, ax)
        }
    } else if dr > 0.0 && da > 0.0 {
        // Outside, nearest to the rim circle.
        let d = (dr * dr + da * da).sqrt();
        let point = rad * r + ax * h;
        LocalProj {
            distance: d,
            normal: (q - point) / d,
            point,
        }
    } else if dr > 0.0 {
        LocalProj::from_normal(q, dr, rad)
    } else {
        LocalProj::from_normal(q, da, ax)
    }
}

/// Box with half extents `h` centred at the origin.
pub(crate) fn cuboid(q: &Vec3, h: &Vec3) -> LocalProj {
    let over = q.abs() - h;
    if over.iter().all(|&o| o <= 0.0) {
        // Inside: nearest face (ties broken by the lowest axis).
        let mut k = 0;
        for i in 1..3 {
            if over[i] > over[k] {
                k = i;
            }
        }
        let mut n = Vec3::zeros();
        n[k] = if q[k] >= 0.0 { 1.0 } else { -1.0 };
        LocalProj::from_normal(q, over[k], n)
    } else {
        let point = Vec3::new(
            q.x.clamp(-h.x, h.x),
            q.y.clamp(-h.y, h.y),
            q.z.clamp(-h.z, h.z),
        );
        let d = q - point;
        let l = d.norm();
        LocalProj {
            distance: l,
            normal: d / l,
            point,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: &LocalProj, d: f64, n: Vec3, p: Vec3) {
        assert!(
            (a.distance - d).abs() < 1e-14,
            "distance {} vs {}",
            a.distance,
            d
        );
        assert!(
            (a.normal - n).norm() < 1e-14,
            "normal {:?} vs {:?}",
            a.normal,
            n
        );
        assert!(
            (a.point - p).norm() < 1e-14,
            "point {:?} vs {:?}",
            a.point,
            p
        );
    }

    #[test]
    fn sphere_known_values() {
        close(
            &sphere(&Vec3::new(0.0, 0.0, 3.0), 1.0),
            2.0,
            Vec3::z(),
            Vec3::new(0.0, 0.0, 1.0),
        );
        close(
            &sphere(&Vec3::new(-0.25, 0.0, 0.0), 1.0),
            -0.75,
            -Vec3::x(),
            Vec3::new(-1.0, 0.0, 0.0),
        );
    }

    #[test]
    fn plane_known_values() {
        close(
            &plane(&Vec3::new(3.0, -0.5, 2.0)),
            -0.5,
            Vec3::y(),
            Vec3::new(3.0, 0.0, 2.0),
        );
    }

    #[test]
    fn capsule_known_values() {
        // Beside the segment, above the top cap, inside near the side.
        close(
            &capsule(&Vec3::new(2.0, 0.3, 0.0), 0.5, 2.0),
            1.5,
            Vec3::x(),
            Vec3::new(0.5, 0.3, 0.0),
        );
        close(
            &capsule(&Vec3::new(0.0, 3.0, 0.0), 0.5, 2.0),
            1.5,
            Vec3::y(),
            Vec3::new(0.0, 1.5, 0.0),
        );
        close(
            &capsule(&Vec3::new(0.0, -0.2, -0.1), 0.5, 2.0),
            -0.4,
            -Vec3::z(),
            Vec3::new(0.0, -0.2, -0.5),
        );
    }

    #[test]
    fn cylinder_known_values() {
        // Side, cap, rim corner, inside nearer the side, inside nearer the cap.
        close(
            &cylinder(&Vec3::new(0.0, 0.2, 2.0), 1.0, 2.0),
            1.0,
            Vec3::z(),
            Vec3::new(0.0, 0.2, 1.0),
        );
        close(
            &cylinder(&Vec3::new(0.3, -1.5, 0.0), 1.0, 2.0),
            0.5,
            -Vec3::y(),
            Vec3::new(0.3, -1.0, 0.0),
        );
        let p = Vec3::new(4.0, 5.0, 0.0);
        close(
            &cylinder(&p, 1.0, 2.0),
            5.0,
            Vec3::new(0.6, 0.8, 0.0),
            Vec3::new(1.0, 1.0, 0.0),
        );
        close(
            &cylinder(&Vec3::new(0.9, 0.0, 0.0), 1.0, 2.0),
            -0.1,
            Vec3::x(),
            Vec3::new(1.0, 0.0, 0.0),
        );
        close(
            &cylinder(&Vec3::new(0.0, 0.95, 0.0), 1.0, 2.0),
            -0.05,
            Vec3::y(),
            Vec3::new(0.0, 1.0, 0.0),
        );
    }

    #[test]
    fn cuboid_known_values() {
        let h = Vec3::new(1.0, 2.0, 3.0);
        close(
            &cuboid(&Vec3::new(0.0, 0.0, 4.0), &h),
            1.0,
            Vec3::z(),
            Vec3::new(0.0, 0.0, 3.0),
        );
        close(
            &cuboid(&Vec3::new(0.5, -1.9, 0.0), &h),
            -0.1,
            -Vec3::y(),
            Vec3::new(0.5, -2.0, 0.0),
        );
        // Corner region: distance to the corner (1, 2, 3).
        let q = Vec3::new(2.0, 3.0, 4.0);
        close(
            &cuboid(&q, &h),
            3f64.sqrt(),
            Vec3::repeat(1.0 / 3f64.sqrt()),
            h,
        );
    }
}
