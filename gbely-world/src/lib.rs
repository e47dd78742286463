//! # gbely-world
//!
//! Maps and replays: the seeded generator and the reference map `gbely`, the map file format,
//! a text rendering, and the replay format. No IO: files are read and written by the engine.
//!
//! ```
//! let map = gbely_world::reference_map();
//! assert_eq!((map.width(), map.height()), (60, 60));
//! assert_eq!(map.grid().id(map.seats()[0].base), "P57_02");
//! let text = gbely_world::write_map_file(&map);
//! assert_eq!(gbely_world::parse_map_file(&text).unwrap(), map);
//! ```

mod final_map;
mod generate;
mod map;
mod mapfile;
pub mod replay;
mod spec;

pub use final_map::{generate_final, FinalConfig, MIN_FINAL_SIZE};
pub use generate::{generate_duel, reference_map, GenError, GEN_VERSION, MAX_SIZE, MIN_DUEL_SIZE};
pub use map::{Map, Seat, SeatRole};
pub use mapfile::{parse_map_file, render_map, write_map_file, MapFileError, MAP_FORMAT_VERSION, MAX_GARRISON};
pub use replay::Replay;
pub use spec::{MapSpec, MapStats};
