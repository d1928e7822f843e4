//! Sewing on a coarser copy of the scene (`cloth.mesh.sew_edge_length`): the copy runs from
//! the start of the preroll until every seam is held closed, and its state is carried to the
//! scene's own meshes, which run the rest.

use crate::error::SimError;
use cloth_mesh::{GarmentTransfer, Vec3};
use std::ops::Range;

/// How one cloth's vertices take their state from the coarse copy.
pub(crate) struct CarriedCloth {
    /// The cloth's vertices in the scene's simulation.
    pub to: Range<usize>,
    /// The same cloth's vertices in the coarse copy.
    pub from: Range<usize>,
    /// Interpolation weights for a garment built at another edge length; `None` for a
    /// cloth that is the same mesh in both (copied vertex for vertex).
    pub transfer: Option<GarmentTransfer>,
}

/// How the state of a coarse copy of the scene reaches the scene's vertices, and until when the
/// copy runs.
pub(crate) struct CoarseStart {
    /// Per cloth, in scene order.
    pub cloths: Vec<CarriedCloth>,
    /// Time (s, <= 0) up to which the copy runs: when every seam is held closed.
    pub until: f64,
}

impl CoarseStart {
    /// Per-vertex values of the scene's `n` vertices carried from the copy's `values`.
    /// Errors: a cloth's ranges do not match the two simulations or its transfer.
    pub fn carry(&self, values: &[Vec3], n: usize) -> Result<Vec<Vec3>, SimError> {
        let mut out = vec![Vec3::zeros(); n];
        for (k, c) in self.cloths.iter().enumerate() {
            let (src, dst) = (values.get(c.from.clone()), out.get_mut(c.to.clone()));
            let carried = match (&c.transfer, src) {
                (Some(t), Some(src)) => Some(t.apply(src)?),
                (None, Some(src)) => Some(src.to_vec()),
                (_, None) => None,
            };
            match (carried, dst) {
                (Some(v), Some(dst)) if v.len() == dst.len() => dst.copy_from_slice(&v),
                _ => {
                    return Err(SimError::Invalid {
                        key: "cloth.mesh.sew_edge_length".into(),
                        message: format!(
                            "cloth {k}: the coarse copy's vertices {:?} do not carry to {:?}",
                            c.from, c.to
                        ),
                    });
                }
            }
        }
        Ok(out)
    }
}
