//! File-number patterns of animated OBJ colliders (`frames = "body_{:04}.obj"`).

/// A `{}` / `{:0N}` file-number pattern split around its placeholder.
pub(super) struct FramePattern<'a> {
    prefix: &'a str,
    width: usize,
    suffix: &'a str,
}

impl<'a> FramePattern<'a> {
    pub(super) fn parse(pattern: &'a str) -> Result<Self, String> {
        let open = pattern
            .find('{')
            .ok_or_else(|| "needs a placeholder `{}` or `{:0N}` for the frame number".to_owned())?;
        let close = pattern[open..]
            .find('}')
            .map(|c| open + c)
            .ok_or_else(|| "placeholder `{` is not closed by `}`".to_owned())?;
        let spec = &pattern[open + 1..close];
        let width = if spec.is_empty() {
            0
        } else {
            let digits = spec
                .strip_prefix(":0")
                .filter(|d| !d.is_empty() && d.len() <= 2 && d.bytes().all(|b| b.is_ascii_digit()))
                .ok_or_else(|| format!("placeholder `{{{spec}}}` must be `{{}}` or `{{:0N}}`"))?;
            digits.parse::<usize>().map_err(|e| e.to_string())?
        };
        let suffix = &pattern[close + 1..];
        if suffix.contains('{') || suffix.contains('}') {
            return Err("only one placeholder is allowed".to_owned());
        }
        Ok(FramePattern {
            prefix: &pattern[..open],
            width,
            suffix,
        })
    }

    pub(super) fn format(&self, number: usize) -> String {
        format!(
            "{}{:0w$}{}",
            self.prefix,
            number,
            self.suffix,
            w = self.width
        )
    }
}
