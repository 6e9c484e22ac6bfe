//! Values as real kernels and capture tools leave them in sysfs: one place that knows which texts
//! mean "the kernel does not know", so every probe reads them alike instead of per-file cases.
//!
//! - empty: an attribute whose read failed when the capture was taken (hwloc-gather-topology and
//!   `cp` store an EINVAL read, such as `speed` of a down link, as an empty file);
//! - `N/A` and `N/A (no PMA)`: InfiniBand port counters of devices without a performance-management
//!   agent (drivers/infiniband/core/sysfs.c before 4.x printed this; iWARP, soft RDMA);
//! - `(null)`: a string attribute the driver never set;
//! - `unknown`/`Unknown`: PCI `current_link_speed` of a function whose link is down
//!   (drivers/pci/pci-sysfs.c prints "Unknown"), `operstate` "unknown".

/// The text without surrounding whitespace and the stray NUL some captures end a file with.
pub fn trim(text: &str) -> &str {
    text.trim_matches(|c: char| c.is_whitespace() || c == '\0')
}

/// Why an attribute's text holds no value, or `None` when it holds one.
pub fn unknown_reason(text: &str) -> Option<&'static str> {
    let trimmed = trim(text);
    if trimmed.is_empty() {
        Some("empty (the read failed when the tree was captured)")
    } else if trimmed.as_bytes().get(..3).is_some_and(|head| head.eq_ignore_ascii_case(b"n/a")) {
        // Bytes, not a str slice: a capture's file may hold anything, and the third byte need not
        // end a character (found by fabricdoctor-fuzz, target sysfs-text).
        Some("not available (the device does not report it)")
    } else if trimmed == "(null)" {
        Some("(null): the driver never set it")
    } else if trimmed.eq_ignore_ascii_case("unknown") || trimmed.starts_with("Unknown") {
        Some("unknown to the kernel")
    } else {
        None
    }
}

/// The attribute's value, trimmed (of whitespace and a stray NUL), or `None` when it holds none.
pub fn known(text: &str) -> Option<&str> {
    unknown_reason(text).is_none().then(|| trim(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_kernels_and_capture_tools_print_for_no_value() {
        for text in ["", "\n", "N/A\n", "N/A (no PMA)\n", "n/a", "(null)\n", "Unknown\n", "Unknown speed\n", "\0"] {
            assert!(unknown_reason(text).is_some(), "{text:?}");
            assert_eq!(known(text), None);
        }
        assert_eq!(known("100000\n"), Some("100000"));
        assert_eq!(known("16.0 GT/s PCIe\n"), Some("16.0 GT/s PCIe"));
        assert_eq!(known("4096\0"), Some("4096"));
    }

    /// fabricdoctor-fuzz (sysfs-text) found a panic: a text whose third byte falls inside a
    /// multi-byte character was sliced as a str.
    #[test]
    fn a_multi_byte_character_at_the_start_is_a_value_not_a_panic() {
        assert_eq!(known("F\u{fffd}0x15b3"), Some("F\u{fffd}0x15b3"));
        assert_eq!(known("é"), Some("é"));
        assert!(unknown_reason("N/A é").is_some());
    }
}
