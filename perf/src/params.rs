//! What a run measures; the types live in `fabricdoctor_perf_schema::params` so reports can carry
//! them without this crate.

pub use fabricdoctor_perf_schema::params::*;
