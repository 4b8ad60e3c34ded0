use std::fs;
use super::pnpm::pnpm_packages;
use crate::js::string::js_trim;
use super::files::DirFiles;
use super::workspace::{js_string, normalize_pattern, package_json_workspaces, segment_matches, trim_units, Units, STAR};
use super::*;
use crate::js::json;
use crate::js::ops::not_primitive;
use crate::js::Value;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A scratch layout at `<tmp>/<unique>/layout`; the dir holding it serves
/// as the home dir so nothing above the temp dir can change a result.
struct Layout {
    container: PathBuf,
    dir: PathBuf,
}

impl Layout {
    fn new() -> Layout {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let unique = format!(
            "quiver-project-root-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let container = std::env::temp_dir().join(unique);
        let dir = container.join("layout");
        fs::create_dir_all(&dir).unwrap();
        Layout { container, dir }
    }

    fn file(&self, rel: &str, content: &str) -> &Layout {
        let path = self.dir.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, content).unwrap();
        self
    }

    fn dirs(&self, rels: &[&str]) -> &Layout {
        for rel in rels {
            fs::create_dir_all(self.dir.join(rel)).unwrap();
        }
        self
    }

    /// The root for `cwd`, relative to the layout ("" = the layout).
    fn root(&self, cwd: &str) -> String {
        self.root_with_home(cwd, Some(&self.container))
    }

    fn root_with_home(&self, cwd: &str, home: Option<&Path>) -> String {
        let cwd = resolve_lexical(&self.dir, cwd);
        let root = resolve_project_root(&cwd, home);
        match root.strip_prefix(&self.dir) {
            Ok(rel) => rel.to_string_lossy().into_owned(),
            Err(_) => root.to_string_lossy().into_owned(),
        }
    }
}

impl Drop for Layout {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.container);
    }
}

#[test]
fn plain_dir_is_its_own_root() {
    let l = Layout::new();
    l.dirs(&["src/components"])
        .file("package.json", "{\"name\":\"x\"}");
    assert_eq!(l.root(""), "");
    assert_eq!(l.root("src/components"), "src/components");
}

#[test]
fn npm_and_yarn_workspaces() {
    let l = Layout::new();
    l.file("package.json", r#"{"workspaces": ["packages/*"]}"#)
        .dirs(&["packages/a/src/deep", "tools/x"]);
    assert_eq!(l.root("packages/a/src/deep"), "packages/a");
    assert_eq!(l.root(""), "");
    assert_eq!(l.root("tools/x"), "");
    let y = Layout::new();
    y.file(
        "package.json",
        r#"{"workspaces": {"packages": ["apps/*"]}}"#,
    )
    .dirs(&["apps/web/src"]);
    assert_eq!(y.root("apps/web/src"), "apps/web");
}

#[test]
fn pnpm_block_list_with_comments_and_quotes() {
    let yaml = "# ws\npackages:\n  - 'apps/*'  # apps\n  - \"libs/*\"\n  - '!libs/private'\ncatalog:\n  - 'other/*'\n";
    assert_eq!(pnpm_packages(yaml), ["apps/*", "libs/*", "!libs/private"]);
    let l = Layout::new();
    l.file("pnpm-workspace.yaml", yaml)
        .dirs(&["libs/ui/src", "libs/private/src", "other/x/y"]);
    assert_eq!(l.root("libs/ui/src"), "libs/ui");
    assert_eq!(l.root("libs/private/src"), "");
    assert_eq!(l.root("other/x/y"), "");
}

#[test]
fn pnpm_flow_lists() {
    assert_eq!(
        pnpm_packages("packages: [\"web/*\", 'svc/*', ]  # c"),
        ["web/*", "svc/*"]
    );
    assert_eq!(
        pnpm_packages("packages: ['a#b/*', \"c, d/*\"]"),
        ["a#b/*", "c, d/*"]
    );
    assert_eq!(
        pnpm_packages("\u{FEFF}packages:\r\n  - mods/*\r\n"),
        ["mods/*"]
    );
    // `.` in the JS regex refuses a lone \r inside the brackets.
    assert!(pnpm_packages("packages: [a\rb]").is_empty());
    assert_eq!(pnpm_packages("packages:\n  - x\\'y/* # n"), ["x\\'y/*"]);
    let l = Layout::new();
    l.file("pnpm-workspace.yaml", "packages: ['svc/*']\n")
        .dirs(&["svc/api/src"]);
    assert_eq!(l.root("svc/api/src"), "svc/api");
}

#[test]
fn lerna_packages() {
    let l = Layout::new();
    l.file("lerna.json", r#"{"packages": ["modules/*"]}"#)
        .dirs(&["modules/m1/lib"]);
    assert_eq!(l.root("modules/m1/lib"), "modules/m1");
}

#[test]
fn markers_need_a_real_child_under_apps_or_packages() {
    let l = Layout::new();
    l.file("turbo.json", "{}")
        .dirs(&["apps/web/src/pages", "tools/gen/src"]);
    l.file("tools/gen/package.json", "{}");
    assert_eq!(l.root("apps/web/src/pages"), "apps/web");
    assert_eq!(l.root("tools/gen/src"), "tools/gen");
    assert_eq!(l.root("apps"), "");

    let ignored = Layout::new();
    ignored.file("nx.json", "{}").file("apps/readme.txt", "x");
    ignored.dirs(&[
        "apps/node_modules/x",
        "apps/.hidden",
        "packages/dist",
        "packages/vendors",
    ]);
    assert_eq!(ignored.root("apps/node_modules/x"), "apps/node_modules/x");
}

/// A pattern file is looked up once for its patterns and its presence: one
/// that exists but cannot be read (a directory by that name) still marks a
/// root, as `existsSync` says; a link to nothing does not.
#[test]
fn an_unreadable_pattern_file_still_marks_a_root() {
    let l = Layout::new();
    l.dirs(&["pnpm-workspace.yaml", "apps/web/src"]);
    assert_eq!(l.root("apps/web/src"), "apps/web");
}

#[cfg(unix)]
#[test]
fn a_dangling_link_is_no_marker() {
    let l = Layout::new();
    l.dirs(&["apps/web/src"]);
    std::os::unix::fs::symlink(l.dir.join("missing.json"), l.dir.join("lerna.json")).unwrap();
    assert_eq!(l.root("apps/web/src"), "apps/web/src");
}

#[cfg(unix)]
#[test]
fn symlinked_child_and_non_utf8_names_are_harmless() {
    use std::os::unix::ffi::OsStrExt;
    let l = Layout::new();
    l.file("turbo.json", "{}").dirs(&["elsewhere/src"]);
    std::os::unix::fs::symlink(l.dir.join("elsewhere"), l.dir.join("apps")).unwrap();
    fs::create_dir_all(l.dir.join("packages")).unwrap();
    std::os::unix::fs::symlink(l.dir.join("elsewhere"), l.dir.join("packages/link")).unwrap();
    // apps -> elsewhere lists `src`, a real dir: that is a child.
    assert_eq!(l.root("elsewhere/src"), "");
    let odd = l.dir.join(OsStr::from_bytes(b"apps/\xff\xfe/deep"));
    let root = resolve_project_root(&odd, Some(&l.container));
    assert_eq!(root, l.dir.join(OsStr::from_bytes(b"apps/\xff\xfe")));

    let only_link = Layout::new();
    only_link
        .file("turbo.json", "{}")
        .dirs(&["target/x", "packages"]);
    std::os::unix::fs::symlink(
        only_link.dir.join("target"),
        only_link.dir.join("packages/l"),
    )
    .unwrap();
    assert_eq!(only_link.root("target/x"), "target/x");
}

#[test]
fn double_star_patterns() {
    let l = Layout::new();
    l.file("package.json", r#"{"workspaces": ["packages/**"]}"#)
        .file("packages/package.json", "{}")
        .file("packages/group/lib-a/package.json", "{}")
        .dirs(&["packages/group/lib-a/src/x", "packages/group/lib-b/src"]);
    assert_eq!(l.root("packages/group/lib-a/src/x"), "packages/group/lib-a");
    assert_eq!(l.root("packages/group/lib-b/src"), "packages/group");
    // Too short for `**`: the nearest-project fallback takes packages/.
    assert_eq!(l.root("packages"), "packages");
    let quirk = Layout::new();
    quirk
        .file("package.json", r#"{"workspaces": ["a*/**"]}"#)
        .dirs(&["zzz/q/r"]);
    assert_eq!(quirk.root("zzz/q/r"), "zzz");
}

#[test]
fn negations() {
    let l = Layout::new();
    l.file(
        "package.json",
        r#"{"workspaces": ["apps/*", "!./apps/legacy/"]}"#,
    )
    .file("apps/legacy/package.json", "{}")
    .dirs(&["apps/legacy/src", "apps/web/src"]);
    assert_eq!(l.root("apps/legacy/src"), "");
    assert_eq!(l.root("apps/web/src"), "apps/web");
    let only = Layout::new();
    only.file("package.json", r#"{"workspaces": ["!apps/*"]}"#)
        .dirs(&["apps/web/src"]);
    assert_eq!(only.root("apps/web/src"), "apps/web/src");
}

#[test]
fn impeccable_project_roots() {
    let l = Layout::new();
    l.file(".impeccable/config.json", r#"{"projectRoots": "nope"}"#)
        .file(
            ".impeccable/config.local.json",
            r#"{"projectRoots": [7, "  ", " sites/* "]}"#,
        )
        .dirs(&["sites/blog/posts"]);
    assert_eq!(l.root("sites/blog/posts"), "sites/blog");

    let both = Layout::new();
    both.file(
        ".impeccable/config.json",
        r#"{"projectRoots": ["apps/web/*", "!apps/legacy"]}"#,
    )
    .file("package.json", r#"{"workspaces": ["apps/*"]}"#)
    .dirs(&["apps/web/client/src", "apps/legacy/src", "apps/api/src"]);
    assert_eq!(both.root("apps/web/client/src"), "apps/web/client");
    assert_eq!(both.root("apps/legacy/src"), "");
    assert_eq!(both.root("apps/api/src"), "apps/api");
}

#[test]
fn git_boundary() {
    let l = Layout::new();
    l.file("package.json", r#"{"workspaces": ["sub/*", "apps/*"]}"#)
        .dirs(&["sub/proj/.git", "sub/proj/src", ".git", "apps/web/src"]);
    assert_eq!(l.root("sub/proj/src"), "sub/proj/src");
    assert_eq!(l.root("apps/web/src"), "apps/web");
}

#[test]
fn home_dir_stops_the_walk() {
    let l = Layout::new();
    l.file("package.json", r#"{"workspaces": ["sub/*"]}"#)
        .dirs(&["sub/x/y"]);
    let home = l.dir.join("sub");
    assert_eq!(l.root_with_home("sub/x/y", Some(&home)), "sub/x/y");
    assert_eq!(
        l.root_with_home("sub/x/y", Some(&l.dir.join("sub/"))),
        "sub/x/y"
    );
    assert_eq!(l.root_with_home("sub/x/y", Some(&l.dir)), "sub/x/y");
    assert_eq!(l.root("sub/x/y"), "sub/x");
}

#[test]
fn fallbacks_apps_and_nearest_project_files() {
    let l = Layout::new();
    l.file("package.json", r#"{"workspaces": ["libs/*"]}"#)
        .file("docs/site/Design.md", "#")
        .file("tools/cli/package.json", "{}")
        .dirs(&["apps/web/src", "docs/site/pages", "tools/cli/src", "misc/x"]);
    assert_eq!(l.root("apps/web/src"), "apps/web");
    assert_eq!(l.root("docs/site/pages"), "docs/site");
    assert_eq!(l.root("tools/cli/src"), "tools/cli");
    assert_eq!(l.root("misc/x"), "");
}

#[test]
fn dotdot_named_segment_counts_as_outside() {
    let l = Layout::new();
    l.file("package.json", r#"{"workspaces": ["*"]}"#)
        .dirs(&["..cache/x", "ok/x"]);
    assert_eq!(l.root("..cache/x"), "");
    assert_eq!(l.root("ok/x"), "ok");
}

#[test]
fn non_string_workspace_entries() {
    let l = Layout::new();
    l.file(
        "package.json",
        r#"{"workspaces": [null, 0, "", [1, null, "b"], {"a": 1}, 1e21]}"#,
    )
    .dirs(&["1,,b/x/y", "[object Object]/p/q", "1e+21/z/w"]);
    assert_eq!(l.root("1,,b/x/y"), "1,,b");
    assert_eq!(l.root("[object Object]/p/q"), "[object Object]");
    assert_eq!(l.root("1e+21/z/w"), "1e+21");
}

#[test]
fn to_string_key_throws_only_when_reached() {
    let l = Layout::new();
    l.file(
        ".impeccable/config.json",
        r#"{"projectRoots": ["sites/*"]}"#,
    )
    .file("package.json", r#"{"workspaces": [{"toString": 1}]}"#)
    .dirs(&["sites/blog/posts", "other/x"]);
    let home = Some(l.container.as_path());
    let blog = try_resolve_project_root(&l.dir.join("sites/blog/posts"), home);
    assert_eq!(blog, Ok(l.dir.join("sites/blog")));
    let other = try_resolve_project_root(&l.dir.join("other/x"), home);
    assert_eq!(other, Err(not_primitive()));
    // The infallible variant falls back to the cwd.
    assert_eq!(l.root("other/x"), "other/x");
}

/// `String(entry)` of a JSON workspace entry, as text.
fn entry_string(json_text: &str) -> Result<String, JsError> {
    let value = json::parse(json_text).unwrap();
    js_string(&value).map(|units| String::from_utf16_lossy(&units))
}

#[test]
fn js_string_of_json_values() {
    let cases = [
        ("1", "1"),
        ("-1.5", "-1.5"),
        ("1e21", "1e+21"),
        ("123e-20", "1.23e-18"),
        ("1e400", "Infinity"),
        ("true", "true"),
        ("[1, null, [2, [null]], \"x\"]", "1,,2,,x"),
        ("{\"valueOf\": 1}", "[object Object]"),
    ];
    for (text, want) in cases {
        assert_eq!(entry_string(text), Ok(want.to_string()), "{text}");
    }
    assert_eq!(entry_string("{\"toString\": 1}"), Err(not_primitive()));
    assert_eq!(entry_string("[[{\"toString\": null}]]"), Err(not_primitive()));
}

fn u(s: &str) -> Units {
    s.encode_utf16().collect()
}

#[test]
fn glob_and_normalization() {
    assert!(segment_matches(&u("*-app"), &u("web-app")));
    assert!(segment_matches(&u("a*b*c"), &u("aXbYbc")));
    assert!(!segment_matches(&u("a*b"), &u("aXc")));
    assert!(segment_matches(&u("**"), &u("")));
    assert!(!segment_matches(&u("web"), &u("Web")));
    // A lone high surrogate matches the first half of an astral char.
    assert!(segment_matches(&[0xD83D, STAR], &u("\u{1F600}x")));
    assert_eq!(normalize_pattern(&u(" './a/b//' ")), u("a/b"));
    assert_eq!(normalize_pattern(&u("'")), u(""));
    assert_eq!(trim_units(&u("\u{FEFF}\u{3000}x\u{85}")), u("x\u{85}"));
    assert_eq!(js_trim("\u{FEFF}\u{2028}x\u{85}"), "x\u{85}");
}

#[test]
fn unreadable_or_odd_json_reads_as_empty() {
    let l = Layout::new();
    l.file("bad.json", "{\"workspaces\": [\"a\"],}")
        .file("bom.json", "\u{FEFF}{\"workspaces\": [\"a\"]}")
        .file("list.json", "[\"a\"]")
        .file(
            "odd.json",
            "{\"d\": \"\\ud800\", \"workspaces\": [\"a\"], \"workspaces\": [\"b\"]}",
        );
    let workspaces = |name: &'static str| {
        let value = DirFiles::new(&l.dir).read_json(name);
        package_json_workspaces(value.as_ref())
            .iter()
            .map(entry_string_of)
            .collect::<Vec<_>>()
    };
    assert!(workspaces("bad.json").is_empty());
    assert!(workspaces("bom.json").is_empty());
    assert!(workspaces("list.json").is_empty());
    assert!(workspaces("missing.json").is_empty());
    assert!(workspaces("").is_empty());
    assert_eq!(workspaces("odd.json"), ["b"]);
}

fn entry_string_of(v: &Value) -> String {
    String::from_utf16_lossy(&js_string(v).unwrap())
}

/// Replays `__test__/fixtures/project-roots.json`, produced by running
/// quiver-cli's own resolveProjectRoot (see gen-project-roots.mjs).
/// QUIVER_PROJECT_ROOTS_FIXTURE may name another file of the same shape
/// (e.g. a large generated one for differential testing).
#[test]
fn fixture_cases_match_the_reference() {
    let default =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../__test__/fixtures/project-roots.json");
    let path = std::env::var_os("QUIVER_PROJECT_ROOTS_FIXTURE").map_or(default, PathBuf::from);
    let text = fs::read_to_string(&path).expect("fixture file");
    let fixture = json::parse(&text).expect("fixture JSON");
    let Value::Array(cases) = &fixture else { panic!("the fixture is a list") };
    assert!(cases.len() >= 30);
    for case in cases {
        replay_fixture_case(case);
    }
}

/// The text of `v`, which the fixture says is a string.
fn text_of(v: &Value) -> String {
    v.as_js_str().unwrap_or_else(|| panic!("not a string: {v:?}")).to_lossy()
}

fn replay_fixture_case(case: &Value) {
    let name = text_of(case.get("name"));
    let l = Layout::new();
    let Value::Array(dirs) = case.get("dirs") else { panic!("{name}: dirs") };
    for dir in dirs {
        l.dirs(&[&text_of(dir)]);
    }
    let Value::Object(files) = case.get("files") else { panic!("{name}: files") };
    for (rel, content) in files.iter() {
        l.file(&rel.to_lossy(), &text_of(content));
    }
    let home = resolve_lexical(&l.dir, &text_of(case.get("home")));
    let cwd = resolve_lexical(&l.dir, &text_of(case.get("cwd")));
    let got = try_resolve_project_root(&cwd, Some(&home));
    let want = match case.get("expectedRoot") {
        Value::String(rel) => Ok(resolve_lexical(&l.dir, &rel.to_lossy())),
        _ => {
            let error = case.get("expectedError");
            Err((text_of(error.get("name")), text_of(error.get("message"))))
        }
    };
    let got = got.map_err(|e| (e.class.name().to_string(), e.message));
    assert_eq!(got, want, "fixture case {name:?}");
}
