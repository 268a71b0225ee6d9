//! What is read across the labs' sections of `stack:` (`StackSettings`, whose fields the lab
//! registry in `lab/mod.rs` declares), and the serde helpers of the sections.
use super::{Lab, StackSettings, descriptor};

impl StackSettings {
    /// The work injected on purpose in the lab's section, when not 0: CPU burnt
    /// (`stack.<lab>.burn_us`) and waiting without CPU (`stack.<lab>.wait_us`). A run made with
    /// either is not a clean run, and its reports say so.
    pub fn injected(&self) -> Vec<String> {
        let burns = Lab::ALL
            .into_iter()
            .filter_map(|lab| descriptor(lab).burn_us(self).map(|us| (lab, us)))
            .filter(|(_, us)| *us > 0)
            .map(|(lab, us)| {
                format!("stack.{lab}.burn_us={us} ({us} µs of CPU burnt per request in the app)")
            });
        let waits = Lab::ALL
            .into_iter()
            .filter_map(|lab| descriptor(lab).wait_us(self).map(|us| (lab, us)))
            .filter(|(_, us)| *us > 0)
            .map(|(lab, us)| {
                format!(
                    "stack.{lab}.wait_us={us} ({us} µs of waiting per answer in the app, no CPU)"
                )
            });
        burns.chain(waits).collect()
    }

    /// The app's concurrent request slots, its pool N (`LabDescriptor::slots`: php
    /// `max_children`, node `pool_max` x `processes`, demo `workers`) of the first lab with a
    /// section. One definition for the fit's `pool` and the report's pool ceiling.
    pub(crate) fn slots(&self) -> Option<u32> {
        Lab::ALL
            .into_iter()
            .find_map(|lab| descriptor(lab).slots(self).ok())
            .map(|n| n as u32)
    }

    /// Which labs' sections are present, in `Lab::ALL` order.
    pub(crate) fn sections(&self) -> impl Iterator<Item = (Lab, bool)> + '_ {
        Lab::ALL.into_iter().map(|lab| (lab, self.has(lab)))
    }
}

pub(super) fn yes() -> bool {
    true
}

pub(super) fn is_true(v: &bool) -> bool {
    *v
}

pub(super) fn is_zero(v: &u32) -> bool {
    *v == 0
}
