//! Depends on `cloth-forces` alone: the mesh builders, the vector types and `nalgebra` come
//! through its re-exports. Builds a 1 m sheet, stretches it by 2% along u, evaluates forces and
//! Jacobians, and checks them against the energy (prints the figures; exits non-zero if a check
//! fails).

use cloth_forces::mesh::{GridPattern, Vec3, grid};
use cloth_forces::{ClothModel, Definiteness, Evaluation, External, Material, Par};
use std::process::ExitCode;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let mesh = grid(21, 21, 1.0, 1.0, GridPattern::Alternating)?;
    let material = Material::preset("cotton").ok_or("no cotton preset")?;
    let model = ClothModel::new(&mesh, &material, Definiteness::Clamped)?;
    let x: Vec<Vec3> = mesh
        .positions()
        .iter()
        .map(|p| Vec3::new(1.02 * p.x, p.y, p.z))
        .collect();
    let v = vec![Vec3::zeros(); x.len()];
    let mut eval = Evaluation::default();
    model.evaluate(&x, &v, &mut eval, Par::Seq);
    External::default().accumulate(&model, &x, &v, &mut eval);
    // Stretch energy of a uniform 2% strain along u: area * k_u / 2 * 0.02^2.
    let expected = 1.0 * material.stretch[0] / 2.0 * 0.02f64.powi(2);
    let energy = model.energy(&x);
    let net: Vec3 = eval.forces.iter().sum();
    let weight = material.density * 9.81;
    println!(
        "{} vertices, {} Jacobian blocks",
        mesh.num_vertices(),
        eval.dfdx().len()
    );
    println!("stretch energy {energy:.6} J (a plate: {expected:.6} J)");
    println!("net force {:.6} N (weight {weight:.6} N)", net.y);
    if (energy - expected).abs() > 1e-9 * expected {
        return Err(format!("energy {energy} J, expected {expected} J").into());
    }
    if (net.y + weight).abs() > 1e-9 {
        return Err(format!("net force {} N, expected -{weight} N", net.y).into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_example_runs_and_its_checks_pass() {
        super::run().unwrap();
    }
}
