//! How much smaller the win/draw/loss files would be if a position whose
//! value its forward moves already give were stored as "don't care", as
//! Syzygy stores positions a capture resolves, with a probe that reads
//! the position and its forward moves' stored values and takes the best:
//! `value(P) = max(stored(P), max over forward moves c of -stored(c))`.
//!
//! Only one level is read: a forward move's stored value is taken as it
//! is, never probed further (a recursive probe of the free values, the
//! other way to make this exact, reads too much: measured on 5 x 5, a
//! median of 120 values a probe and over 100,000 for one in a hundred).
//! So a stored value may be lower than the truth only where no position
//! behind it takes its forward move for more than it is worth: each
//! position may store any value from the best of `-truth(P)` over the
//! positions P whose forward move reaches it, up to its own value, and
//! only a position whose forward moves already give its value (a win
//! through a move into a loss or Black's last exit, a draw through a
//! move into a draw) may store less than its value. Within that range
//! each position stores the value of the run it is in where it can (the
//! cheapest for the run code), and slots that are no position are free.
//!
//! Every layer of DIR is written both ways in a scratch directory with
//! the current code; then every position is probed that way from the
//! written files and checked against DIR.
//!
//! With `K`, a third way too: a fourth symbol, "forward", that a free
//! position may store instead of its value, meaning "the best of my
//! forward moves" (each probed the same way); a stored win, draw or loss
//! is exact. A position stores "forward" only where a probe through it
//! reads at most `K` levels, so a probe is bounded by the writer. Both
//! this and the plain values are written as distance files (one code, no
//! contexts, so the two are compared alike), and every position probed.
//!
//! ```sh
//! cargo run --release --example dontcare -- DIR [K]
//! ```

use std::collections::HashMap;
use std::path::Path;

use dodgem::solver::{
    self, BLOCK_SLOTS, Content, Dtz, Layer, LayerFile, Metric, Shape, Values, Wdl, encode,
    read_manifest,
};

/// Win/draw/loss ranked for the side to move: loss 0, draw 1, win 2.
type Rank = u8;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if !(2..=3).contains(&args.len()) {
        eprintln!("usage: dontcare DIR [K]");
        std::process::exit(2);
    }
    let levels: Option<u8> = args
        .get(2)
        .map(|k| k.parse().expect("K: a number of levels"));
    let dir = Path::new(&args[1]);
    let (kind, _) = read_manifest(dir).expect("a table directory");
    let shape = Shape::new(kind.size, kind.max_cars).expect("a shape");
    let layers = shape.layers();
    let key = |l: &Layer| (l.black, l.white);
    // Every layer's true values, and the lowest value each position may
    // store (what its positions behind allow).
    let mut truth: HashMap<(u32, u32), (Values, solver::Tally)> = HashMap::new();
    let mut lowest: HashMap<(u32, u32), Vec<Rank>> = HashMap::new();
    for layer in &layers {
        truth.insert(
            key(layer),
            solver::read_values(dir, kind, Metric::Dtz, layer).unwrap(),
        );
        lowest.insert(key(layer), vec![0; layer.slots as usize]);
    }
    let rank_of = |layer: &Layer, slot: u64| rank(truth[&key(layer)].0.get(slot).wdl());
    // Which positions may store less than their value, and the lowest
    // value of each position's forward moves.
    let mut free: HashMap<(u32, u32), Vec<bool>> = HashMap::new();
    for layer in &layers {
        let ahead = ahead_of(&shape, layer);
        let mut frees = vec![false; layer.slots as usize];
        let mut floors = Vec::new();
        each_position(&shape, layer, |slot, forward| {
            let value = rank_of(layer, slot);
            let mut best = None::<Rank>;
            let finishes = forward(&mut |child| {
                let mine = 2 - rank_of(ahead.as_ref().unwrap(), child);
                best = Some(best.map_or(mine, |b| b.max(mine)));
                floors.push((child, 2 - value));
            });
            if finishes {
                best = Some(2);
            }
            frees[slot as usize] = value > 0 && best == Some(value);
        });
        if let Some(ahead) = &ahead {
            let bounds = lowest.get_mut(&key(ahead)).unwrap();
            for (child, floor) in floors {
                bounds[child as usize] = bounds[child as usize].max(floor);
            }
        }
        free.insert(key(layer), frees);
    }
    // Write each layer plainly and with its free values chosen.
    let scratch = std::env::temp_dir().join(format!("dodgem-dontcare-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    let (plain_dir, free_dir) = (scratch.join("plain"), scratch.join("free"));
    for sub in [&plain_dir, &free_dir] {
        std::fs::create_dir_all(sub).unwrap();
        solver::prepare_dir(sub, kind).unwrap();
    }
    let (mut positions_all, mut free_all, mut lowered_all) = (0u64, 0u64, 0u64);
    let (mut plain_bytes, mut free_bytes) = (0u64, 0u64);
    for layer in &layers {
        let (values, tally) = &truth[&key(layer)];
        let positions = solver::positions_of(&shape, layer);
        let (frees, bounds) = (&free[&key(layer)], &lowest[&key(layer)]);
        let mut codes: Vec<u16> = (0..values.len() as u64).map(|s| values.code(s)).collect();
        let mut run: Option<Rank> = None;
        for slot in 0..layer.slots {
            if positions[(slot / 64) as usize] >> (slot % 64) & 1 == 0 {
                continue;
            }
            let value = rank_of(layer, slot);
            let low = if frees[slot as usize] {
                bounds[slot as usize]
            } else {
                value
            };
            let chosen = run.map_or(value, |r| r.clamp(low, value));
            positions_all += 1;
            free_all += u64::from(low < value);
            if chosen != value {
                lowered_all += 1;
                codes[slot as usize] = encode(match chosen {
                    0 => Dtz::Loss(1),
                    _ => Dtz::Draw,
                });
            }
            run = Some(chosen);
        }
        let write = |sub: &Path, values: &Values| {
            solver::write_file(
                sub,
                kind,
                Content::Wdl,
                layer,
                values,
                &positions,
                *tally,
                BLOCK_SLOTS,
                2,
            )
            .unwrap()
        };
        plain_bytes += write(&plain_dir, values);
        free_bytes += write(&free_dir, &Values::from_codes(codes, tally.longest));
    }
    let bits = |bytes: u64| bytes as f64 * 8.0 / positions_all.max(1) as f64;
    println!(
        "{} positions: {} may store less than their value, {} do; .wdl files {} bytes ({:.3} bits a position) against {} ({:.3})",
        positions_all,
        free_all,
        lowered_all,
        free_bytes,
        bits(free_bytes),
        plain_bytes,
        bits(plain_bytes),
    );
    // Probe every position from the written files.
    let mut stored: HashMap<(u32, u32), Vec<Rank>> = HashMap::new();
    for layer in &layers {
        let file = LayerFile::open(&free_dir, kind, Content::Wdl, layer)
            .unwrap()
            .expect("written above");
        let mut values = vec![0; layer.slots as usize];
        file.each_run(|first, value, length| {
            // The file's 0 draw, 1 win, 2 loss, as ranks.
            let r = [1, 2, 0][usize::from(value)];
            values[first as usize..(first + length) as usize].fill(r);
        })
        .unwrap();
        stored.insert(key(layer), values);
    }
    let (mut wrong, mut reads_all) = (0u64, 0u64);
    let mut reads_hist = [0u64; 8];
    for layer in &layers {
        let ahead = ahead_of(&shape, layer);
        let own = &stored[&key(layer)];
        each_position(&shape, layer, |slot, forward| {
            let mut best = own[slot as usize];
            let mut reads = 1u64;
            if best < 2 {
                let ahead_stored = ahead.as_ref().map(|a| &stored[&key(a)]);
                let finishes = forward(&mut |child| {
                    if best < 2 {
                        reads += 1;
                        best = best.max(2 - ahead_stored.unwrap()[child as usize]);
                    }
                });
                if finishes {
                    best = 2;
                }
            }
            wrong += u64::from(best != rank_of(layer, slot));
            reads_all += reads;
            reads_hist[(reads as usize).min(7)] += 1;
        });
    }
    println!(
        "probed every position: {wrong} wrong; stored values read a probe: mean {:.2}; 1: {:.1}%, 2: {:.1}%, 3: {:.1}%, 4: {:.1}%, 5 or more: {:.1}%",
        reads_all as f64 / positions_all.max(1) as f64,
        percent(reads_hist[1], positions_all),
        percent(reads_hist[2], positions_all),
        percent(reads_hist[3], positions_all),
        percent(reads_hist[4], positions_all),
        percent(reads_hist[5..].iter().sum(), positions_all),
    );
    if let Some(k) = levels {
        forward_symbol(&shape, kind, &scratch, &truth, &free, k);
    }
    let _ = std::fs::remove_dir_all(&scratch);
}

/// The symbol a position stores for "the best of my forward moves".
const FORWARD: u8 = 3;

/// The third way (see the module docs): writes every layer with the
/// "forward" symbol where a probe stays within `k` levels, and probes
/// every position.
fn forward_symbol(
    shape: &Shape,
    kind: solver::Kind,
    scratch: &Path,
    truth: &HashMap<(u32, u32), (Values, solver::Tally)>,
    free: &HashMap<(u32, u32), Vec<bool>>,
    k: u8,
) {
    let key = |l: &Layer| (l.black, l.white);
    let rank_of = |layer: &Layer, slot: u64| rank(truth[&key(layer)].0.get(slot).wdl());
    let (plain_dir, forward_dir) = (scratch.join("plain4"), scratch.join("forward"));
    for sub in [&plain_dir, &forward_dir] {
        std::fs::create_dir_all(sub).unwrap();
        solver::prepare_dir(sub, kind).unwrap();
    }
    // Levels a probe of each position reads below it (0: exact), and
    // each position's symbol; layers in the solver's order, so that the
    // layers ahead come first.
    let mut depth: HashMap<(u32, u32), Vec<u8>> = HashMap::new();
    let mut symbols: HashMap<(u32, u32), Vec<u8>> = HashMap::new();
    let (mut positions_all, mut forward_all) = (0u64, 0u64);
    let (mut plain_bytes, mut forward_bytes) = (0u64, 0u64);
    let content = Content::Distance(Metric::Dte);
    let ordered = shape.layers();
    {
        for layer in ordered.iter().cloned() {
            let ahead = ahead_of(shape, &layer);
            let frees = &free[&key(&layer)];
            let mut levels = vec![0u8; layer.slots as usize];
            let mut chosen = vec![0u8; layer.slots as usize];
            let mut run: Option<u8> = None;
            each_position(shape, &layer, |slot, forward| {
                let value = rank_of(&layer, slot);
                let mut below = 0;
                let finishes = forward(&mut |child| {
                    let d = depth[&key(ahead.as_ref().unwrap())][child as usize];
                    below = below.max(d);
                });
                if finishes {
                    below = 0;
                }
                let allowed = frees[slot as usize] && below < k;
                let symbol = match run {
                    Some(FORWARD) if allowed => FORWARD,
                    Some(r) if r == value => value,
                    _ if allowed => FORWARD,
                    _ => value,
                };
                if symbol == FORWARD {
                    levels[slot as usize] = below + 1;
                    forward_all += 1;
                }
                chosen[slot as usize] = symbol;
                positions_all += 1;
                run = Some(symbol);
            });
            let positions = solver::positions_of(shape, &layer);
            let (_, tally) = &truth[&key(&layer)];
            let write = |sub: &Path, symbol_of: &dyn Fn(u64) -> u8| {
                let codes = (0..layer.slots)
                    .map(|slot| encode(Dtz::Win(u32::from(symbol_of(slot)))))
                    .collect();
                let values = Values::from_codes(codes, 3);
                let tally = solver::Tally {
                    wins: tally.positions(),
                    draws: 0,
                    losses: 0,
                    longest: 3,
                };
                solver::write_file(
                    sub,
                    kind,
                    content,
                    &layer,
                    &values,
                    &positions,
                    tally,
                    BLOCK_SLOTS,
                    2,
                )
                .unwrap()
            };
            plain_bytes += write(&plain_dir, &|slot| rank_of(&layer, slot));
            forward_bytes += write(&forward_dir, &|slot| chosen[slot as usize]);
            depth.insert(key(&layer), levels);
            symbols.insert(key(&layer), chosen);
        }
    }
    let bits = |bytes: u64| bytes as f64 * 8.0 / positions_all.max(1) as f64;
    println!(
        "forward symbol, at most {k} levels: {forward_all} of {positions_all} positions store it; files {forward_bytes} bytes ({:.3} bits a position) against {plain_bytes} ({:.3}) for the plain values coded alike",
        bits(forward_bytes),
        bits(plain_bytes),
    );
    // Probe every position from the written files.
    let mut stored: HashMap<(u32, u32), Vec<u8>> = HashMap::new();
    {
        for layer in &ordered {
            let file = LayerFile::open(&forward_dir, kind, content, layer)
                .unwrap()
                .expect("written above");
            let mut values = vec![0; layer.slots as usize];
            file.each_run(|first, value, length| {
                values[first as usize..(first + length) as usize].fill(value as u8);
            })
            .unwrap();
            stored.insert(key(layer), values);
        }
    }
    let (mut wrong, mut reads_all, mut most) = (0u64, 0u64, 0u64);
    {
        for layer in &ordered {
            each_position(shape, layer, |slot, _| {
                let mut reads = 0;
                let value = probe_forward(shape, &stored, layer, slot, &mut reads);
                wrong += u64::from(value != rank_of(layer, slot));
                reads_all += reads;
                most = most.max(reads);
            });
        }
    }
    println!(
        "probed every position: {wrong} wrong; stored values read a probe: mean {:.2}, most {most}",
        reads_all as f64 / positions_all.max(1) as f64,
    );
}

/// The value of `slot` of `layer` from the forward-symbol files.
fn probe_forward(
    shape: &Shape,
    stored: &HashMap<(u32, u32), Vec<u8>>,
    layer: &Layer,
    slot: u64,
    reads: &mut u64,
) -> Rank {
    *reads += 1;
    let symbol = stored[&(layer.black, layer.white)][slot as usize];
    if symbol != FORWARD {
        return symbol;
    }
    let b = layer.blocks.partition_point(|block| block.offset <= slot) - 1;
    let block = &layer.blocks[b];
    let within = slot - block.offset;
    let (bi, wi) = (within / block.white_sets, within % block.white_sets);
    let (black, white) = (shape.black_set(block, bi), shape.white_set(block, wi));
    let ahead = ahead_of(shape, layer);
    let mut children = Vec::new();
    let (_, finishes) = shape
        .mover(block, ahead.as_ref())
        .forward(bi, black, white, wi, |c| children.push(c));
    if finishes {
        return 2;
    }
    let mut best = 0;
    for child in children {
        best = best.max(2 - probe_forward(shape, stored, ahead.as_ref().unwrap(), child, reads));
        if best == 2 {
            break;
        }
    }
    best
}

fn percent(n: u64, of: u64) -> f64 {
    100.0 * n as f64 / of.max(1) as f64
}

fn rank(value: Wdl) -> Rank {
    match value {
        Wdl::Loss => 0,
        Wdl::Draw => 1,
        Wdl::Win => 2,
    }
}

/// The layer Black's forward moves from `layer` reach.
fn ahead_of(shape: &Shape, layer: &Layer) -> Option<Layer> {
    (layer.black < shape.max_progress()).then(|| shape.layer(layer.white, layer.black + 1))
}

/// Calls `visit(slot, forward)` for every position of `layer` in slot
/// order; `forward(f)` calls `f` with the slot in the layer ahead of each
/// forward move and says whether a move takes Black's last car off.
fn each_position(
    shape: &Shape,
    layer: &Layer,
    mut visit: impl FnMut(u64, &mut dyn FnMut(&mut dyn FnMut(u64)) -> bool),
) {
    let ahead = ahead_of(shape, layer);
    for block in &layer.blocks {
        let mover = shape.mover(block, ahead.as_ref());
        for (bi, &black) in shape.black_sets(block).iter().enumerate() {
            for (wi, &white) in shape.white_sets(block).iter().enumerate() {
                if black & white != 0 {
                    continue;
                }
                let slot = block.slot(bi as u64, wi as u64);
                visit(slot, &mut |f| {
                    mover.forward(bi as u64, black, white, wi as u64, &mut *f).1
                });
            }
        }
    }
}
