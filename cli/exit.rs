//! Exit codes, the contract with scripts and CI gates.

/// No finding at or above the `--fail-on` level.
pub const SUCCESS: i32 = 0;
/// At least one finding at or above the `--fail-on` level (Fail and Error always count).
pub const FINDINGS: i32 = 1;
/// Bad usage or the tool itself could not run (unreadable root, unwritable output, bad policy file).
/// clap uses 2 for usage errors too.
pub const TOOL_ERROR: i32 = 2;
