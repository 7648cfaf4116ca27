//! Measures the size of table files by block size: the largest layers of
//! a directory of the old format (or of the current one) written again as
//! `.wdl` and `.dtz` files with blocks of each size asked for, in a
//! scratch directory, with bits a position and the time a probe takes.
//!
//! ```sh
//! cargo run --release --example tablecodec -- DIR LAYERS BLOCK_BITS...
//! cargo run --release --example tablecodec -- 6x6-textbook-old 8 12 14 16
//! ```

use std::path::Path;
use std::time::Instant;

use dodgem::solver::{self, Content, LayerFile, Metric, Shape, read_manifest, read_old_values};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 4 {
        eprintln!("usage: tablecodec DIR LAYERS BLOCK_BITS...");
        std::process::exit(2);
    }
    let dir = Path::new(&args[1]);
    let count: usize = args[2].parse().expect("LAYERS: a number");
    let bits: Vec<u32> = args[3..]
        .iter()
        .map(|b| b.parse().expect("BLOCK_BITS"))
        .collect();
    let (kind, version) = read_manifest(dir).expect("a table directory");
    let shape = Shape::new(kind.size, kind.max_cars).expect("a shape");
    let mut layers: Vec<_> = shape
        .layers()
        .into_iter()
        .filter(|l| Metric::Dtz.path(dir, l.black, l.white).is_file())
        .collect();
    layers.sort_by_key(|l| std::cmp::Reverse(l.slots));
    layers.truncate(count);
    let scratch = std::env::temp_dir().join(format!("dodgem-tablecodec-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    solver::prepare_dir(&scratch, kind).expect("a scratch directory");
    println!(
        "layer\tslots\tpositions\told_bytes\tblock_bits\twdl_bytes\twdl_bits_a_position\tdtz_bytes\tprobe_us"
    );
    for layer in &layers {
        let (values, tally) = if version == 1 {
            read_old_values(dir, kind, Metric::Dtz, layer)
                .unwrap()
                .unwrap()
        } else {
            solver::read_values(dir, kind, Metric::Dtz, layer).unwrap()
        };
        let old = std::fs::metadata(Metric::Dtz.path(dir, layer.black, layer.white))
            .unwrap()
            .len();
        let positions = solver::positions_of(&shape, layer);
        let count: u64 = positions.iter().map(|w| u64::from(w.count_ones())).sum();
        for &b in &bits {
            let mut sizes = Vec::new();
            for content in [Content::Wdl, Content::Distance(Metric::Dtz)] {
                sizes.push(
                    solver::write_file(
                        &scratch,
                        kind,
                        content,
                        layer,
                        &values,
                        &positions,
                        tally,
                        1 << b,
                        2,
                    )
                    .unwrap(),
                );
            }
            let file = LayerFile::open(&scratch, kind, Content::Wdl, layer)
                .unwrap()
                .unwrap();
            let probes = 2000u64;
            let started = Instant::now();
            let mut slot = 12345u64;
            for _ in 0..probes {
                slot = (slot
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407))
                    % layer.slots;
                file.value(slot).unwrap();
            }
            let micros = started.elapsed().as_secs_f64() * 1e6 / probes as f64;
            println!(
                "{}\t{}\t{count}\t{old}\t{b}\t{}\t{:.3}\t{}\t{micros:.1}",
                layer.name(),
                layer.slots,
                sizes[0],
                sizes[0] as f64 * 8.0 / count as f64,
                sizes[1],
            );
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
}
