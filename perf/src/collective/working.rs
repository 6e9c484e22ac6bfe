//! The send and receive buffers a communicator runs its sweep on, allocated once for the largest
//! size and, over verbs, registered with the adapter once: the links then RDMA WRITE straight from
//! them (NCCL registers its buffers once per communicator for the same reason). Registering per
//! call would pin pages on every iteration; registering whatever buffer a caller passes would leave
//! a registration pointing at freed pages when the allocator hands the same address out again.

use crate::verbs::stream::{SourceMemory, StreamPort};
use crate::PerfError;

use super::link::SourceRegion;

/// Working memory: this rank's input, then the output, each `capacity` bytes.
#[derive(Debug, Default)]
pub(crate) enum WorkingMemory {
    #[default]
    None,
    Plain {
        memory: Vec<u8>,
        capacity: usize,
    },
    Registered {
        memory: SourceMemory,
        capacity: usize,
    },
}

impl WorkingMemory {
    pub fn capacity(&self) -> usize {
        match self {
            WorkingMemory::None => 0,
            WorkingMemory::Plain { capacity, .. } | WorkingMemory::Registered { capacity, .. } => *capacity,
        }
    }

    /// Zeroed memory for two buffers of `capacity` bytes, registered when a verbs port is given.
    pub fn allocate(capacity: usize, port: Option<&StreamPort>) -> Result<WorkingMemory, PerfError> {
        let length = capacity.checked_mul(2).ok_or_else(|| {
            PerfError::Unsupported(format!("two working buffers of {capacity} bytes do not fit in memory"))
        })?;
        Ok(match port {
            Some(port) => WorkingMemory::Registered { memory: port.source_memory(length)?, capacity },
            None => WorkingMemory::Plain { memory: vec![0u8; length], capacity },
        })
    }

    /// What links may send from in place; `None` without a registration.
    pub fn region(&self) -> Option<SourceRegion> {
        match self {
            WorkingMemory::Registered { memory, .. } => Some(memory.region()),
            _ => None,
        }
    }

    /// The input and output buffers of `bytes` each (`bytes` at most the capacity).
    pub fn buffers(&mut self, bytes: usize) -> (&mut [u8], &mut [u8]) {
        let (memory, capacity): (&mut [u8], usize) = match self {
            WorkingMemory::None => (&mut [], 0),
            WorkingMemory::Plain { memory, capacity } => (memory.as_mut_slice(), *capacity),
            WorkingMemory::Registered { memory, capacity } => (memory.bytes_mut(), *capacity),
        };
        let bytes = bytes.min(capacity);
        let (input, output) = memory.split_at_mut(capacity);
        (&mut input[..bytes], &mut output[..bytes])
    }
}
