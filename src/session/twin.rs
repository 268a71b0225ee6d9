//! Two rounds that take turns on one host (`perflab compare`'s per-step interleaving): each runs
//! its own stack, generators and samplers, and their measured loads start on one instant, so
//! their timelines' turns (`plan::turns`) interleave as planned. Each round meets its twin just
//! before the aligned start; a round that stops before it got there (a failed stack-up, an
//! interrupt) leaves, and its twin's meeting fails at once instead of waiting for ever.
use std::sync::Mutex;

use anyhow::{Result, bail};
use chrono::{DateTime, Utc};
use tokio::sync::Notify;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Slot {
    Coming,
    Met(DateTime<Utc>),
    Left,
}

/// The meeting point of a pair of rounds.
pub struct Twins {
    slots: Mutex<[Slot; 2]>,
    changed: Notify,
}

impl Default for Twins {
    fn default() -> Self {
        Twins {
            slots: Mutex::new([Slot::Coming; 2]),
            changed: Notify::new(),
        }
    }
}

impl Twins {
    /// Side `i` (0 or 1) of the pair.
    pub fn side(&self, i: usize) -> Twin<'_> {
        assert!(i < 2, "a pair has two sides");
        Twin { twins: self, me: i }
    }
}

/// One round's end of the meeting.
pub struct Twin<'t> {
    twins: &'t Twins,
    me: usize,
}

impl Twin<'_> {
    /// Arrive at `now` and wait for the twin: both get the later of their two arrivals, the
    /// instant both loads are aligned from. Fails when the twin left without arriving.
    pub async fn meet(&self, now: DateTime<Utc>) -> Result<DateTime<Utc>> {
        loop {
            let changed = self.twins.changed.notified();
            {
                let mut s = self.twins.slots.lock().expect("twin slots");
                if s[self.me] == Slot::Coming {
                    s[self.me] = Slot::Met(now);
                    self.twins.changed.notify_waiters();
                }
                match s[1 - self.me] {
                    Slot::Met(t) => return Ok(now.max(t)),
                    Slot::Left => bail!(
                        "the other side's round stopped before its load started (its status says why); this side's turns would run alone"
                    ),
                    Slot::Coming => {}
                }
            }
            changed.await;
        }
    }

    /// The round is over (however it ended): a twin still coming to the meeting is told.
    pub fn leave(&self) {
        let mut s = self.twins.slots.lock().expect("twin slots");
        if s[self.me] == Slot::Coming {
            s[self.me] = Slot::Left;
        }
        self.twins.changed.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn at(s: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000 + s, 0).unwrap()
    }

    #[tokio::test]
    async fn both_get_the_later_arrival() {
        let twins = Twins::default();
        let (a, b) = (twins.side(0), twins.side(1));
        let late = async {
            tokio::time::sleep(Duration::from_millis(30)).await;
            b.meet(at(7)).await
        };
        let (ra, rb) = tokio::join!(a.meet(at(3)), late);
        assert_eq!((ra.unwrap(), rb.unwrap()), (at(7), at(7)));
    }

    #[tokio::test]
    async fn a_twin_that_leaves_fails_the_meeting_instead_of_hanging() {
        let twins = Twins::default();
        let (a, b) = (twins.side(0), twins.side(1));
        let leave = async {
            tokio::time::sleep(Duration::from_millis(30)).await;
            b.leave();
        };
        let met = tokio::time::timeout(Duration::from_secs(5), a.meet(at(1)));
        let (r, ()) = tokio::join!(met, leave);
        let err = r.expect("no hang").unwrap_err().to_string();
        assert!(err.contains("stopped before its load"), "{err}");
        // leaving after meeting changes nothing for a later look
        let twins = Twins::default();
        let (a, b) = (twins.side(0), twins.side(1));
        let (ra, rb) = tokio::join!(a.meet(at(2)), b.meet(at(1)));
        a.leave();
        assert_eq!((ra.unwrap(), rb.unwrap()), (at(2), at(2)));
        assert_eq!(b.meet(at(9)).await.unwrap(), at(9));
    }
}
