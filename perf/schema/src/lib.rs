//! The data a perf run or a collective sweep produces and a report renders, apart from the code
//! that produces it: `report` depends on this crate alone, so rendering a page or a JUnit file
//! never builds the verbs stack (sideway, cmake, libclang). `fabricdoctor_perf` re-exports every
//! type at its old path.

pub mod collective;
pub mod params;
pub mod results;
