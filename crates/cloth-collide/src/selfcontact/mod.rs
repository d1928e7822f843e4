//! Cloth-cloth contact: proximity and penalty springs, CCD, intersection counts, untangling.
//!
//! [`proximity::SelfCollision`] finds vertex-triangle and edge-edge pairs within a thickness and
//! turns them into damped penalty springs with friction (the paper's treatment);
//! [`ccd::SelfCcd`] finds the collisions of a step's straight-line motion ([`ccd::Impact`]s);
//! [`intersections`] counts crossing triangle pairs; [`untangle()`](untangle::untangle) undoes
//! small crossings a state starts with. Features that share a vertex (welded vertices counted
//! as one) are neighbours and never in contact.

pub mod ccd;
pub mod intersections;
pub mod proximity;
#[cfg(test)]
mod test_cloth;
mod topology;
pub mod untangle;
