//! Architecture invariants, tested: the core never depends on tauri (or on any UI,
//! or on clap); every source file of the workspace opens with a header that says
//! what it is for; no core file is over 500 lines; the dispatcher's and the
//! sessions' rooms import only from each other, never back up from their parent.

use std::path::{Path, PathBuf};
use std::process::Command;

#[test]
fn the_core_never_depends_on_tauri() {
    let output = Command::new(env!("CARGO"))
        .args(["tree", "-p", "switchboard-core", "--edges", "normal,build", "--prefix", "none", "--offline"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo tree runs");
    assert!(output.status.success(), "cargo tree failed: {}", String::from_utf8_lossy(&output.stderr));
    let tree = String::from_utf8_lossy(&output.stdout);
    assert!(tree.lines().count() > 20, "cargo tree printed too little to judge:\n{tree}");
    let offenders: Vec<&str> = tree
        .lines()
        .filter(|line| ["tauri", "wry ", "tao ", "clap "].iter().any(|name| line.starts_with(name)))
        .collect();
    assert!(offenders.is_empty(), "switchboard-core depends on: {offenders:?}");
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// The `.rs` files under `folder`, recursively (build output and node_modules skipped).
fn rust_files(folder: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let Ok(entries) = std::fs::read_dir(folder) else { return files };
    for entry in entries.map(Result::unwrap) {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() && !["target", "node_modules", "gen"].contains(&name.as_str()) {
            files.extend(rust_files(&path));
        } else if name.ends_with(".rs") {
            files.push(path);
        }
    }
    files.sort();
    files
}

#[test]
fn every_rust_file_opens_with_its_purpose() {
    let root = workspace_root();
    let files: Vec<PathBuf> = ["crates", "src-tauri/src", "src-tauri/tests", "src-tauri/build.rs"]
        .iter()
        .flat_map(|part| {
            let path = root.join(part);
            if path.is_file() {
                vec![path]
            } else {
                rust_files(&path)
            }
        })
        .collect();
    assert!(files.len() > 40, "found too few files to judge: {}", files.len());
    let missing: Vec<String> = files
        .iter()
        .filter(|path| !std::fs::read_to_string(path).unwrap().starts_with("//!"))
        .map(|path| path.strip_prefix(&root).unwrap().display().to_string())
        .collect();
    assert!(missing.is_empty(), "these files lack a `//!` header saying what they are for: {missing:?}");
}

#[test]
fn no_core_source_file_is_over_500_lines() {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let long: Vec<(String, usize)> = rust_files(&source)
        .iter()
        .map(|path| {
            (
                path.strip_prefix(&source).unwrap().display().to_string(),
                std::fs::read_to_string(path).unwrap().lines().count(),
            )
        })
        .filter(|(_, lines)| *lines > 500)
        .collect();
    assert!(long.is_empty(), "split these into rooms a reader can name: {long:?}");
}

#[test]
fn rooms_import_from_their_siblings_never_from_their_parent() {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut offences = Vec::new();
    for module in ["dispatch", "sessions"] {
        let folder = source.join(module);
        let siblings: Vec<String> =
            rust_files(&folder).iter().map(|path| path.file_stem().unwrap().to_string_lossy().into_owned()).collect();
        assert!(siblings.len() >= 2, "{module}/ has rooms");
        for path in rust_files(&folder) {
            let text = std::fs::read_to_string(&path).unwrap();
            // Test modules inside a file may use their own file's items (`super::*`).
            let code = text.split("#[cfg(test)]").next().unwrap();
            for (index, _) in code.match_indices("super::") {
                let rest = &code[index + "super::".len()..];
                let name: String =
                    rest.chars().take_while(|character| character.is_alphanumeric() || *character == '_').collect();
                if !siblings.contains(&name) {
                    offences.push(format!("{}: super::{name}", path.strip_prefix(&source).unwrap().display()));
                }
            }
        }
    }
    assert!(offences.is_empty(), "imports back up to the parent module: {offences:?}");
}
