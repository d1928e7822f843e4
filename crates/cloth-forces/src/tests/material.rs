//! Material validation.

use crate::{ForceError, Material};

#[test]
fn default_material_is_valid() {
    Material::default().validate().unwrap();
}

#[test]
fn every_invalid_field_is_named() {
    type Edit = fn(&mut Material, f64);
    let cases: [(&str, Edit, f64); 16] = [
        ("density", |m, x| m.density = x, 0.0),
        ("density", |m, x| m.density = x, f64::NAN),
        ("stretch[0]", |m, x| m.stretch[0] = x, -1.0),
        ("stretch[1]", |m, x| m.stretch[1] = x, f64::INFINITY),
        ("shear", |m, x| m.shear = x, -1.0),
        ("bend", |m, x| m.bend = x, -1e-6),
        ("bend", |m, x| m.bend = x, f64::NAN),
        ("bend_uv[0]", |m, x| m.bend_uv[0] = x, -1.0),
        ("bend_uv[1]", |m, x| m.bend_uv[1] = x, f64::NEG_INFINITY),
        ("stretch_targets[0]", |m, x| m.stretch_targets[0] = x, 0.0),
        ("stretch_targets[1]", |m, x| m.stretch_targets[1] = x, -0.5),
        ("stretch_damping", |m, x| m.stretch_damping = x, -1e-3),
        ("shear_damping", |m, x| m.shear_damping = x, f64::NAN),
        ("bend_damping", |m, x| m.bend_damping = x, -1.0),
        ("shear", |m, x| m.shear = x, f64::NAN),
        ("density", |m, x| m.density = x, -0.1),
    ];
    for (name, edit, value) in cases {
        let mut m = Material::default();
        edit(&mut m, value);
        match m.validate() {
            Err(ForceError::InvalidMaterial {
                field, value: v, ..
            }) => {
                assert_eq!(field, name);
                assert!(v.to_bits() == value.to_bits());
            }
            other => panic!("{name} = {value}: {other:?}"),
        }
        let msg = m.validate().unwrap_err().to_string();
        assert!(msg.contains(name), "{msg}");
    }
    // Zero stiffnesses are allowed (a term switched off).
    let m = Material {
        stretch: [0.0; 2],
        shear: 0.0,
        bend: 0.0,
        ..Material::default()
    };
    m.validate().unwrap();
}

/// `bend_model` in serialized materials: snake_case values, and absent means the default
/// (scene files written before the field existed keep working).
#[cfg(feature = "serde")]
#[test]
fn bend_model_serde_names_and_default() {
    use crate::BendModel;
    let json = serde_json::to_value(Material::default()).unwrap();
    assert_eq!(json["bend_model"], "shape_operator");
    let mut hinge = json.clone();
    hinge["bend_model"] = "hinge".into();
    let m: Material = serde_json::from_value(hinge).unwrap();
    assert_eq!(m.bend_model, BendModel::Hinge);
    let mut old = json.clone();
    old.as_object_mut().unwrap().remove("bend_model");
    let m: Material = serde_json::from_value(old).unwrap();
    assert_eq!(m.bend_model, BendModel::ShapeOperator);
    let mut bad = json;
    bad["bend_model"] = "Hinge".into();
    assert!(serde_json::from_value::<Material>(bad).is_err());
}
