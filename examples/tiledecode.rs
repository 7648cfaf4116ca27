//! Decoding speed of the win/draw/loss files of DIR written in tiles:
//! each layer of at least MIN_SLOTS slots read whole (`read_wdl`, what a
//! solve reads of the layers ahead) and BLOCKS random blocks decoded one
//! at a time (`decode_wdl`, what a probe's cache miss costs).
//!
//! ```sh
//! cargo run --release --example tiledecode -- DIR [MIN_SLOTS] [BLOCKS]
//! ```

use std::path::Path;
use std::time::Instant;

use dodgem::solver::{Content, Layer, LayerFile, Shape, read_manifest, read_wdl};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if !(2..=4).contains(&args.len()) {
        eprintln!("usage: tiledecode DIR [MIN_SLOTS] [BLOCKS]");
        std::process::exit(2);
    }
    let number = |i: usize, default: u64| args.get(i).map_or(default, |a| a.parse().unwrap());
    let (min_slots, blocks) = (number(2, 0), number(3, 200));
    let dir = Path::new(&args[1]);
    let (kind, _) = read_manifest(dir).expect("a table directory");
    let shape = Shape::new(kind.size, kind.max_cars).expect("a shape");
    let layers: Vec<Layer> = shape
        .layers()
        .into_iter()
        .filter(|l| l.slots >= min_slots)
        .collect();
    println!("layer\tslots\tcode\tread_ns_per_slot\tblock_us");
    let (mut slots, mut seconds) = (0u64, 0f64);
    for layer in &layers {
        let Ok(Some(file)) = LayerFile::open(dir, kind, Content::Wdl, layer) else {
            continue;
        };
        let code = format!("{:?}", file.header().code).replace(' ', "");
        let clock = Instant::now();
        read_wdl(dir, kind, layer).expect("a readable layer");
        let read = clock.elapsed().as_secs_f64();
        let count = file.header().blocks;
        let mut x = 0x9E37_79B9_7F4A_7C15u64 ^ layer.slots;
        let clock = Instant::now();
        for _ in 0..blocks {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            file.decode_wdl(x % count).expect("a readable block");
        }
        let block_us = clock.elapsed().as_secs_f64() * 1e6 / blocks.max(1) as f64;
        println!(
            "{:03}-{:03}\t{}\t{code}\t{:.2}\t{block_us:.1}",
            layer.black,
            layer.white,
            layer.slots,
            read * 1e9 / layer.slots as f64
        );
        slots += layer.slots;
        seconds += read;
    }
    println!("all\t{slots}\t\t{:.2}", seconds * 1e9 / slots.max(1) as f64);
}
