//! cloth-solver: placeholder, filled by its issue.
