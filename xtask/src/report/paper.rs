//! The figures ours are set beside: the paper's table and scaling series (Baraff & Witkin
//! 1998, §8), the project's aims, and other simulators' times.

use serde::Serialize;

/// A row of the paper's table (Baraff & Witkin 1998, §8), 195 MHz R10000.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct PaperRow {
    /// Scene.
    pub scene: &'static str,
    /// Cloth vertices / triangles.
    pub cloth: (usize, usize),
    /// Solid vertices / triangles.
    pub solid: (usize, usize),
    /// Seconds per frame.
    pub seconds_per_frame: f64,
    /// Step min / max, ms.
    pub step_ms: (f64, f64),
    /// Frames / steps.
    pub frames_steps: (usize, usize),
    /// EVAL / CG / C/C / C/S, percent.
    pub percent: [f64; 4],
}

/// The paper's Figure 1 and Figure 2 rows.
pub const PAPER_ROWS: [PaperRow; 2] = [
    PaperRow {
        scene: "Fig 1 (drape on cylinder)",
        cloth: (2602, 4942),
        solid: (322, 640),
        seconds_per_frame: 2.23,
        step_ms: (16.5, 33.0),
        frames_steps: (75, 80),
        percent: [25.7, 50.4, 18.3, 1.4],
    },
    PaperRow {
        scene: "Fig 2 (fixed sheet)",
        cloth: (2602, 4942),
        solid: (322, 640),
        seconds_per_frame: 3.06,
        step_ms: (16.5, 33.0),
        frames_steps: (75, 80),
        percent: [17.9, 63.6, 15.3, 0.2],
    },
];

/// The paper's garment rows (Figures 3-6: shirts, pants, skirts and blouses on animated
/// figures), same machine.
pub const PAPER_GARMENT_ROWS: [PaperRow; 7] = [
    garment_row(
        "Fig 3 (shirt, twisting figure)",
        (6450, 12654),
        (9941, 18110),
        7.32,
        (16.5, 33.0),
        (50, 52),
        [18.9, 37.9, 30.9, 2.6],
    ),
    garment_row(
        "Fig 4 (shirt, walking man)",
        (6450, 12654),
        (9941, 18110),
        14.5,
        (2.5, 20.0),
        (430, 748),
        [16.7, 29.9, 46.1, 2.2],
    ),
    garment_row(
        "Fig 4 (pants, walking man)",
        (8757, 17352),
        (9941, 18110),
        38.5,
        (0.625, 20.0),
        (430, 1214),
        [16.4, 35.7, 42.5, 1.7],
    ),
    garment_row(
        "Fig 5 (short skirt, dancer)",
        (2153, 4020),
        (7630, 14008),
        3.68,
        (5.0, 20.0),
        (393, 715),
        [18.1, 30.0, 44.5, 1.5],
    ),
    garment_row(
        "Fig 5 (blouse, dancer)",
        (5108, 10016),
        (7630, 14008),
        16.7,
        (5.0, 20.0),
        (393, 701),
        [11.2, 26.0, 57.7, 1.3],
    ),
    garment_row(
        "Fig 6 (long skirt, dancer)",
        (4530, 8844),
        (7630, 14008),
        10.2,
        (10.0, 20.0),
        (393, 670),
        [20.1, 36.8, 29.7, 2.6],
    ),
    garment_row(
        "Fig 6 (blouse, dancer)",
        (5188, 10194),
        (7630, 14008),
        16.6,
        (1.25, 20.0),
        (393, 753),
        [13.2, 30.9, 50.2, 1.4],
    ),
];

const fn garment_row(
    scene: &'static str,
    cloth: (usize, usize),
    solid: (usize, usize),
    seconds_per_frame: f64,
    step_ms: (f64, f64),
    frames_steps: (usize, usize),
    percent: [f64; 4],
) -> PaperRow {
    PaperRow {
        scene,
        cloth,
        solid,
        seconds_per_frame,
        step_ms,
        frames_steps,
        percent,
    }
}

/// The paper's scaling series: (vertices, seconds per frame); it reports O(n^1.5).
pub const PAPER_SCALING: [(usize, f64); 4] = [(500, 0.23), (899, 0.46), (2602, 2.23), (7359, 10.3)];
/// The paper's scaling exponent.
pub const PAPER_EXPONENT: f64 = 1.5;
/// Aim of the project: Figure 1 time per frame, s.
pub const AIM_FIG1_SECONDS: f64 = 0.010;
/// Aim of the project: scaling exponent.
pub const AIM_EXPONENT: f64 = 1.2;
/// Aim of the project: Figure 1 at least this many times faster than Blender in the same run.
pub const AIM_PEER_SPEEDUP: f64 = 14.0;
/// Aims of the project for the `scale` cases, at the largest size (100,489 vertices): seconds
/// per frame, KB (10^3 bytes) of peak memory per vertex; CG iterations per solve at the
/// smallest and largest size; share of rejected steps.
pub const AIM_SCALE: ScaleAims = ScaleAims {
    largest_seconds: 1.5,
    kb_per_vertex: 4.0,
    cg_smallest: 30.0,
    cg_largest: 45.0,
    rejected: 0.15,
};

/// See [`AIM_SCALE`].
#[derive(Clone, Copy, Debug)]
pub struct ScaleAims {
    /// Seconds per frame at the largest size.
    pub largest_seconds: f64,
    /// Peak memory per vertex at the largest size, KB.
    pub kb_per_vertex: f64,
    /// CG iterations per solve at the smallest size.
    pub cg_smallest: f64,
    /// CG iterations per solve at the largest size.
    pub cg_largest: f64,
    /// Largest share of rejected steps.
    pub rejected: f64,
}

/// Another simulator's time on a scene of ours, seconds per frame.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Bar {
    /// Simulator.
    pub who: &'static str,
    /// Scene.
    pub scene: &'static str,
    /// Vertices.
    pub vertices: usize,
    /// Seconds per frame.
    pub seconds_per_frame: f64,
}

/// Other simulators' times on the same machine, given with the project's aims.
pub const BARS: [Bar; 5] = [
    Bar {
        who: "Blender 3.4",
        scene: "fig1",
        vertices: 2601,
        seconds_per_frame: 0.164,
    },
    Bar {
        who: "Newton Style3D (CPU)",
        scene: "fig1",
        vertices: 2601,
        seconds_per_frame: 0.140,
    },
    Bar {
        who: "Blender 3.4",
        scene: "scaling",
        vertices: 7396,
        seconds_per_frame: 0.620,
    },
    Bar {
        who: "Newton Style3D (CPU)",
        scene: "scaling",
        vertices: 7396,
        seconds_per_frame: 0.295,
    },
    Bar {
        who: "Blender 3.4",
        scene: "fig2",
        vertices: 2601,
        seconds_per_frame: 0.056,
    },
];
