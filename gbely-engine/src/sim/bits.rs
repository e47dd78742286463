//! A per-side territory bitset laid out row by row, so that the own cells and the visible border
//! of a side (SPEC §5) come out in row-major order from a few word operations per row.

#[derive(Clone, Debug)]
pub(crate) struct Territory {
    width: usize,
    height: usize,
    /// Words per row.
    wpr: usize,
    /// Mask of the valid bits of a row's last word.
    last_mask: u64,
    words: Vec<u64>,
}

impl Territory {
    pub(crate) fn new(width: u32, height: u32) -> Territory {
        let (width, height) = (width as usize, height as usize);
        let wpr = width.div_ceil(64);
        let rem = width % 64;
        let last_mask = if rem == 0 { u64::MAX } else { (1u64 << rem) - 1 };
        Territory { width, height, wpr, last_mask, words: vec![0; wpr * height] }
    }

    #[inline]
    fn pos(&self, cell: u32) -> (usize, u64) {
        let (r, c) = (cell as usize / self.width, cell as usize % self.width);
        (r * self.wpr + c / 64, 1u64 << (c % 64))
    }

    #[inline]
    pub(crate) fn set(&mut self, cell: u32) {
        let (w, b) = self.pos(cell);
        self.words[w] |= b;
    }

    #[inline]
    pub(crate) fn clear(&mut self, cell: u32) {
        let (w, b) = self.pos(cell);
        self.words[w] &= !b;
    }

    #[cfg(test)]
    pub(crate) fn get(&self, cell: u32) -> bool {
        let (w, b) = self.pos(cell);
        self.words[w] & b != 0
    }

    /// Calls `f` for every cell of the territory, row-major.
    #[inline]
    pub(crate) fn for_each(&self, mut f: impl FnMut(u32)) {
        for r in 0..self.height {
            let row = &self.words[r * self.wpr..(r + 1) * self.wpr];
            for (k, &word) in row.iter().enumerate() {
                let mut w = word;
                while w != 0 {
                    let b = w.trailing_zeros() as usize;
                    f((r * self.width + k * 64 + b) as u32);
                    w &= w - 1;
                }
            }
        }
    }

    /// Calls `f` for every cell outside the territory with a 4-neighbour inside it, row-major.
    #[inline]
    pub(crate) fn for_each_border(&self, mut f: impl FnMut(u32)) {
        let wpr = self.wpr;
        for r in 0..self.height {
            let row = &self.words[r * wpr..(r + 1) * wpr];
            for k in 0..wpr {
                let own = row[k];
                let mut n = 0u64;
                if r > 0 {
                    n |= self.words[(r - 1) * wpr + k];
                }
                if r + 1 < self.height {
                    n |= self.words[(r + 1) * wpr + k];
                }
                // West neighbour owned: bit c-1 set → shift left; carry from the previous word.
                n |= own << 1;
                if k > 0 {
                    n |= row[k - 1] >> 63;
                }
                // East neighbour owned: bit c+1 set → shift right; carry from the next word.
                n |= own >> 1;
                if k + 1 < wpr {
                    n |= row[k + 1] << 63;
                }
                let mut w = n & !own;
                if k + 1 == wpr {
                    w &= self.last_mask;
                }
                while w != 0 {
                    let b = w.trailing_zeros() as usize;
                    f((r * self.width + k * 64 + b) as u32);
                    w &= w - 1;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gbely_rules::{Cell, Grid};

    /// The bitset border equals the definition (not owned, a neighbour owned) on odd widths that
    /// straddle word boundaries.
    #[test]
    fn border_matches_the_definition() {
        for (w, h) in [(1, 1), (3, 2), (60, 60), (64, 3), (65, 4), (130, 5)] {
            let g = Grid::new(w, h);
            let mut t = Territory::new(w, h);
            let mut owned = vec![false; g.len()];
            let mut x = 12345u64;
            for (i, slot) in owned.iter_mut().enumerate() {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                if (x >> 60) < 3 {
                    *slot = true;
                    t.set(i as u32);
                }
            }
            let mut got = Vec::new();
            t.for_each_border(|c| got.push(c));
            let want: Vec<u32> = g
                .cells()
                .filter(|&c| !owned[c.index()] && g.neighbours(c).iter().any(|n: Cell| owned[n.index()]))
                .map(|c| c.0)
                .collect();
            assert_eq!(got, want, "{w}×{h}");
            let mut own = Vec::new();
            t.for_each(|c| own.push(c));
            assert_eq!(own, g.cells().filter(|c| owned[c.index()]).map(|c| c.0).collect::<Vec<_>>());
            for i in 0..g.len() as u32 {
                assert_eq!(t.get(i), owned[i as usize]);
                t.clear(i);
            }
            assert!(t.words.iter().all(|&w| w == 0));
        }
    }
}
