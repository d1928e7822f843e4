//! Crumpled grids for the unit tests of cloth-cloth contact.

use cloth_mesh::{ClothMesh, Vec3};

/// An `n` x `n` grid `width` m wide with every vertex moved by a
/// pseudo-random offset of up to half of `scale` (m) per axis (xorshift from `seed`).
pub(crate) fn crumpled(n: usize, width: f64, scale: Vec3, seed: u64) -> (ClothMesh, Vec<Vec3>) {
    let mesh =
        cloth_mesh::grid(n, n, width, width, cloth_mesh::GridPattern::Alternating).expect("grid");
    let x = jittered(mesh.positions(), scale, seed);
    (mesh, x)
}

/// `x` with every point moved by a pseudo-random offset of up to half of `scale` per axis.
pub(crate) fn jittered(x: &[Vec3], scale: Vec3, mut state: u64) -> Vec<Vec3> {
    let mut rand = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    };
    (x.iter())
        .map(|p| p + Vec3::new(rand(), rand(), rand()).component_mul(&scale))
        .collect()
}
