//! The files a user names (agents, maps, replays): regular files only, and read within a bound.
//!
//! A named pipe, a device or a socket is refused before it is opened: opening a pipe blocks until
//! someone writes to it, and `/dev/zero` (or a symlink to it named `agent.py`) never ends. Both
//! would hang gbely on a file it was handed, so every reader of a user's file opens it here.

use std::io::Read;
use std::path::Path;

/// What a path that is not a regular file is (`a named pipe`), or `None` for a regular file.
/// Symlinks are followed: a link to `/dev/zero` is a device.
pub fn special_kind(meta: &std::fs::Metadata) -> Option<&'static str> {
    let t = meta.file_type();
    if t.is_file() {
        return None;
    }
    if t.is_dir() {
        return Some("a folder");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return Some("a named pipe");
        }
        if t.is_char_device() || t.is_block_device() {
            return Some("a device");
        }
        if t.is_socket() {
            return Some("a socket");
        }
    }
    Some("not a regular file")
}

/// Refuses a path that is not a regular file (after following symlinks), without opening it.
pub fn check_regular(path: &Path) -> std::io::Result<()> {
    let meta = std::fs::metadata(path)?;
    match special_kind(&meta) {
        None => Ok(()),
        Some(kind) => Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("it is {kind}, not a regular file (gbely reads only regular files)"),
        )),
    }
}

/// Opens a regular file for reading; anything else is refused before it is opened
/// ([`check_regular`]).
pub fn open_regular(path: &Path) -> std::io::Result<std::fs::File> {
    check_regular(path)?;
    std::fs::File::open(path)
}

/// A regular file's bytes, at most `max` of them: a longer file is refused (not read past `max`),
/// even one that grows while it is read.
pub fn read_bounded(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    let file = open_regular(path)?;
    let mut out = Vec::new();
    file.take(max + 1).read_to_end(&mut out)?;
    if out.len() as u64 > max {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("it is larger than {max} bytes, more than gbely reads of such a file"),
        ));
    }
    Ok(out)
}

/// [`read_bounded`] as UTF-8 text.
pub fn read_text_bounded(path: &Path, max: u64) -> std::io::Result<String> {
    String::from_utf8(read_bounded(path, max)?)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, format!("not UTF-8 text: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regular_files_pass_and_devices_and_folders_are_refused_unopened() {
        let dir = std::env::temp_dir().join(format!("gbely-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("a.txt");
        std::fs::write(&f, "hello").unwrap();
        assert_eq!(read_bounded(&f, 5).unwrap(), b"hello");
        assert!(read_bounded(&f, 4).unwrap_err().to_string().contains("larger than 4 bytes"));
        assert!(check_regular(&dir).unwrap_err().to_string().contains("a folder"));
        #[cfg(unix)]
        {
            let e = read_bounded(Path::new("/dev/zero"), 1 << 20).unwrap_err().to_string();
            assert!(e.contains("it is a device, not a regular file"), "{e}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
