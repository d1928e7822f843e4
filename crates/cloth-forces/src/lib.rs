//! cloth-forces: placeholder, filled by its issue.
