//! Integration tests of the `fabricdoctor` binary: CLI contract, fixtures with answer keys,
//! live-versus-snapshot equality, agreement with nvidia-smi and pciutils on real-world layouts.

mod cli;
mod contract;
mod snapshot;
mod support;
