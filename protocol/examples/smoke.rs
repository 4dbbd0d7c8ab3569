use ackscope_protocol::*;
fn main() {
    let mut sim = Simulation::new(Scenario::default());
    sim.set_keep_events(false);
    let t = std::time::Instant::now();
    sim.run_for_secs(60.0);
    println!("{:?}\n{:?}\n{:?}", sim.totals(), sim.estimates(), t.elapsed());
}
