//! Which rows of a list match a filter: one bit per row, with a Fenwick tree of per-word counts,
//! so "how many match before row n" and "the k-th match" take O(log n) and a row can change its
//! answer in place (a live packet acked after it was first checked) without rebuilding the list.

/// Bits per word.
const W: usize = 64;

/// A growable bit per row with rank and select.
#[derive(Debug, Clone, Default)]
pub struct MatchSet {
    words: Vec<u64>,
    /// Fenwick tree over the words' popcounts (1-based: `tree[i - 1]` is node `i`).
    tree: Vec<u32>,
    rows: usize,
    count: usize,
}

impl MatchSet {
    pub fn new() -> Self {
        Self::default()
    }

    /// Rows covered (matching or not).
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Matching rows.
    pub fn count(&self) -> usize {
        self.count
    }

    pub fn clear(&mut self) {
        *self = Self::default();
    }

    /// Sum of the popcounts of words `0..n`.
    fn prefix_words(&self, mut n: usize) -> usize {
        let mut s = 0usize;
        while n > 0 {
            s += self.tree[n - 1] as usize;
            n &= n - 1;
        }
        s
    }

    fn add(&mut self, word: usize, delta: i32) {
        let mut i = word + 1;
        while i <= self.tree.len() {
            self.tree[i - 1] = (self.tree[i - 1] as i64 + delta as i64) as u32;
            i += i & i.wrapping_neg();
        }
    }

    /// Appends a row.
    pub fn push(&mut self, matches: bool) {
        let i = self.rows;
        if i.is_multiple_of(W) {
            // A new (empty) word: its node covers the words (pos - lowbit, pos], of which only
            // the earlier ones count yet.
            let pos = self.words.len() + 1;
            let low = pos & pos.wrapping_neg();
            let node = self.prefix_words(pos - 1) - self.prefix_words(pos - low);
            self.words.push(0);
            self.tree.push(node as u32);
        }
        self.rows += 1;
        if matches {
            self.words[i / W] |= 1 << (i % W);
            self.add(i / W, 1);
            self.count += 1;
        }
    }

    pub fn get(&self, i: usize) -> bool {
        i < self.rows && self.words[i / W] & (1 << (i % W)) != 0
    }

    /// Sets row `i`'s answer (a row past the end is ignored); true when it changed.
    pub fn set(&mut self, i: usize, matches: bool) -> bool {
        if i >= self.rows || self.get(i) == matches {
            return false;
        }
        self.words[i / W] ^= 1 << (i % W);
        if matches {
            self.add(i / W, 1);
            self.count += 1;
        } else {
            self.add(i / W, -1);
            self.count -= 1;
        }
        true
    }

    /// Matching rows among rows `0..n`.
    pub fn count_below(&self, n: usize) -> usize {
        let n = n.min(self.rows);
        let (w, b) = (n / W, n % W);
        let mut c = self.prefix_words(w);
        if b > 0 {
            c += (self.words[w] & ((1u64 << b) - 1)).count_ones() as usize;
        }
        c
    }

    /// The row of the `k`-th match (from 0).
    pub fn select(&self, k: usize) -> Option<usize> {
        if k >= self.count {
            return None;
        }
        // Descend the tree to the word holding the match.
        let mut pos = 0usize;
        let mut rest = k;
        let mut step = self.tree.len().next_power_of_two();
        while step > 0 {
            let next = pos + step;
            if next <= self.tree.len() && (self.tree[next - 1] as usize) <= rest {
                rest -= self.tree[next - 1] as usize;
                pos = next;
            }
            step >>= 1;
        }
        let mut word = self.words[pos];
        for _ in 0..rest {
            word &= word - 1;
        }
        Some(pos * W + word.trailing_zeros() as usize)
    }

    /// Every matching row, ascending.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().enumerate().flat_map(|(w, &word)| {
            let mut bits = word;
            std::iter::from_fn(move || {
                if bits == 0 {
                    return None;
                }
                let b = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                Some(w * W + b)
            })
        })
    }

    /// Matching rows in `from..to`, ascending.
    pub fn iter_range(&self, from: usize, to: usize) -> impl Iterator<Item = usize> + '_ {
        let to = to.min(self.rows);
        let first = from / W;
        let last = to.div_ceil(W);
        self.words[first.min(self.words.len())..last.min(self.words.len())].iter().enumerate().flat_map(
            move |(k, &word)| {
                let w = first + k;
                let mut bits = word;
                std::iter::from_fn(move || loop {
                    if bits == 0 {
                        return None;
                    }
                    let b = bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    let i = w * W + b;
                    if i >= from && i < to {
                        return Some(i);
                    }
                    if i >= to {
                        return None;
                    }
                })
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_and_select_agree_with_a_plain_list_through_pushes_and_flips() {
        let mut s = MatchSet::new();
        let mut plain: Vec<bool> = Vec::new();
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for round in 0..3000 {
            let r = next();
            if round % 3 != 0 || plain.is_empty() {
                let m = r % 5 == 0;
                s.push(m);
                plain.push(m);
            } else {
                let i = (r as usize) % plain.len();
                let m = r % 2 == 0;
                assert_eq!(s.set(i, m), plain[i] != m);
                plain[i] = m;
            }
            if round % 97 == 0 {
                let matches: Vec<usize> = (0..plain.len()).filter(|&i| plain[i]).collect();
                assert_eq!(s.count(), matches.len());
                assert_eq!(s.iter().collect::<Vec<_>>(), matches);
                for (k, &i) in matches.iter().enumerate() {
                    assert_eq!(s.select(k), Some(i), "k {k}");
                    assert_eq!(s.count_below(i), k);
                    assert_eq!(s.count_below(i + 1), k + 1);
                }
                assert_eq!(s.select(matches.len()), None);
                let (a, b) = (plain.len() / 3, plain.len() * 2 / 3 + 1);
                let want: Vec<usize> = matches.iter().copied().filter(|&i| i >= a && i < b).collect();
                assert_eq!(s.iter_range(a, b).collect::<Vec<_>>(), want);
            }
        }
    }
}
