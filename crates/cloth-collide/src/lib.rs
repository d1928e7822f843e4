//! cloth-collide: placeholder, filled by its issue.
