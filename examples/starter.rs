//! Placeholder until the starter lands.
fn main() {}
