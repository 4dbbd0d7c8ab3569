//! The simulation as a source: [`LiveRun`] (one or two lanes in-process on one virtual clock,
//! paced against the wall clock) seen through [`EventSource`].

use super::EventSource;
use ackscope_protocol::Action;

use crate::runtime::{Batch, Lanes, LiveRun};

impl EventSource for LiveRun {
    fn send(&self, lanes: Lanes, action: Action) -> bool {
        LiveRun::send(self, lanes, action)
    }
    fn try_batches(&self) -> Box<dyn Iterator<Item = Batch> + '_> {
        Box::new(LiveRun::try_batches(self))
    }
    fn is_running(&self) -> bool {
        LiveRun::is_running(self)
    }
    fn stop(&mut self) {
        LiveRun::stop(self)
    }
    fn progress(&self) -> Option<crate::runtime::Progress> {
        Some(LiveRun::progress(self))
    }
}
