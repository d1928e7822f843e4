//! A skinned body posed on demand takes the same memory for a 2 s and a 60 s run: the heap is
//! measured by a counting allocator around building the collider set and moving it through
//! the run.

#![allow(
    unsafe_code,
    reason = "a counting global allocator implements the unsafe GlobalAlloc by forwarding to System"
)]

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use cloth_collide::{Collider, ColliderSet, GltfBody, GltfOptions, Motion, Shape, SkinnedTrack};
use common::shared;

struct Counting;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = CURRENT.fetch_add(layout.size(), Ordering::SeqCst) + layout.size();
            PEAK.fetch_max(now, Ordering::SeqCst);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        CURRENT.fetch_sub(layout.size(), Ordering::SeqCst);
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Peak heap (bytes) above the start of `f`.
fn peak_during(f: impl FnOnce()) -> usize {
    let base = CURRENT.load(Ordering::SeqCst);
    PEAK.store(base, Ordering::SeqCst);
    f();
    PEAK.load(Ordering::SeqCst) - base
}

/// Builds a collider set for the body walking for `duration` seconds (after a 1 s preroll)
/// and moves it to ten times spread over the run.
fn run(body: &GltfBody, duration: f64) {
    let track = SkinnedTrack::new(body.clone(), 120.0, 1.0, duration);
    let mut rest = Vec::new();
    track.sample(0, &mut rest);
    let mut set = ColliderSet::new(vec![Collider {
        shape: Shape::Mesh {
            vertices: rest,
            triangles: body.triangles().to_vec(),
        },
        motion: Motion::skinned(Motion::Static, track),
        ..Collider::default()
    }])
    .unwrap();
    for k in 0..10 {
        set.update(-1.0 + (duration + 1.0) * k as f64 / 9.0);
    }
}

#[test]
fn a_skinned_collider_takes_the_same_memory_for_2_s_and_60_s() {
    let options = GltfOptions {
        looping: true,
        ..GltfOptions::default()
    };
    let body = GltfBody::load(shared("characters/walk_female.glb"), &options).unwrap();
    let short = peak_during(|| run(&body, 2.0));
    let long = peak_during(|| run(&body, 60.0));
    let n = body.vertex_count();
    eprintln!(
        "peak heap of a {n}-vertex skinned collider: {:.1} MB for 2 s, {:.1} MB for 60 s \
         ({:.0} bytes per vertex); storing 120 Hz poses would take {:.0} MB for 60 s",
        short as f64 / 1e6,
        long as f64 / 1e6,
        long as f64 / n as f64,
        (61.0 * 120.0 + 1.0) * n as f64 * 24.0 / 1e6
    );
    assert!(
        long <= short + short / 100,
        "60 s: {long} bytes, 2 s: {short} bytes"
    );
}
