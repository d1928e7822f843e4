//! cloth-mesh: placeholder, filled by its issue.
