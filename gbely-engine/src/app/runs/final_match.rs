//! The final: who plays which finalist seat, and the final table.

use gbely_world::Map;

use super::{Result, RunError};
use crate::session::MatchRecord;

/// Who plays which finalist seat: for each seat, the index of the entry (the user's agents
/// first, then the fills). `pinned[i]` is the seat of entry `i`; the rest follow a shuffle
/// seeded by the map's fingerprint, so the same map always seats the same way.
pub fn final_seating(map: &Map, pinned: &[u8]) -> Result<Vec<usize>> {
    let n = map.seats().len() - 1;
    let mut order: Vec<usize> = (0..n).collect();
    let mut x = u64::from_str_radix(&map.fingerprint(), 16).unwrap_or(0x9e37_79b9);
    for i in (1..n).rev() {
        x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        order.swap(i, (z % (i as u64 + 1)) as usize);
    }
    // order[k] = the seat of entry k; pinned entries take their seats first.
    let mut seat_of: Vec<Option<usize>> = vec![None; n];
    for (entry, &seat) in pinned.iter().enumerate() {
        if seat as usize >= n {
            return Err(RunError::Seating(format!("{seat}: the finalists' seats are 0…{}", n - 1)));
        }
        if entry >= n {
            return Err(RunError::Seating("more values than seats".into()));
        }
        if seat_of.contains(&Some(seat as usize)) {
            return Err(RunError::Seating(format!("{seat} is given twice")));
        }
        seat_of[entry] = Some(seat as usize);
    }
    let taken: Vec<usize> = seat_of.iter().flatten().copied().collect();
    let mut free = order.into_iter().filter(|s| !taken.contains(s));
    for s in seat_of.iter_mut() {
        if s.is_none() {
            *s = free.next();
        }
    }
    let mut entry_of = vec![0; n];
    for (entry, seat) in seat_of.iter().enumerate() {
        entry_of[seat.expect("every entry seated")] = entry;
    }
    Ok(entry_of)
}

/// Corner or edge, for tables.
pub fn seat_class(seat: usize) -> &'static str {
    if seat.is_multiple_of(2) {
        "corner"
    } else {
        "edge"
    }
}

/// One row of the final table.
#[derive(Clone, Debug, PartialEq)]
pub struct FinalRow {
    pub rank: Option<usize>,
    pub seat: usize,
    pub class: &'static str,
    pub name: String,
    pub share: Option<f64>,
    pub cells: u32,
    pub tiebreak: Option<u32>,
    pub violations: u32,
    pub disqualified: bool,
}

/// Ranks `rows` (a [`final_table`]) again with an exact tie — the same share and the same
/// tie-break round — decided by `place_of_seat` (the competition's rule: the better leaderboard
/// place first), so that every place of the final is one finalist's. Disqualified rows stay
/// last, unranked.
pub fn order_ties_by(rows: &mut [FinalRow], place_of_seat: &[usize]) {
    let place = |r: &FinalRow| place_of_seat.get(r.seat).copied().unwrap_or(usize::MAX);
    rows.sort_by(|a, b| match (a.share, b.share) {
        (Some(x), Some(y)) => y.total_cmp(&x).then(a.tiebreak.cmp(&b.tiebreak)).then(place(a).cmp(&place(b))),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => place(a).cmp(&place(b)),
    });
    for (k, r) in rows.iter_mut().enumerate() {
        r.rank = (!r.disqualified).then_some(k + 1);
    }
}

/// The finalists ranked by share, then by the earlier tie-break round (an exact tie by seat:
/// see [`order_ties_by`] for the competition's rule); disqualified last.
pub fn final_table(map: &Map, rec: &MatchRecord) -> Vec<FinalRow> {
    let finalists = map.seats().len() - 1;
    let mut rows: Vec<FinalRow> = rec.outcome[..finalists]
        .iter()
        .map(|o| FinalRow {
            rank: None,
            seat: o.seat as usize,
            class: seat_class(o.seat as usize),
            name: rec.names[o.seat as usize].clone(),
            share: o.score,
            cells: o.cells,
            tiebreak: o.tiebreak_round,
            violations: o.violations,
            disqualified: o.disqualified.is_some(),
        })
        .collect();
    rows.sort_by(|a, b| match (a.share, b.share) {
        (Some(x), Some(y)) => y.total_cmp(&x).then(a.tiebreak.cmp(&b.tiebreak)).then(a.seat.cmp(&b.seat)),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => a.seat.cmp(&b.seat),
    });
    for (k, r) in rows.iter_mut().enumerate() {
        if !r.disqualified {
            r.rank = Some(k + 1);
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(seat: usize, share: Option<f64>, tiebreak: u32) -> FinalRow {
        FinalRow {
            rank: None,
            seat,
            class: seat_class(seat),
            name: format!("s{seat}"),
            share,
            cells: 0,
            tiebreak: Some(tiebreak),
            violations: 0,
            disqualified: share.is_none(),
        }
    }

    /// Rules §9–§10 and docs/arena.md: share, then the tie-break round, then the better
    /// leaderboard place; the disqualified unranked, last.
    #[test]
    fn an_exact_tie_in_the_final_goes_to_the_better_leaderboard_place() {
        let mut rows = vec![
            row(0, Some(10.0), 50),
            row(1, Some(12.0), 90),
            row(2, Some(10.0), 50),
            row(3, None, 0),
            row(4, Some(10.0), 40),
        ];
        // Seat 0 holds the board's 5th, seat 2 the board's 1st.
        order_ties_by(&mut rows, &[5, 2, 1, 3, 4]);
        let got: Vec<(usize, Option<usize>)> = rows.iter().map(|r| (r.seat, r.rank)).collect();
        assert_eq!(got, vec![(1, Some(1)), (4, Some(2)), (2, Some(3)), (0, Some(4)), (3, None)]);
    }
}
