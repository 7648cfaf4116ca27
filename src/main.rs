fn main() {
    for size in 3..=8 {
        let start = dodgem::Position::start(size);
        let v: Vec<u64> = (1..=8).map(|d| dodgem::perft::perft(&start, d)).collect();
        println!("{size}: {v:?}");
    }
    let t = std::time::Instant::now();
    let n = dodgem::perft::perft(&dodgem::Position::start(5), 8);
    println!("5x5 d8 {n} {:?} {:.1} Mnps", t.elapsed(), n as f64 / t.elapsed().as_secs_f64() / 1e6);
}
