//! Likely typos: the valid name nearest to a misspelt one, for errors that say "did you mean
//! ...?" (scenario fields, `--set` names, action names and arguments).

/// Edit distance between two names (Levenshtein, on characters).
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (diag + usize::from(ca != *cb)).min(row[j] + 1).min(row[j + 1] + 1);
            diag = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// The candidate nearest to `name`, if it is near enough to be a likely typo (at most a third of
/// its length away, and at least 1 edit for short names).
pub fn nearest_name<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (name.chars().count() / 3).max(2);
    candidates
        .into_iter()
        .map(|c| (edit_distance(name, c), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_names_are_typos_not_anything() {
        assert_eq!(edit_distance("loss_precent", "loss_percent"), 2);
        let names = ["loss_percent", "latency_ms", "jitter_ms"];
        assert_eq!(nearest_name("loss_precent", names), Some("loss_percent"));
        assert_eq!(nearest_name("latncy_ms", names), Some("latency_ms"));
        assert_eq!(nearest_name("bandwidth", names), None);
    }
}
