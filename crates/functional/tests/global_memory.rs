//! Global memory writes of a shard's coalesced store runs (`exec/shard.rs`): a run of
//! consecutive lanes' stores may cross from one allocation into the next one, mapped right
//! after it (microbenchmarks map regions at given addresses).

use sassim_functional::GlobalMemory;

#[test]
fn a_store_run_crosses_into_the_next_allocation() {
    let mut g = GlobalMemory::new();
    assert!(g.map_at(0x1000, 64));
    assert!(g.map_at(0x1040, 64));
    let data: Vec<u8> = (1..=32).collect();
    // Bytes 0x1030..0x1050: the last 16 of the first region, the first 16 of the second.
    assert!(!g.is_mapped(0x1030, 32), "one allocation does not hold the run");
    assert!(g.write_run(0x1030, &data));
    assert_eq!(g.read(0x1030, 16).unwrap(), data[..16].to_vec());
    assert_eq!(g.read(0x1040, 16).unwrap(), data[16..].to_vec());
    assert_eq!(g.read(0x1020, 16).unwrap(), vec![0; 16], "bytes before the run");
}

#[test]
fn a_store_run_over_a_hole_stops_at_the_hole() {
    let mut g = GlobalMemory::new();
    assert!(g.map_at(0x1000, 64));
    assert!(g.map_at(0x1080, 64));
    let data = [7u8; 32];
    assert!(!g.write_run(0x1030, &data), "bytes 0x1040.. are not mapped");
    assert_eq!(
        g.read(0x1030, 16).unwrap(),
        vec![7; 16],
        "the mapped bytes before it"
    );
    assert_eq!(g.read(0x1080, 16).unwrap(), vec![0; 16]);
    assert!(!g.write_run(0x0ff0, &data), "nothing mapped at the start");
}
