//! How every text parser walks its input.

/// Lines of an input with their 1-based numbers, without comment lines (`#` then whitespace, as in
/// annotated pastes and scripts): no log or tool output the parsers read starts that way, and prose
/// about a fault must not be read as the fault. nccl-tests' `#  Rank` header is read separately.
pub fn numbered_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines().enumerate().map(|(i, l)| (i + 1, l)).filter(|(_, l)| !is_comment(l))
}

pub fn is_comment(line: &str) -> bool {
    let mut chars = line.chars();
    chars.next() == Some('#') && chars.next().is_none_or(char::is_whitespace)
}
