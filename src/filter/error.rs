//! A filter that cannot be used: what is wrong and the character it starts at.

use std::fmt;
use std::ops::Range;

/// Byte range of a piece of the source text (here, below the grammar, so the grammar and its
/// errors both name it without importing each other).
pub type Span = Range<usize>;

/// Why a filter text was refused, pointing at the character where the problem is.
///
/// Displayed as `unknown field `seqq` at 1: did you mean `seq`?`: positions count characters
/// from 1, as an editor's column does (the filter bar draws a caret under that character).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterError {
    /// What is wrong, without the position.
    pub message: String,
    /// The offending text as a byte range of the source (empty at the end of the text).
    pub span: Span,
    /// The character the problem starts at, counted from 0.
    pub char_pos: usize,
    /// What to do about it (`did you mean `seq`?`), when there is something to say.
    pub hint: Option<String>,
}

impl FilterError {
    /// An error at byte range `span` of `source`.
    pub fn at(source: &str, span: Span, message: impl Into<String>) -> Self {
        let start = span.start.min(source.len());
        let char_pos = source.char_indices().take_while(|(b, _)| *b < start).count();
        Self { message: message.into(), span, char_pos, hint: None }
    }

    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// The 1-based column the message names.
    pub fn column(&self) -> usize {
        self.char_pos + 1
    }
}

impl fmt::Display for FilterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at {}", self.message, self.column())?;
        if let Some(h) = &self.hint {
            write!(f, ": {h}")?;
        }
        Ok(())
    }
}

impl std::error::Error for FilterError {}
