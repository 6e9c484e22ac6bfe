//! How every text parser walks its input.

/// Lines of an input with their 1-based numbers, without the lines that are no output: a file's
/// own header lines (`#!`: a script's interpreter line, the corpus's case headers), the metadata
/// of Prometheus's text exposition format (`# HELP`, `# TYPE`, and OpenMetrics' `# UNIT` and
/// `# EOF`), which describe a metric in words such as "Value of the last XID error encountered",
/// and the block of comment lines (`#` then whitespace) that heads a paste above its output: an
/// annotation ("# ROOT CAUSE: ... -x NCCL_IB_GID_INDEX=3") whose words about a fault must not be
/// read as the fault. Comment lines after the output has begun are read, and so is an input made
/// of nothing else: a root shell's prompt is `# ` ("# ifconfig mce0" in a transcript), nccl-tests
/// prints its table under `#`, and posters paste output as shell comments under the command that
/// printed it ("# NVRM: API mismatch: client version ...").
pub fn numbered_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let header = annotation_lines(text);
    text.lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .filter(move |(number, l)| *number > header && !is_header_or_metadata(l))
}

/// How many lines the annotation block that heads `text` spans: its leading comment and blank
/// lines when output follows them, none when nothing does.
fn annotation_lines(text: &str) -> usize {
    text.lines().position(|line| !(is_comment(line) || line.trim().is_empty())).unwrap_or(0)
}

/// Whether a line is a `#!` header or Prometheus exposition metadata (see [`numbered_lines`]).
pub fn is_header_or_metadata(line: &str) -> bool {
    let Some(rest) = line.strip_prefix('#') else {
        return false;
    };
    rest.starts_with('!') || ["HELP ", "TYPE ", "UNIT ", "EOF"].iter().any(|word| rest.trim_start().starts_with(word))
}

/// The lines of `text` after `line`, one of its lines (a slice of it, as `numbered_lines` gives
/// them): a reader that looks a few lines ahead starts where it is instead of counting from the
/// top, which a long input of such lines would make quadratic. A `line` from elsewhere has none.
pub fn lines_after<'a>(text: &'a str, line: &str) -> impl Iterator<Item = &'a str> {
    let start = text.as_ptr() as usize;
    let at = line.as_ptr() as usize;
    let end = at.checked_sub(start).map(|offset| offset + line.len()).filter(|end| *end <= text.len());
    end.and_then(|end| text.get(end..)).unwrap_or("").lines().skip(1)
}

pub fn is_comment(line: &str) -> bool {
    let mut chars = line.chars();
    chars.next() == Some('#') && chars.next().is_none_or(char::is_whitespace)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lines after one of a text's own lines, wherever its line ends (LF or CRLF); a line from
    /// another text has none.
    #[test]
    fn the_lines_after_a_line_of_the_text() {
        for text in ["a\nb\nc\n", "a\r\nb\r\nc\r\n"] {
            let b = text.lines().nth(1).expect("line b");
            assert_eq!(lines_after(text, b).collect::<Vec<_>>(), ["c"]);
            let c = text.lines().nth(2).expect("line c");
            assert_eq!(lines_after(text, c).count(), 0);
        }
        let other = String::from("b");
        assert_eq!(lines_after("a\nb\nc\n", &other).count(), 0);
    }

    /// A heading annotation, `#!` headers and Prometheus metadata are no output; comment lines
    /// after the output has begun, and an input made of comments, are.
    #[test]
    fn comment_lines_that_are_output() {
        let numbers = |text: &str| numbered_lines(text).map(|(number, _)| number).collect::<Vec<_>>();
        assert_eq!(numbers("# annotation\n#   more of it\n\nlog line\n# ifconfig mce0\n"), [4, 5]);
        assert_eq!(numbers("# NVRM: API mismatch\n# Failed to initialize NVML\n"), [1, 2]);
        assert_eq!(numbers("#! source: x\n# HELP m a metric\n# TYPE m gauge\nm 1\n#EOF\n"), [4]);
        assert_eq!(numbers("#!/bin/sh\n#comment\n"), [2]);
    }
}
