//! The explicit integrator: position Verlet on a mass-spring network with the iterated
//! maximum-stretch projection ([`Verlet`]).

mod contact;
mod global;
mod pairs;
mod tether;
mod tree;
mod verlet;

pub use verlet::{
    DEFAULT_GLOBAL_AFTER, DEFAULT_SPRING_SWEEPS, DEFAULT_VERLET_ITERATIONS, LongRange, Verlet,
    VerletInfo, VerletSettings,
};
