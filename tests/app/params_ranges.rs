//! The widened ranges run and ack expiry 0 is asked for explicitly (issue 27): the top of
//! `send_rate_pps`, `link.bandwidth_kbps` and `workload.reliable_rate_hz` runs headless and
//! prints sane figures, a value past the top is refused with the range, and
//! `ack.ack_expiry_ms=0` is refused by run, compare, sweep and peer without `--allow-false-acks`
//! (taken with it).

use std::process::{Command, Output};

fn ackscope(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ackscope")).args(args).output().expect("run ackscope")
}

fn json(out: &Output) -> serde_json::Value {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(text.lines().next().unwrap_or_default()).expect("one JSON line")
}

/// Refused with one line naming the field, why and the flag.
fn refused_for_false_acks(out: &Output) {
    assert!(!out.status.success(), "accepted ack.ack_expiry_ms=0");
    let err = String::from_utf8_lossy(&out.stderr);
    for part in ["'ack.ack_expiry_ms' = 0", "false acks", "--allow-false-acks"] {
        assert!(err.contains(part), "{part:?} missing from {err}");
    }
}

#[test]
fn the_top_of_each_widened_range_runs_and_prints_sane_figures() {
    let top = [
        "--set",
        "send_rate_pps=10000",
        "--set",
        "link.bandwidth_kbps=10000000",
        "--set",
        "workload.reliable_rate_hz=10000",
    ];
    for strategy in ["glenn", "acks"] {
        let s = format!("strategy={strategy}");
        let mut args = vec!["run", "--seconds", "1", "--json", "--set", &s];
        args.extend(top);
        let j = json(&ackscope(&args));
        let p = &j["packets"];
        let sent = p["sent"].as_u64().unwrap();
        // Both ends at 10,000 packets/s for a second (and a drain for glenn).
        assert!(sent >= 19_000, "{strategy}: {sent} packets sent");
        // What the 5 % default loss did not drop arrived (bar what was in flight at the end).
        let (dropped, delivered) = (p["link_dropped"].as_u64().unwrap(), p["delivered"].as_u64().unwrap());
        assert!(dropped + delivered <= sent && delivered >= sent * 85 / 100, "{strategy}: {p}");
        if strategy == "glenn" {
            let r = &j["reliable"];
            // A Poisson process of 10,000/s for one second, every message delivered once.
            let (sent, delivered) = (r["sent"].as_u64().unwrap(), r["delivered"].as_u64().unwrap());
            // Both ends send; a full send queue refuses the rest (counted apart).
            assert!(sent >= 9_000, "{r}");
            assert_eq!((delivered, r["duplicated"].as_u64()), (sent, Some(0)), "{r}");
        }
    }
    for (name, past) in
        [("send_rate_pps", "10001"), ("link.bandwidth_kbps", "10000001"), ("workload.reliable_rate_hz", "10001")]
    {
        let set = format!("{name}={past}");
        let out = ackscope(&["run", "--seconds", "1", "--set", &set]);
        assert!(!out.status.success(), "{set} accepted");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(name) && err.contains("out of range"), "{set}: {err}");
    }
}

#[test]
fn ack_expiry_zero_is_refused_without_the_flag_and_runs_with_it() {
    let zero = ["--set", "ack.ack_expiry_ms=0"];
    let run = |extra: &[&str]| ackscope(&[&["run", "--seconds", "1", "--json"], &zero[..], extra].concat());
    refused_for_false_acks(&run(&[]));
    let j = json(&run(&["--allow-false-acks"]));
    assert!(j["packets"]["sent"].as_u64().unwrap() > 0, "{j}");
    refused_for_false_acks(&ackscope(&[&["compare", "--seconds", "1"], &zero[..]].concat()));
    let vary =
        ["sweep", "--seconds", "1", "--seeds", "1", "--strategies", "glenn", "--vary", "ack.ack_expiry_ms=0,100"];
    refused_for_false_acks(&ackscope(&vary));
    let peer = ["peer", "--bind", "127.0.0.1:0", "--connect", "127.0.0.1:9", "--seconds", "1"];
    refused_for_false_acks(&ackscope(&[&peer[..], &zero[..]].concat()));
    // Any other expiry needs no flag.
    json(&ackscope(&["run", "--seconds", "1", "--json", "--set", "ack.ack_expiry_ms=1"]));
}
