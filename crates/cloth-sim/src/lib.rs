//! cloth-sim: placeholder, filled by its issue.
