//! The relay thread's place in the scheduler, which decides whether a configured delay is
//! honoured on a machine whose cores are busy with other work.
//!
//! Each delayed copy leaves when the relay thread wakes at its deadline. On a loaded machine the
//! thread is woken on time but waits for a core behind other processes: at load 6.5 on 2 cores
//! (`examples/proxy_bench`, phase 2) copies of a 50 ms delay left up to +6 ms late at p99, and
//! the proxy's own read-to-sent measure showed the same lateness, so it was spent waiting to run,
//! not in the timer, the sockets or the link. The same run with the whole process on a
//! real-time policy (`chrt -r 10`) gave +0.10 / +0.02 / +0.01 ms at 1k / 10k / 20k datagrams/s.
//! Asking the fair scheduler for more did not do it (each set on the relay thread from outside
//! as it started, same load): nice -20 left +1.4 and +2.0 ms at 1k and 20k/s (the sink, at the
//! normal policy, then fell behind at 10k/s: +21.8), a 100 µs EEVDF slice
//! (`sched_attr.sched_runtime`, Linux 6.12+) +1.1 / +4.5 / +5.0 ms.
//!
//! So `--realtime` puts the relay thread alone on SCHED_FIFO at the lowest real-time priority: it
//! runs as soon as it wakes, ahead of every ordinary process. That needs a privilege (root,
//! CAP_SYS_NICE, or an RLIMIT_RTPRIO of 1 or more); without it the proxy refuses to start and
//! says so. It is opt-in because a real-time thread also runs ahead of the game and its server
//! on the same machine: the relay blocks in its poll when nothing is due and takes one core at
//! most under a flood, and the kernel's real-time throttling (`sched_rt_runtime_us`, 95 % by
//! default) keeps the rest for everyone else.

/// Puts the calling thread on SCHED_FIFO at the lowest real-time priority, or says why not.
#[cfg(target_os = "linux")]
pub fn request_realtime() -> Result<(), String> {
    use thread_priority::unix::{
        set_thread_priority_and_policy, thread_native_id, RealtimeThreadSchedulePolicy, ThreadSchedulePolicy,
    };
    use thread_priority::ThreadPriority;
    let policy = ThreadSchedulePolicy::Realtime(RealtimeThreadSchedulePolicy::Fifo);
    set_thread_priority_and_policy(thread_native_id(), ThreadPriority::Min, policy).map_err(|e| {
        let why = match e {
            thread_priority::Error::OS(code) => std::io::Error::from_raw_os_error(code).to_string(),
            other => other.to_string(),
        };
        format!(
            "--realtime: the system refused a real-time priority for the relay thread ({why}); it needs root, \
             CAP_SYS_NICE (setcap cap_sys_nice+ep on the ackscope binary) or an RLIMIT_RTPRIO of 1 or more \
             (ulimit -r)"
        )
    })
}

/// Real-time scheduling is asked of Linux only.
#[cfg(not(target_os = "linux"))]
pub fn request_realtime() -> Result<(), String> {
    Err("--realtime: a real-time priority for the relay thread is available on Linux only".into())
}
