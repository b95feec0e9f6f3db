//! Work shared between the machine's cores, once: reading runs, judging
//! series and rendering the site's parts each use it.

/// `f` of each of `items`, in their order, on every core. Items differ
/// by a thousandfold (a run's page, a series of 5,000 runs, the lists of
/// all of them): rayon's work stealing keeps each core busy until the last
/// item, where stretches fixed in advance left one core idle.
pub fn map_in_order<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    use rayon::prelude::*;
    items.par_iter().with_max_len(1).map(&f).collect()
}

/// `a` and `b` at once, on two cores when one is free.
pub fn both<A: Send, B: Send>(
    a: impl FnOnce() -> A + Send,
    b: impl FnOnce() -> B + Send,
) -> (A, B) {
    rayon::join(a, b)
}

/// `f` of each of `items` on every core, each result handed to `take` on
/// the calling thread as soon as it is made, with the item's index, in no
/// set order. At most `queued` results wait for `take`, so memory stays
/// flat while `take` is slower (a writer). When `take` fails, the items not
/// yet begun are skipped and its error is returned.
///
/// Rendering a site in batches left a core idle while the other finished a
/// batch's slowest item, and both idle while the batch was handed over.
pub fn map_streamed<T: Sync, R: Send, E>(
    items: &[T],
    queued: usize,
    f: impl Fn(&T) -> R + Sync,
    mut take: impl FnMut(usize, R) -> Result<(), E>,
) -> Result<(), E> {
    use rayon::prelude::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    let (made, results) = std::sync::mpsc::sync_channel(queued);
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let (f, stop) = (&f, &stop);
        scope.spawn(move || {
            items
                .par_iter()
                .enumerate()
                .with_max_len(1)
                .for_each_with(made, |made, (i, item)| {
                    if stop.load(Ordering::Relaxed) {
                        return;
                    }
                    // Refused only once `take` failed and its end was dropped.
                    if made.send((i, f(item))).is_err() {
                        stop.store(true, Ordering::Relaxed);
                    }
                });
        });
        // Owned here, so that an early return drops it before the scope
        // waits for the workers: a worker blocked on a full queue wakes.
        for (i, result) in results {
            if let Err(e) = take(i, result) {
                stop.store(true, Ordering::Relaxed);
                return Err(e);
            }
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn results_come_in_the_items_order() {
        let items: Vec<u32> = (0..101).collect();
        assert_eq!(
            super::map_in_order(&items, |x| x * 2),
            items.iter().map(|x| x * 2).collect::<Vec<_>>()
        );
        assert!(super::map_in_order(&[] as &[u32], |x| *x).is_empty());
    }

    #[test]
    fn every_result_is_taken_once_and_a_failing_take_stops_the_rest() {
        let items: Vec<u64> = (0..500).collect();
        let mut seen = vec![0; items.len()];
        super::map_streamed(
            &items,
            4,
            |x| x * 3,
            |i, r| {
                assert_eq!(r, items[i] * 3);
                seen[i] += 1;
                Ok::<(), ()>(())
            },
        )
        .unwrap();
        assert!(seen.iter().all(|&n| n == 1));
        // A failure on the tenth result: returned, and the 500 items are
        // not all made (a queue of 2 holds the workers back).
        let made = std::sync::atomic::AtomicUsize::new(0);
        let mut taken = 0;
        let outcome = super::map_streamed(
            &items,
            2,
            |x| {
                made.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                *x
            },
            |_, _| {
                taken += 1;
                if taken == 10 {
                    Err("full disk")
                } else {
                    Ok(())
                }
            },
        );
        assert_eq!(outcome, Err("full disk"));
        assert!(made.into_inner() < 100);
    }
}
