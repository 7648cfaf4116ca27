//! Dumps a slice of one layer's win/draw/loss (0 draw, 1 win, 2 loss, 3 no
//! position), a byte a slot, and its blocks, for codec experiments.
use dodgem::solver::{Dtz, Metric, Shape, read_manifest, read_old_values};
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = std::path::Path::new(&args[1]);
    let (a, b): (u32, u32) = (args[2].parse().unwrap(), args[3].parse().unwrap());
    let (start, len): (u64, u64) = (args[4].parse().unwrap(), args[5].parse().unwrap());
    let out = std::path::Path::new(&args[6]);
    let (kind, _) = read_manifest(dir).unwrap();
    let shape = Shape::new(kind.size, kind.max_cars).unwrap();
    let layer = shape.layer(a, b);
    let (values, _) = read_old_values(dir, kind, Metric::Dtz, &layer)
        .unwrap()
        .unwrap();
    let end = (start + len).min(layer.slots);
    let mut bytes = vec![3u8; (end - start) as usize];
    let mut rows = Vec::new();
    for block in &layer.blocks {
        rows.push(format!(
            "{} {} {}",
            block.offset, block.black_sets, block.white_sets
        ));
        for (r, &bs) in shape.black_sets(block).iter().enumerate() {
            let first = block.slot(r as u64, 0);
            if first + block.white_sets <= start || first >= end {
                continue;
            }
            for (c, &ws) in shape.white_sets(block).iter().enumerate() {
                let slot = first + c as u64;
                if slot < start || slot >= end || bs & ws != 0 {
                    continue;
                }
                bytes[(slot - start) as usize] = match values.get(slot) {
                    Dtz::Draw => 0,
                    Dtz::Win(_) => 1,
                    Dtz::Loss(_) => 2,
                };
            }
        }
    }
    std::fs::write(out.with_extension("wdl"), &bytes).unwrap();
    std::fs::write(out.with_extension("blocks"), rows.join("\n")).unwrap();
}
