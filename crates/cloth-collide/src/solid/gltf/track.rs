//! A skinned glTF body played as a deforming mesh collider, posed on demand.

use std::fmt;
use std::sync::{Arc, OnceLock};

use cloth_mesh::Vec3;
use rayon::prelude::*;

use super::body::GltfBody;

/// A [`GltfBody`] sampled at a fixed rate, as the frames of a deforming mesh: sample `i` is at
/// time `start() + i / rate` (s), the first `preroll_samples` of them blending from the bind
/// pose into the clip's pose at t = 0 ([`GltfBody::pose_blend`] with blend `i / preroll_samples`),
/// the rest the clip ([`GltfBody::pose`] at `(i - preroll_samples) / rate`).
///
/// Samples are posed when asked for, never stored for the whole run: a collider with this
/// motion ([`crate::Motion::Skinned`]) keeps the body and the two samples around the current
/// time, so its memory does not grow with the run's length. Between samples the surface moves
/// linearly, exactly as a [`crate::Motion::MeshSequence`] holding the same poses.
///
/// Clones share the body. Two tracks are equal when they are clones of one another.
#[derive(Clone)]
pub struct SkinnedTrack {
    inner: Arc<Inner>,
}

struct Inner {
    body: GltfBody,
    rate: f64,
    before: usize,
    samples: usize,
    /// Largest vertex displacement between consecutive samples (m), computed once.
    max_step: OnceLock<f64>,
}

impl SkinnedTrack {
    /// Samples `body` at `rate` (Hz) over a preroll of `preroll` seconds (rounded up to whole
    /// samples, so that later samples fall on multiples of 1 / rate from t = 0) and a run of
    /// `duration` seconds: `ceil(preroll * rate) + round(duration * rate) + 1` samples. The
    /// rate is checked when the collider is validated (finite and > 0).
    pub fn new(body: GltfBody, rate: f64, preroll: f64, duration: f64) -> SkinnedTrack {
        let before = (preroll * rate).ceil() as usize;
        let samples = before + (duration * rate).round() as usize + 1;
        SkinnedTrack {
            inner: Arc::new(Inner {
                body,
                rate,
                before,
                samples,
                max_step: OnceLock::new(),
            }),
        }
    }

    /// The body.
    pub fn body(&self) -> &GltfBody {
        &self.inner.body
    }

    /// Samples per second (Hz).
    pub fn rate(&self) -> f64 {
        self.inner.rate
    }

    /// Samples before t = 0 (the preroll's blend from the bind pose).
    pub fn preroll_samples(&self) -> usize {
        self.inner.before
    }

    /// Number of samples; the mesh holds the last one after its time.
    pub fn sample_count(&self) -> usize {
        self.inner.samples
    }

    /// Time of sample 0 (s): `-preroll_samples / rate`.
    pub fn start(&self) -> f64 {
        -(self.inner.before as f64) / self.inner.rate
    }

    /// Vertex positions (m) of sample `i`, written into `out`. Samples past the last are the
    /// last.
    pub fn sample(&self, i: usize, out: &mut Vec<Vec3>) {
        let s = &self.inner;
        let i = i.min(s.samples.saturating_sub(1));
        if i < s.before {
            s.body.pose_blend(i as f64 / s.before as f64, out);
        } else {
            s.body.pose((i - s.before) as f64 / s.rate, out);
        }
    }

    /// The largest distance (m) any vertex moves from one sample to the next, over the whole
    /// track (every sample is posed once, on the first call; in parallel over runs of
    /// samples, the same value for any thread count).
    pub fn max_step(&self) -> f64 {
        *self.inner.max_step.get_or_init(|| {
            const RUN: usize = 32;
            let pairs = self.inner.samples.saturating_sub(1);
            (0..pairs.div_ceil(RUN))
                .into_par_iter()
                .map(|r| {
                    let (mut a, mut b) = (Vec::new(), Vec::new());
                    self.sample(r * RUN, &mut a);
                    let mut step = 0.0f64;
                    for i in r * RUN + 1..=((r + 1) * RUN).min(pairs) {
                        self.sample(i, &mut b);
                        step = a
                            .iter()
                            .zip(&b)
                            .map(|(p, q)| (q - p).norm())
                            .fold(step, f64::max);
                        std::mem::swap(&mut a, &mut b);
                    }
                    step
                })
                .reduce(|| 0.0, f64::max)
        })
    }
}

impl PartialEq for SkinnedTrack {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

impl fmt::Debug for SkinnedTrack {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.inner;
        f.debug_struct("SkinnedTrack")
            .field("vertices", &s.body.vertex_count())
            .field("clip", &s.body.clip())
            .field("rate", &s.rate)
            .field("preroll_samples", &s.before)
            .field("samples", &s.samples)
            .finish()
    }
}

/// The two most recently posed samples of a [`SkinnedTrack`], so that a collider moving
/// forward in time poses each sample once.
#[derive(Clone, Debug, Default)]
pub(crate) struct SampleCache {
    slots: [(Option<usize>, Vec<Vec3>); 2],
}

impl SampleCache {
    /// The slot holding sample `k`, posing it into a slot other than `keep` if needed.
    fn ensure(&mut self, track: &SkinnedTrack, k: usize, keep: Option<usize>) -> usize {
        if let Some(i) = self.slots.iter().position(|s| s.0 == Some(k)) {
            return i;
        }
        let i = match keep {
            Some(j) => 1 - j,
            None => usize::from(self.slots[0].0.is_some() && self.slots[1].0.is_none()),
        };
        track.sample(k, &mut self.slots[i].1);
        self.slots[i].0 = Some(k);
        i
    }

    /// Sample `k` of `track`.
    pub fn one(&mut self, track: &SkinnedTrack, k: usize) -> &[Vec3] {
        let i = self.ensure(track, k, None);
        &self.slots[i].1
    }

    /// Samples `k` and `k + 1` of `track`.
    pub fn pair(&mut self, track: &SkinnedTrack, k: usize) -> (&[Vec3], &[Vec3]) {
        let i = self.ensure(track, k, None);
        let j = self.ensure(track, k + 1, Some(i));
        (&self.slots[i].1, &self.slots[j].1)
    }
}
