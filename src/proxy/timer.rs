//! Waking the relay thread at a delivery's instant, precisely and without burning a core.
//!
//! epoll's timeout counts whole milliseconds (mio rounds a shorter one up), too coarse for a
//! delay honoured within half a millisecond at 20,000 datagrams/s. On Linux a timerfd (armed in
//! nanoseconds, registered with the poll like any socket) wakes the thread [`SPIN`] before the
//! deadline, and the last stretch is spent polling the sockets without blocking, so datagrams
//! still get read while it waits and the delivery leaves at its instant. Elsewhere the poll
//! timeout is the deadline less [`SPIN`], rounded down to whole milliseconds, then the same spin.
//! With nothing due the poll blocks with no timeout: an idle proxy uses no CPU.

use std::io;
use std::time::{Duration, Instant};

use mio::{Registry, Token};

/// How long before a deadline the thread stops sleeping and polls without blocking, by default
/// (see [`Timer::new`]): covers the kernel's wake-up latency, which took the median error of a
/// 50 ms delay from +0.03 to +0.01 ms (`examples/proxy_bench`, `SPIN_US=0,50`). Longer spins
/// buy nothing measurable: under load the tail is the scheduler's (README, Proxy).
pub const SPIN: Duration = Duration::from_micros(50);

/// The relay's wake-up timer.
pub struct Timer {
    #[cfg(target_os = "linux")]
    fd: std::os::fd::OwnedFd,
    /// The instant the timer is armed for, if any.
    armed: Option<Instant>,
    spin: Duration,
}

impl Timer {
    /// A timer that wakes the thread `spin` before each deadline.
    pub fn new(spin: Duration) -> io::Result<Self> {
        #[cfg(target_os = "linux")]
        {
            use rustix::time::{timerfd_create, TimerfdClockId, TimerfdFlags};
            let fd = timerfd_create(TimerfdClockId::Monotonic, TimerfdFlags::NONBLOCK | TimerfdFlags::CLOEXEC)?;
            Ok(Self { fd, armed: None, spin })
        }
        #[cfg(not(target_os = "linux"))]
        Ok(Self { armed: None, spin })
    }

    /// Registers the timer with the poll under `token` (nothing to register without a timerfd).
    pub fn register(&self, registry: &Registry, token: Token) -> io::Result<()> {
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            registry.register(&mut mio::unix::SourceFd(&self.fd.as_raw_fd()), token, mio::Interest::READABLE)
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = (registry, token);
            Ok(())
        }
    }

    /// The poll timeout that wakes the thread in time for `deadline` (none: nothing is due), arming
    /// the timer where there is one.
    pub fn timeout_for(&mut self, now: Instant, deadline: Option<Instant>) -> io::Result<Option<Duration>> {
        let Some(deadline) = deadline else {
            self.disarm()?;
            return Ok(None);
        };
        let wake = deadline.checked_sub(self.spin).unwrap_or(deadline);
        if wake <= now {
            // The last stretch: poll the sockets without blocking until the deadline.
            return Ok(Some(Duration::ZERO));
        }
        #[cfg(target_os = "linux")]
        {
            if self.armed != Some(wake) {
                self.arm(wake - now)?;
                self.armed = Some(wake);
            }
            Ok(None)
        }
        #[cfg(not(target_os = "linux"))]
        {
            let ms = (wake - now).as_millis() as u64;
            Ok(Some(Duration::from_millis(ms)))
        }
    }

    /// Called when the poll reports the timer: consumes the expiry so the next one wakes again.
    pub fn fired(&mut self) {
        self.armed = None;
        #[cfg(target_os = "linux")]
        {
            let mut ticks = [0u8; 8];
            // Nothing to read (it was re-armed before this expiry was read) is fine.
            let _ = rustix::io::read(&self.fd, &mut ticks);
        }
    }

    fn disarm(&mut self) -> io::Result<()> {
        if self.armed.take().is_some() {
            #[cfg(target_os = "linux")]
            self.arm(Duration::ZERO)?;
        }
        Ok(())
    }

    /// Arms the timer `after` from now (zero disarms it).
    #[cfg(target_os = "linux")]
    fn arm(&self, after: Duration) -> io::Result<()> {
        use rustix::time::{timerfd_settime, Itimerspec, TimerfdTimerFlags, Timespec};
        let value = Timespec { tv_sec: after.as_secs() as i64, tv_nsec: after.subsec_nanos() as _ };
        let spec = Itimerspec { it_interval: Timespec { tv_sec: 0, tv_nsec: 0 }, it_value: value };
        timerfd_settime(&self.fd, TimerfdTimerFlags::empty(), &spec)?;
        Ok(())
    }
}
