//! Real UDP sockets as a source: [`UdpRun`] (the scenario's two endpoints on loopback, each on
//! its own thread and socket) seen through [`EventSource`].

use super::EventSource;
use crate::runtime::udp::UdpRun;
use ackscope_protocol::Action;

use crate::runtime::{Batch, Lanes};

impl EventSource for UdpRun {
    fn send(&self, lanes: Lanes, action: Action) -> bool {
        UdpRun::send(self, lanes, action)
    }
    fn try_batches(&self) -> Box<dyn Iterator<Item = Batch> + '_> {
        Box::new(UdpRun::try_batches(self))
    }
    fn is_running(&self) -> bool {
        UdpRun::is_running(self)
    }
    fn stop(&mut self) {
        UdpRun::stop(self);
    }
    fn payloads(&self, lane: usize) -> Option<crate::model::payloads::SharedPayloads> {
        (lane == 0).then(|| UdpRun::payloads(self))
    }
}
