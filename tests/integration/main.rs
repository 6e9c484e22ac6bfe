//! Integration tests of the `fabricdoctor` binary: CLI contract, fixtures with answer keys,
//! live-versus-snapshot equality, agreement with nvidia-smi and pciutils on real-world layouts.

#![expect(clippy::unwrap_used, reason = "a test fails loudly on a path that is not UTF-8")]

mod burnin;
mod cli;
mod collective;
mod contract;
mod corpus;
mod counters;
mod ethtool;
mod fixtures;
mod fleet;
mod foreign;
mod gpu;
mod html;
mod hwloc;
mod optics;
mod pciutils;
mod perf;
mod serve;
mod simulation;
mod slurm;
mod snapshot;
mod support;
mod topo;
mod triage;
mod verbs;
mod vm;
