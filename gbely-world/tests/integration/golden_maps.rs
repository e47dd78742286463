//! The generator's contract with the past (seed 004): the same seed and GEN_VERSION give the same
//! map forever. A failure here means the generator changed: if that was deliberate, bump
//! `GEN_VERSION` and rewrite these fingerprints; if not, it is a bug.

use gbely_world::{generate_duel, generate_final, reference_map, FinalConfig, GEN_VERSION};

#[test]
fn generator_version_is_pinned_with_the_fingerprints() {
    assert_eq!(GEN_VERSION, 1, "bumped the version? rewrite the fingerprints below too");
}

#[test]
fn reference_map_fingerprint() {
    assert_eq!(reference_map().fingerprint(), "a9e663a44f29f31a");
}

#[test]
fn seeded_map_fingerprints_of_several_sizes() {
    for (seed, w, h, fp) in [
        ("alpha", 40, 40, "d2b8a8a4341a8ccc"),
        ("beta", 60, 60, "f8b7448aeec16c0c"),
        ("gamma", 90, 90, "9797f4f192ba185c"),
        ("delta", 24, 36, "cfccc78aadaffe80"),
        ("epsilon", 120, 80, "394ae070ef1a16d6"),
    ] {
        assert_eq!(generate_duel(seed, w, h).unwrap().fingerprint(), fp, "seed:{seed} {w}×{h}");
    }
}

#[test]
fn the_reference_map_is_the_seed_gbely_at_60() {
    let seeded = generate_duel("gbely", 60, 60).unwrap();
    assert_eq!(seeded.fingerprint(), reference_map().fingerprint());
    assert_eq!(reference_map().name(), "gbely");
}

#[test]
fn final_map_fingerprints() {
    for (seed, size, fp) in [
        ("test-final", 90, "90c4d9b10908209f"),
        ("gbely-final", 90, "89ffc43eae2adb77"),
        ("small", 40, "e3e8f4df3ec8a330"),
    ] {
        assert_eq!(generate_final(seed, FinalConfig::for_size(size)).unwrap().fingerprint(), fp, "final:{seed} {size}");
    }
}

/// The same contract over many small maps (and a few with tributaries), folded into one fingerprint: rare branches of the
/// generator (a river walk near an edge, a hill count landing exactly on its target, a fourth ring
/// of extra bases) change some of these maps even when they leave the five above alone.
#[test]
fn sweep_of_many_maps_fingerprint() {
    let mut all = String::new();
    for i in 0..48u32 {
        let (w, h) = (12 + i % 7 * 3, 12 + i % 5 * 3);
        all += &generate_duel(&format!("sweep-{i}"), w, h).unwrap().fingerprint();
    }
    // With tributaries: one from w + h = 100, two from 200.
    for (i, (w, h)) in [(50, 50), (61, 47), (45, 73), (80, 81), (101, 99), (130, 75)].into_iter().enumerate() {
        all += &generate_duel(&format!("sweep-tributary-{i}"), w, h).unwrap().fingerprint();
    }
    for i in 0..24u32 {
        let size = 30 + i % 6 * 3;
        let council_radius = if i % 2 == 0 { size / 10 } else { size / 2 - 5 };
        let cfg = FinalConfig { size, council_radius, council_garrison: 8, extra_bases: i % 4 * 4 };
        all += &generate_final(&format!("sweep-{i}"), cfg).unwrap().fingerprint();
    }
    // FNV-1a of the concatenated fingerprints.
    let folded = all.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3));
    assert_eq!(format!("{folded:016x}"), "e27db7254553641f");
}
