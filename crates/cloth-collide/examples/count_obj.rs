//! Counts intersecting non-adjacent triangle pairs of OBJ frames (a developer tool).
fn main() {
    for path in std::env::args().skip(1) {
        let obj = cloth_mesh::read_obj_data(std::path::Path::new(&path)).expect("read");
        let n = cloth_collide::count_intersections(&obj.triangles, &obj.positions);
        println!("{path} {n}");
    }
}
