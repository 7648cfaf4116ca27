//! Files the command-line tools read and write where the user points them
//! (results, records, openings, details). Whatever stands at such a path
//! (a FIFO, a device, a directory, a file of gigabytes) gets an error that
//! names it, never a hang or an unbounded read.
//!
//! Every open is non-blocking and the kind of file is checked on the open
//! handle, so a FIFO put in place between a check and the open cannot
//! block either.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use crate::protocol::escape;

/// A path as it may be echoed: control characters escaped.
pub(crate) fn shown(path: &Path) -> String {
    escape(&path.display().to_string())
}

/// Reads the regular file at `path` as text, refusing anything else (a
/// FIFO, a device, a directory) and any file longer than `limit` bytes.
///
/// # Errors
/// A message naming the file: missing, not a regular file, too long,
/// unreadable or not UTF-8.
pub(crate) fn read_text(path: &Path, limit: u64) -> Result<String, String> {
    let file = open_regular(path).map_err(|error| match error.kind() {
        io::ErrorKind::InvalidInput => format!("{} is not a regular file", shown(path)),
        _ => format!("cannot read {}: {error}", shown(path)),
    })?;
    let meta = file
        .metadata()
        .map_err(|error| format!("cannot read {}: {error}", shown(path)))?;
    if meta.len() > limit {
        return Err(format!(
            "{} is too long ({} bytes, at most {limit} expected)",
            shown(path),
            meta.len()
        ));
    }
    let mut bytes = Vec::new();
    // The file may grow after the check: read one byte past the limit.
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|error| format!("cannot read {}: {error}", shown(path)))?;
    if bytes.len() as u64 > limit {
        return Err(format!(
            "{} is too long (more than {limit} bytes)",
            shown(path)
        ));
    }
    String::from_utf8(bytes).map_err(|_| format!("{} is not UTF-8 text", shown(path)))
}

/// Opens the regular file at `path` for reading: the open does not block
/// (a FIFO without a writer), and anything but a regular file is refused
/// on the open handle with an error of kind
/// [`io::ErrorKind::InvalidInput`].
///
/// # Errors
/// The open's error, or that one.
pub(crate) fn open_regular(path: &Path) -> io::Result<File> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    Ok(file)
}

/// Opens `path` for writing, created if missing and emptied if `truncate`;
/// only a regular file or a character device (`/dev/null`) is accepted.
fn open_for_writing(path: &Path, truncate: bool) -> Result<File, String> {
    let refuse = || format!("cannot write {}: it is not a regular file", shown(path));
    let acceptable = |meta: &std::fs::Metadata| {
        use std::os::unix::fs::FileTypeExt;
        meta.is_file() || meta.file_type().is_char_device()
    };
    // Checked before the open too: opening a FIFO without a reader fails
    // with a less helpful message.
    if std::fs::metadata(path).is_ok_and(|meta| !acceptable(&meta)) {
        return Err(refuse());
    }
    let file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(truncate)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|error| format!("cannot write {}: {error}", shown(path)))?;
    match file.metadata() {
        Ok(meta) if acceptable(&meta) => Ok(file),
        Ok(_) => Err(refuse()),
        Err(error) => Err(format!("cannot write {}: {error}", shown(path))),
    }
}

/// Creates (or empties) the output file at `path`.
///
/// # Errors
/// A message naming the file, as for [`check_writable`].
pub(crate) fn create(path: &Path) -> Result<File, String> {
    open_for_writing(path, true)
}

/// Opens the output file at `path` to write after its first `keep`
/// bytes, dropping the rest (created if missing): for a run that goes on
/// where an earlier one stopped.
///
/// # Errors
/// A message naming the file, as for [`check_writable`].
pub(crate) fn append(path: &Path, keep: u64) -> Result<File, String> {
    use std::io::{Seek, SeekFrom};
    let mut file = open_for_writing(path, false)?;
    file.set_len(keep)
        .and_then(|()| file.seek(SeekFrom::End(0)))
        .map_err(|error| format!("cannot write {}: {error}", shown(path)))?;
    Ok(file)
}

/// Writes `text` to the output file at `path` (created, or replaced).
///
/// # Errors
/// A message naming the file, as for [`check_writable`], or the error of
/// the write.
pub(crate) fn write(path: &Path, text: &str) -> Result<(), String> {
    create(path)?
        .write_all(text.as_bytes())
        .map_err(|error| format!("cannot write {}: {error}", shown(path)))
}

/// Checks, before long work whose result goes there, that `path` can be
/// written, without changing it: an existing file is opened for writing
/// (and left as it is), a missing one is created and removed again.
///
/// # Errors
/// A message naming the file: its directory is missing or not writable,
/// or something other than a regular file or a character device stands
/// there.
pub(crate) fn check_writable(path: &Path) -> Result<(), String> {
    let existed = std::fs::symlink_metadata(path).is_ok();
    open_for_writing(path, false)?;
    if !existed {
        let _ = std::fs::remove_file(path);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("dodgem-files-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn reading_refuses_devices_directories_and_long_files() {
        let dir = scratch("read");
        let file = dir.join("a.json");
        std::fs::write(&file, "12345").unwrap();
        assert_eq!(read_text(&file, 5).unwrap(), "12345");
        assert!(read_text(&file, 4).unwrap_err().contains("too long"));
        let zero = dir.join("zero");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        let error = read_text(&zero, 1 << 20).unwrap_err();
        assert!(error.contains("zero is not a regular file"), "{error}");
        assert!(
            read_text(&dir, 100)
                .unwrap_err()
                .contains("not a regular file")
        );
        let fifo = dir.join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.unwrap().success());
        let error = read_text(&fifo, 100).unwrap_err();
        assert!(error.contains("fifo is not a regular file"), "{error}");
        let error = check_writable(&fifo).unwrap_err();
        assert!(error.contains("fifo: it is not a regular file"), "{error}");
        let missing = read_text(&dir.join("missing"), 100).unwrap_err();
        assert!(missing.starts_with("cannot read"), "{missing}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn checking_for_writing_changes_nothing() {
        let dir = scratch("write");
        let kept = dir.join("kept.txt");
        std::fs::write(&kept, "earlier").unwrap();
        check_writable(&kept).unwrap();
        assert_eq!(std::fs::read_to_string(&kept).unwrap(), "earlier");
        let new = dir.join("new.txt");
        check_writable(&new).unwrap();
        assert!(!new.exists(), "the check leaves no file behind");
        check_writable(Path::new("/dev/null")).unwrap();
        let error = check_writable(&dir.join("no/such/dir.txt")).unwrap_err();
        assert!(error.contains("no/such/dir.txt"), "{error}");
        let error = check_writable(&dir).unwrap_err();
        assert!(error.contains("not a regular file"), "{error}");
        write(&new, "text").unwrap();
        assert_eq!(std::fs::read_to_string(&new).unwrap(), "text");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
