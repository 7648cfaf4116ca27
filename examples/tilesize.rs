//! Each layer's win/draw/loss file of DIR rewritten by the current writer
//! (tiles where they are smaller than runs) into a scratch directory: the
//! bytes before and after, bits a position, the code chosen, the time to
//! write it, and the time of random probes of the new file. Layers of
//! fewer than MIN_SLOTS slots are skipped, and files already in tiles are
//! counted as they are unless RECODE is 1; DIR may be a solve under way,
//! so the total is the size of its win/draw/loss files once recoded
//! (`solve --convert`). BLOCK_BITS sets the slots of a block or tile,
//! `2^BLOCK_BITS` (the writer's own size by default); LAYERS (a
//! comma-separated list such as `014-015,010-020`, in the environment)
//! keeps only the layers named.
//!
//! ```sh
//! cargo run --release --example tilesize -- DIR [MIN_SLOTS] [PROBES] [RECODE] [BLOCK_BITS]
//! ```

use std::path::Path;
use std::time::Instant;

use dodgem::solver::{
    BlockCode, Content, Layer, LayerFile, Shape, Values, is_set, positions_of, prepare_dir,
    read_manifest, read_wdl, wdl_value, write_file,
};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if !(2..=6).contains(&args.len()) {
        eprintln!("usage: tilesize DIR [MIN_SLOTS] [PROBES] [RECODE] [BLOCK_BITS]");
        std::process::exit(2);
    }
    let number = |i: usize, default: u64| args.get(i).map_or(default, |a| a.parse().unwrap());
    let (min_slots, probes, recode) = (number(2, 0), number(3, 1000), number(4, 0) == 1);
    let block_slots = 1 << number(5, u64::from(Content::Wdl.block_slots().trailing_zeros()));
    let named = std::env::var("LAYERS").ok();
    let dir = Path::new(&args[1]);
    let (kind, _) = read_manifest(dir).expect("a table directory");
    let shape = Shape::new(kind.size, kind.max_cars).expect("a shape");
    let layers: Vec<Layer> = shape
        .layers()
        .into_iter()
        .filter(|l| l.slots >= min_slots)
        .filter(|l| {
            named
                .as_ref()
                .is_none_or(|n| n.split(',').any(|x| x == l.name()))
        })
        .collect();
    let scratch = std::env::temp_dir().join(format!("dodgem-tilesize-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).unwrap();
    prepare_dir(&scratch, kind).unwrap();
    println!("layer\tpositions\tbefore\tafter\tbits_before\tbits_after\tcode\twrite_s\tprobe_us");
    let (mut positions_all, mut before_all, mut after_all) = (0u64, 0u64, 0u64);
    for layer in &layers {
        let Ok(Some(old)) = LayerFile::open(dir, kind, Content::Wdl, layer) else {
            continue;
        };
        let before = std::fs::metadata(old.path()).unwrap().len();
        if matches!(old.header().code, BlockCode::Tiles { .. }) && !recode {
            let code = format!("{:?}", old.header().code).replace(' ', "");
            let count = old.header().tally.positions();
            let bits = before as f64 * 8.0 / count.max(1) as f64;
            println!(
                "{}\t{count}\t{before}\t{before}\t{bits:.3}\t{bits:.3}\t{code}\t\t",
                layer.name()
            );
            positions_all += count;
            before_all += before;
            after_all += before;
            continue;
        }
        let wdl = read_wdl(dir, kind, layer).expect("a readable layer");
        let codes: Vec<u8> = (0..layer.slots)
            .map(|slot| wdl_value(wdl.get(slot)) as u8)
            .collect();
        let positions = positions_of(&shape, layer);
        let count: u64 = positions.iter().map(|w| u64::from(w.count_ones())).sum();
        let clock = Instant::now();
        let after = write_file(
            &scratch,
            kind,
            Content::Wdl,
            layer,
            &Values::Narrow(codes),
            &positions,
            old.header().tally,
            block_slots,
            1,
        )
        .unwrap();
        let write_s = clock.elapsed().as_secs_f64();
        let new = LayerFile::open(&scratch, kind, Content::Wdl, layer)
            .unwrap()
            .unwrap();
        // Random positions probed one at a time, each checked.
        let mut state = 0x2545_F491_4F6C_DD1Du64 ^ layer.slots;
        let mut probed = 0u64;
        let clock = Instant::now();
        while probed < probes && count > 0 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let slot = state % layer.slots;
            if !is_set(&positions, slot) {
                continue;
            }
            assert_eq!(
                new.value(slot).unwrap(),
                wdl_value(wdl.get(slot)),
                "slot {slot}"
            );
            probed += 1;
        }
        let probe_us = clock.elapsed().as_secs_f64() * 1e6 / probed.max(1) as f64;
        let code = format!("{:?}", new.header().code);
        let bits = |bytes: u64| bytes as f64 * 8.0 / count.max(1) as f64;
        println!(
            "{}\t{count}\t{before}\t{after}\t{:.3}\t{:.3}\t{}\t{write_s:.2}\t{probe_us:.1}",
            layer.name(),
            bits(before),
            bits(after),
            code.replace(' ', "")
        );
        positions_all += count;
        before_all += before;
        after_all += after;
        std::fs::remove_file(Content::Wdl.path(&scratch, layer.black, layer.white)).unwrap();
    }
    let bits = |bytes: u64| bytes as f64 * 8.0 / positions_all.max(1) as f64;
    println!(
        "all\t{positions_all}\t{before_all}\t{after_all}\t{:.3}\t{:.3}",
        bits(before_all),
        bits(after_all)
    );
    let _ = std::fs::remove_dir_all(&scratch);
}
