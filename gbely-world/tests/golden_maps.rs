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
