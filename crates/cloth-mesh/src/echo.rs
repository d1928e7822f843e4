//! Error messages that quote the user's input stay readable: quoted input is cut to
//! [`ECHO_CHARS`] characters and control characters are escaped, so a 5 MB token or a stray
//! escape sequence never reaches a terminal whole.

/// Characters of quoted input kept in an error message.
pub const ECHO_CHARS: usize = 80;

/// Longest message kept (characters).
const MESSAGE_CHARS: usize = 2000;

/// `message` with every span quoted in backticks or double quotes cut to [`ECHO_CHARS`]
/// characters (an ellipsis marks the cut), control characters escaped (`\n`, `\u{1b}`, ...),
/// and the whole cut to 2000 characters.
pub fn sanitize_message(message: &str) -> String {
    let mut out = String::with_capacity(message.len().min(MESSAGE_CHARS + 8));
    let mut quote: Option<char> = None;
    let (mut quoted, mut total) = (0usize, 0usize);
    for c in message.chars() {
        if total >= MESSAGE_CHARS {
            out.push('…');
            break;
        }
        match quote {
            Some(q) if c == q => {
                quote = None;
            }
            Some(_) => {
                quoted += 1;
                if quoted > ECHO_CHARS {
                    if quoted == ECHO_CHARS + 1 {
                        out.push('…');
                        total += 1;
                    }
                    continue;
                }
            }
            None if c == '`' || c == '"' => {
                quote = Some(c);
                quoted = 0;
            }
            None => {}
        }
        if c.is_control() {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
        total += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_quotes_are_cut_and_control_characters_escaped() {
        let long = "x".repeat(5_000_000);
        let m = sanitize_message(&format!("unknown preset `{long}`, expected one of: cotton"));
        assert!(m.len() < 200, "{}", m.len());
        assert!(m.starts_with("unknown preset `xxx") && m.ends_with("`, expected one of: cotton"));
        let m = sanitize_message("bad \"a\u{1b}[31mb\nc\" here");
        assert_eq!(m, "bad \"a\\u{1b}[31mb\\nc\" here");
        assert!(!m.chars().any(char::is_control));
        let m = sanitize_message(&"y".repeat(10_000));
        assert!(m.chars().count() <= 2001);
        assert_eq!(sanitize_message("plain `short` text"), "plain `short` text");
    }
}
