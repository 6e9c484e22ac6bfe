//! How every text parser walks its input.

/// Lines of an input with their 1-based numbers, without comment lines (`#` then whitespace, as in
/// annotated pastes and scripts): no log or tool output the parsers read starts that way, and prose
/// about a fault must not be read as the fault. nccl-tests' `#  Rank` header is read separately.
pub fn numbered_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines().enumerate().map(|(i, l)| (i + 1, l)).filter(|(_, l)| !is_comment(l))
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
}
