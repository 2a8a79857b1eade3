//! The demo shop: a small, deterministic e-commerce data set for trying aiq
//! (`aiq demo`, and the `demo_shop` example for the other engines).

pub mod data;
