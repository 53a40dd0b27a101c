//! Counter structs that add up field by field (a level's counters summed over its units:
//! SMs, L2 slices, DRAM channels).

/// A counter, or an array of counters, that adds another of its kind into itself.
pub trait Counter {
    fn add(&mut self, other: &Self);
}

impl Counter for u64 {
    #[inline]
    fn add(&mut self, other: &Self) {
        *self += *other;
    }
}

impl<T: Counter, const N: usize> Counter for [T; N] {
    fn add(&mut self, other: &Self) {
        for (a, b) in self.iter_mut().zip(other) {
            a.add(b);
        }
    }
}

/// Defines a struct of counters (every field a [`Counter`]) and `AddAssign<&Self>` for it,
/// which adds every field: a counter added to the struct is summed with the others.
macro_rules! counters {
    (
        $(#[$attr:meta])*
        $vis:vis struct $name:ident {
            $($(#[$field_attr:meta])* $field_vis:vis $field:ident: $ty:ty,)*
        }
    ) => {
        $(#[$attr])*
        $vis struct $name {
            $($(#[$field_attr])* $field_vis $field: $ty,)*
        }

        impl ::std::ops::AddAssign<&$name> for $name {
            fn add_assign(&mut self, other: &$name) {
                $($crate::counters::Counter::add(&mut self.$field, &other.$field);)*
            }
        }
    };
}
pub(crate) use counters;

#[cfg(test)]
mod tests {
    counters! {
        #[derive(Debug, Default, PartialEq)]
        struct Two {
            /// A documented counter.
            a: u64,
            b: [[u64; 2]; 2],
        }
    }

    #[test]
    fn adds_every_field() {
        let two = |a, b| Two { a, b };
        let mut x = two(1, [[1, 2], [3, 4]]);
        x += &two(10, [[10, 20], [30, 40]]);
        assert_eq!(x, two(11, [[11, 22], [33, 44]]));
    }
}
