//! A small RFC 4180 CSV reader: comma separated, fields optionally in double quotes with
//! `""` for a quote inside, quoted fields may hold commas and line breaks, LF or CRLF line
//! ends, a UTF-8 byte-order mark is skipped. Records keep the (1-based) line they start on.

/// One record and the line it starts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Record {
    pub line: usize,
    pub fields: Vec<String>,
}

/// Splits `text` into records. Blank lines give no record. Errors carry the line and a
/// description.
pub(crate) fn parse(text: &str) -> Result<Vec<Record>, (usize, String)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    let mut line = 1usize;
    let mut fields: Vec<String> = Vec::new();
    let mut field = String::new();
    let mut rec_line = 1usize;
    // Whether the current record has any content (to drop blank lines).
    let mut started = false;
    // Whether the current field was quoted (to reject text after the closing quote).
    let mut after_quote = false;

    while let Some(c) = chars.next() {
        match c {
            '"' if !after_quote && field.is_empty() => {
                // Quoted field.
                started = true;
                let open_line = line;
                loop {
                    match chars.next() {
                        None => {
                            return Err((open_line, "unterminated quoted field".to_string()));
                        }
                        Some('"') => {
                            if chars.peek() == Some(&'"') {
                                chars.next();
                                field.push('"');
                            } else {
                                break;
                            }
                        }
                        Some('\n') => {
                            line += 1;
                            field.push('\n');
                        }
                        Some(ch) => field.push(ch),
                    }
                }
                after_quote = true;
            }
            ',' => {
                started = true;
                fields.push(std::mem::take(&mut field));
                after_quote = false;
            }
            '\r' if chars.peek() == Some(&'\n') => {}
            '\n' => {
                if started || !field.is_empty() {
                    fields.push(std::mem::take(&mut field));
                    out.push(Record {
                        line: rec_line,
                        fields: std::mem::take(&mut fields),
                    });
                }
                started = false;
                after_quote = false;
                line += 1;
                rec_line = line;
            }
            c => {
                if after_quote {
                    if c == ' ' || c == '\t' || c == '\r' {
                        continue;
                    }
                    return Err((line, format!("unexpected {c:?} after a closing quote")));
                }
                started = true;
                field.push(c);
            }
        }
    }
    if started || !field.is_empty() {
        fields.push(field);
        out.push(Record {
            line: rec_line,
            fields,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_and_lines() {
        let r = parse("a,b\r\n\"x,1\",\"he said \"\"hi\"\"\"\n\n\"multi\nline\",3\nlast").unwrap();
        assert_eq!(r.len(), 4);
        assert_eq!(r[0].fields, vec!["a", "b"]);
        assert_eq!(r[1].fields, vec!["x,1", "he said \"hi\""]);
        assert_eq!(r[1].line, 2);
        assert_eq!(r[2].fields, vec!["multi\nline", "3"]);
        assert_eq!(r[2].line, 4);
        assert_eq!(r[3].line, 6);
        assert_eq!(r[3].fields, vec!["last"]);
    }

    #[test]
    fn errors() {
        assert_eq!(parse("a\n\"open").unwrap_err().0, 2);
        assert_eq!(parse("a\n\"x\"y").unwrap_err().0, 2);
        assert!(parse("\u{feff}a,b").unwrap()[0].fields[0] == "a");
        assert_eq!(parse("a,,\n").unwrap()[0].fields, vec!["a", "", ""]);
    }
}
