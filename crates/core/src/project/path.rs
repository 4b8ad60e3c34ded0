//! Node's `path.resolve`, lexically (no symlink resolution), as it works on
//! the OS at hand: POSIX rules on unix, win32 rules (drive letters, UNC
//! roots, both slashes, drive-relative paths) on Windows. The lock file's
//! name hashes this text, so it must come out as Node writes it.

use std::path::{Path, PathBuf};

/// `path.resolve(base, p)`. A relative `base` is taken from the process cwd,
/// as Node does.
pub fn resolve_lexical(base: &Path, p: &str) -> PathBuf {
    imp::resolve(base, p)
}

/// `path.resolve(p)`.
pub(super) fn absolutize(p: &Path) -> PathBuf {
    imp::resolve(p, "")
}

fn process_cwd() -> PathBuf {
    // Node's process.cwd() throws when the cwd is gone; the root keeps us total.
    std::env::current_dir().unwrap_or_else(|_| PathBuf::from(std::path::MAIN_SEPARATOR_STR))
}

#[cfg(unix)]
mod imp {
    use std::path::{Component, Path, PathBuf};

    /// On the path's own components, so names that are not UTF-8 survive.
    pub(super) fn resolve(base: &Path, p: &str) -> PathBuf {
        let joined = base.join(p);
        let absolute = if joined.is_absolute() { joined } else { super::process_cwd().join(joined) };
        let mut out = PathBuf::from("/");
        for component in absolute.components() {
            match component {
                Component::Normal(name) => out.push(name),
                Component::ParentDir => {
                    out.pop();
                }
                Component::RootDir | Component::Prefix(_) | Component::CurDir => {}
            }
        }
        out
    }
}

#[cfg(windows)]
mod imp {
    use std::path::{Path, PathBuf};

    /// On the text, as Node sees it (a name that is not valid UTF-16 reads
    /// with U+FFFD, as it does in a JS string).
    pub(super) fn resolve(base: &Path, p: &str) -> PathBuf {
        let cwd = super::process_cwd();
        let base = base.to_string_lossy();
        // Each drive's own cwd lives in a hidden variable named `=X:`.
        let drive_cwd = |device: &str| std::env::var(format!("={device}")).ok();
        PathBuf::from(super::win32::resolve(&[&base, p], &cwd.to_string_lossy(), &drive_cwd))
    }
}

/// `path.win32.resolve`, pure text, so every host can test it.
#[cfg(any(windows, test))]
pub(crate) mod win32 {
    fn is_sep(b: u8) -> bool {
        b == b'/' || b == b'\\'
    }

    /// `path.win32.resolve(...args)` with `process.cwd()` = `cwd` and
    /// `process.env['=X:']` = `drive_cwd("X:")`. Works right to left until an
    /// absolute path on a known device is assembled.
    pub(crate) fn resolve(args: &[&str], cwd: &str, drive_cwd: &dyn Fn(&str) -> Option<String>) -> String {
        let mut device = String::new();
        let mut tail = String::new();
        let mut absolute = false;
        for i in (-1..args.len() as isize).rev() {
            let path = if i >= 0 {
                let arg = args[i as usize];
                if arg.is_empty() {
                    continue;
                }
                arg.to_string()
            } else if device.is_empty() {
                cwd.to_string()
            } else {
                cwd_of_drive(&device, cwd, drive_cwd)
            };
            let root = Root::of(&path);
            if !root.device.is_empty() {
                if device.is_empty() {
                    device = root.device;
                } else if root.device.to_lowercase() != device.to_lowercase() {
                    // This path points to another device: not applicable.
                    continue;
                }
            }
            if absolute {
                if !device.is_empty() {
                    break;
                }
            } else {
                tail = format!("{}\\{tail}", &path[root.end..]);
                absolute = root.absolute;
                if absolute && !device.is_empty() {
                    break;
                }
            }
        }
        let tail = normalize(&tail, !absolute);
        if absolute {
            format!("{device}\\{tail}")
        } else if device.is_empty() && tail.is_empty() {
            ".".to_string()
        } else {
            format!("{device}{tail}")
        }
    }

    /// A drive-relative path (`D:x`) resolves against that drive's cwd: its
    /// `=D:` variable, else the process cwd; Node falls back to the drive's
    /// root when the one found is on another drive (by its first two units,
    /// and only when the third is a backslash, so a UNC cwd is kept).
    fn cwd_of_drive(device: &str, cwd: &str, drive_cwd: &dyn Fn(&str) -> Option<String>) -> String {
        let found = drive_cwd(device).filter(|p| !p.is_empty()).unwrap_or_else(|| cwd.to_string());
        let units: Vec<u16> = found.encode_utf16().take(3).collect();
        let head = String::from_utf16_lossy(&units[..units.len().min(2)]);
        if head.to_lowercase() != device.to_lowercase() && units.get(2) == Some(&u16::from(b'\\')) {
            format!("{device}\\")
        } else {
            found
        }
    }

    /// The root of one path: its device (`C:`, `\\server\share`, `\\.`) if
    /// any, where the rest starts, and whether it is absolute.
    struct Root {
        device: String,
        end: usize,
        absolute: bool,
    }

    impl Root {
        fn of(path: &str) -> Root {
            let b = path.as_bytes();
            let mut root = Root { device: String::new(), end: 0, absolute: false };
            match b {
                [] => {}
                [only] if is_sep(*only) => {
                    root.end = 1;
                    root.absolute = true;
                }
                [first, second, ..] if is_sep(*first) => {
                    root.absolute = true;
                    if is_sep(*second) {
                        root.unc(path);
                    } else {
                        root.end = 1;
                    }
                }
                [letter, b':', rest @ ..] if letter.is_ascii_alphabetic() => {
                    root.device = path[..2].to_string();
                    root.end = 2;
                    if rest.first().is_some_and(|&c| is_sep(c)) {
                        root.absolute = true;
                        root.end = 3;
                    }
                }
                _ => {}
            }
            root
        }

        /// After two separators: `\\server\share` (one or more separators
        /// between the parts), or a device namespace `\\.\` / `\\?\`. Anything
        /// shorter is just an absolute path without a device.
        fn unc(&mut self, path: &str) {
            let b = path.as_bytes();
            let run = |mut j: usize, sep: bool| {
                while j < b.len() && is_sep(b[j]) == sep {
                    j += 1;
                }
                j
            };
            let server_end = run(2, false);
            if server_end == 2 || server_end == b.len() {
                return;
            }
            let share_start = run(server_end, true);
            if share_start == b.len() {
                return;
            }
            let share_end = run(share_start, false);
            let server = &path[2..server_end];
            if server == "." || server == "?" {
                self.device = format!("\\\\{server}");
                self.end = 4;
            } else {
                self.device = format!("\\\\{server}\\{}", &path[share_start..share_end]);
                self.end = share_end;
            }
        }
    }

    /// Node's `normalizeString` with `\` as the separator: drops empty and
    /// `.` segments, lets `..` take the previous one away (or keeps it, in
    /// a relative result), joins with backslashes, no trailing one.
    fn normalize(path: &str, allow_above_root: bool) -> String {
        let b = path.as_bytes();
        let mut res = String::new();
        let mut last_segment_len = 0;
        let mut last_slash: isize = -1;
        let mut dots: i32 = 0;
        let mut code = 0u8;
        for i in 0..=b.len() {
            if i < b.len() {
                code = b[i];
            } else if is_sep(code) {
                break;
            } else {
                code = b'/';
            }
            if !is_sep(code) {
                dots = if code == b'.' && dots != -1 { dots + 1 } else { -1 };
                continue;
            }
            let segment_start = (last_slash + 1) as usize;
            if last_slash == i as isize - 1 || dots == 1 {
                // An empty or `.` segment.
            } else if dots == 2 {
                let ends_in_dotdot = res.len() >= 2 && last_segment_len == 2 && res.ends_with("..");
                if !ends_in_dotdot && !res.is_empty() {
                    // `..` takes the last segment away.
                    match res.rfind('\\') {
                        Some(cut) if res.len() > 2 => {
                            res.truncate(cut);
                            last_segment_len = res.rfind('\\').map_or(res.len(), |k| res.len() - 1 - k);
                        }
                        _ => {
                            res.clear();
                            last_segment_len = 0;
                        }
                    }
                    last_slash = i as isize;
                    dots = 0;
                    continue;
                }
                if allow_above_root {
                    res.push_str(if res.is_empty() { ".." } else { "\\.." });
                    last_segment_len = 2;
                }
            } else {
                if !res.is_empty() {
                    res.push('\\');
                }
                res.push_str(&path[segment_start..i]);
                last_segment_len = i - segment_start;
            }
            last_slash = i as isize;
            dots = 0;
        }
        res
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(unix)]
    fn resolve_lexical_is_path_resolve() {
        let base = Path::new("/a/b");
        assert_eq!(resolve_lexical(base, "c/../d/./e/"), Path::new("/a/b/d/e"));
        assert_eq!(resolve_lexical(base, "/x//y/../z"), Path::new("/x/z"));
        assert_eq!(resolve_lexical(base, ""), Path::new("/a/b"));
        assert_eq!(resolve_lexical(base, "../../../.."), Path::new("/"));
        assert_eq!(resolve_lexical(Path::new("/"), "a/"), Path::new("/a"));
    }

    /// The two settings the cases run under: `process.cwd()` and the drive
    /// cwd variables (`=D:` set, `=E:` empty, `=F:` pointing at drive C).
    const CWDS: [(&str, &[(&str, &str)]); 2] = [
        (r"C:\Users\me\proj", &[("D:", r"D:\work\dir"), ("E:", ""), ("F:", r"C:\other")]),
        (r"\\srv\share\sub", &[]),
    ];

    /// Recorded from Node's `path.win32.resolve` (identical on Node 20.20
    /// and 22.23) with `process.cwd` and `process.env` replaced by the
    /// settings above.
    const WIN32_CASES: &[(usize, &[&str], &str)] = &[
        (0, &[r"C:\a\b"], r"C:\a\b"),
        (0, &["c:/a/b/../c"], r"c:\a\c"),
        (0, &[r"C:\a", r"..\b"], r"C:\b"),
        (0, &[r"C:\a", r"D:\b"], r"D:\b"),
        (0, &["D:rel"], r"D:\work\dir\rel"),
        (0, &["E:rel"], r"E:\rel"),
        (0, &["F:rel"], r"F:\rel"),
        (0, &["C:rel"], r"C:\Users\me\proj\rel"),
        (0, &["c:rel"], r"c:\Users\me\proj\rel"),
        (0, &["/a/b"], r"C:\a\b"),
        (0, &[r"\a", "b"], r"C:\a\b"),
        (0, &[r"\\server\share\x\..\y"], r"\\server\share\y"),
        (0, &["//server/share"], r"\\server\share\"),
        (0, &["//server"], r"C:\server"),
        (0, &[r"\\server\\\share\a"], r"\\server\share\a"),
        (0, &[r"\\.\PHYSICALDRIVE0"], r"\\.\PHYSICALDRIVE0"),
        (0, &[r"\\?\C:\x\y"], r"\\?\C:\x\y"),
        (0, &["C:"], r"C:\Users\me\proj"),
        (0, &[r"C:\"], r"C:\"),
        (0, &[r"C:\a\..\..\.."], r"C:\"),
        (0, &["a/./b/.../c", ""], r"C:\Users\me\proj\a\b\...\c"),
        (0, &["", ""], r"C:\Users\me\proj"),
        (0, &[], r"C:\Users\me\proj"),
        (0, &[r"C:\a", "", "b"], r"C:\a\b"),
        (0, &[r"C:\a\b\", r"c\"], r"C:\a\b\c"),
        (0, &[r"\\server\share", r"..\..\x"], r"\\server\share\x"),
        (0, &[r"C:\é\ü", "ñ"], r"C:\é\ü\ñ"),
        (0, &[r"C:\a", r"\\srv\sh\z"], r"\\srv\sh\z"),
        (0, &[r"D:\a", "C:rel"], r"C:\Users\me\proj\rel"),
        (0, &[r"C:\x", "D:rel"], r"D:\work\dir\rel"),
        (0, &["..", ".."], r"C:\Users"),
        (0, &[r"C:\a\.\b\\c"], r"C:\a\b\c"),
        (0, &["C:/..."], r"C:\..."),
        (0, &[r"C:\a..\b"], r"C:\a..\b"),
        (0, &[r"\\server\share\"], r"\\server\share\"),
        (0, &["/"], r"C:\"),
        (0, &[r"\\"], r"C:\"),
        (0, &[r"\\\server\share"], r"C:\server\share"),
        (0, &[r"C:\a", "../../../.."], r"C:\"),
        (0, &[r"1:\x"], r"C:\Users\me\proj\1:\x"),
        (0, &[r"C:\a", "C:b"], r"C:\a\b"),
        (0, &[r"C:\a", "c:b"], r"c:\a\b"),
        (0, &[r"c:\A", "b"], r"c:\A\b"),
        (0, &[r"C:\a\..b\..\c"], r"C:\a\c"),
        (0, &[r"C:\a\b\..\..\..\..\x"], r"C:\x"),
        (0, &[r"C:\.\..\.x"], r"C:\.x"),
        (0, &["x:"], r"x:\"),
        (0, &[r"x:\"], r"x:\"),
        (0, &[r"\\srv\share\a\..\..\.."], r"\\srv\share\"),
        (0, &["//srv/share/a/b"], r"\\srv\share\a\b"),
        (0, &[r"C:\a b\c"], r"C:\a b\c"),
        (0, &[r"C:\a", "b", "..", ".", "c"], r"C:\a\c"),
        (1, &["x"], r"\\srv\share\sub\x"),
        (1, &[r"..\..\y"], r"\\srv\share\y"),
        (1, &["D:rel"], "D:rel"),
        (1, &["/top"], r"\\srv\share\top"),
        (1, &[r"C:\abs"], r"C:\abs"),
    ];

    fn win32_resolve(setting: usize, args: &[&str]) -> String {
        let (cwd, drives) = CWDS[setting];
        let drive_cwd = |device: &str| drives.iter().find(|(d, _)| *d == device).map(|(_, p)| p.to_string());
        win32::resolve(args, cwd, &drive_cwd)
    }

    #[test]
    fn win32_resolve_matches_recorded_node_outputs() {
        for (setting, args, expected) in WIN32_CASES {
            assert_eq!(win32_resolve(*setting, args), *expected, "path.win32.resolve({args:?}) in setting {setting}");
        }
    }

    /// The same cases against the Node on PATH, when there is one.
    #[test]
    fn win32_resolve_matches_node() {
        use crate::sys::{json_quote, json_strings};
        let cases: Vec<String> = WIN32_CASES
            .iter()
            .map(|(setting, args, _)| {
                let (cwd, drives) = CWDS[*setting];
                let env: Vec<String> =
                    drives.iter().map(|(d, p)| format!("{}:{}", json_quote(&format!("={d}")), json_quote(p))).collect();
                format!(r#"{{"cwd":{},"env":{{{}}},"args":{}}}"#, json_quote(cwd), env.join(","), json_strings(args))
            })
            .collect();
        let script = "const path=require('path');const out=[];\
            for(const c of JSON.parse(process.argv[1])){process.cwd=()=>c.cwd;\
            Object.defineProperty(process,'env',{value:c.env,configurable:true,writable:true});\
            out.push(path.win32.resolve(...c.args))}process.stdout.write(JSON.stringify(out))";
        let arg = format!("[{}]", cases.join(","));
        let Some(output) = crate::sys::node_eval_json(script, &[&arg]) else { return };
        let theirs = crate::sys::strings_of(&output);
        assert_eq!(theirs.len(), WIN32_CASES.len());
        for ((setting, args, _), node) in WIN32_CASES.iter().zip(&theirs) {
            assert_eq!(&win32_resolve(*setting, args), node, "path.win32.resolve({args:?}) in setting {setting}");
        }
    }
}
