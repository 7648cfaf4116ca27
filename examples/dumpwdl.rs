//! Dumps the win/draw/loss (0 draw, 1 win, 2 loss, 3 no position) of the largest layers of a table directory, a byte a slot, for codec experiments.
use dodgem::solver::{Dtz, Shape, read_kind, read_layer};
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = std::path::Path::new(&args[1]);
    let out = std::path::Path::new(&args[2]);
    let count: usize = args[3].parse().unwrap();
    let kind = read_kind(dir).unwrap();
    let shape = Shape::new(kind.size, kind.max_cars).unwrap();
    let mut layers: Vec<_> = shape
        .pairs()
        .into_iter()
        .flat_map(|(a, b)| [(a, b), (b, a)])
        .map(|(a, b)| shape.layer(a, b))
        .collect();
    layers.sort_by_key(|l| std::cmp::Reverse(l.slots));
    layers.dedup();
    for layer in layers.iter().take(count) {
        let (values, _) = read_layer(dir, kind, layer).unwrap();
        let mut bytes = vec![3u8; layer.slots as usize];
        let mut rows = Vec::new();
        for block in &layer.blocks {
            rows.push(format!(
                "{} {} {}",
                block.offset, block.black_sets, block.white_sets
            ));
            for (r, &b) in shape.black_sets(block).iter().enumerate() {
                for (c, &w) in shape.white_sets(block).iter().enumerate() {
                    if b & w == 0 {
                        let slot = block.slot(r as u64, c as u64);
                        bytes[slot as usize] = match values.get(slot) {
                            Dtz::Draw => 0,
                            Dtz::Win(_) => 1,
                            Dtz::Loss(_) => 2,
                        };
                    }
                }
            }
        }
        std::fs::write(out.join(format!("{}.wdl", layer.name())), &bytes).unwrap();
        std::fs::write(
            out.join(format!("{}.blocks", layer.name())),
            rows.join("\n"),
        )
        .unwrap();
    }
}
