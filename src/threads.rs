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
}
