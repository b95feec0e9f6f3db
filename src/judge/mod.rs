//! Judging change along a series (one setup's runs over time): the rule
//! that calls a run slower, faster or within noise ([`change`]), the change
//! points of a whole series ([`change_points`]) and which runs form a
//! series ([`series`]). Numbers and enums only; render words them.

pub mod capacity;
pub mod change;
pub mod change_points;
pub mod series;
