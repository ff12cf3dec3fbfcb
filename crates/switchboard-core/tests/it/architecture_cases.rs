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

/// The module path of a source file under `src` (`runner/cli/presets.rs` is
/// `runner::cli::presets`; `lib.rs` is the crate root).
fn module_path(source: &Path, file: &Path) -> Vec<String> {
    let relative = file.strip_prefix(source).unwrap().with_extension("");
    let mut path: Vec<String> =
        relative.components().map(|part| part.as_os_str().to_string_lossy().into_owned()).collect();
    if path == ["lib"] {
        path.clear();
    }
    path
}

/// Every module a file's code names through `crate::` or `super::` (its test
/// modules left out, where `super::` is the file itself), as absolute paths.
fn named_modules(module: &[String], text: &str) -> Vec<Vec<String>> {
    let code = text.split("#[cfg(test)]").next().unwrap();
    let identifier = |rest: &str| -> usize {
        rest.find(|character: char| !(character.is_alphanumeric() || character == '_')).unwrap_or(rest.len())
    };
    let mut named = Vec::new();
    for start in ["crate::", "super::"].iter().flat_map(|head| code.match_indices(head).map(|(index, _)| index)) {
        // Not the tail of a longer path (`x::super`) nor part of a longer word.
        let before = code[..start].chars().next_back();
        if before.is_some_and(|character| character.is_alphanumeric() || character == '_' || character == ':') {
            continue;
        }
        let mut rest = &code[start..];
        let first = identifier(rest);
        let mut path: Vec<String> =
            if &rest[..first] == "crate" { Vec::new() } else { module[..module.len() - 1].to_vec() };
        rest = &rest[first..];
        while let Some(after) = rest.strip_prefix("::") {
            let length = identifier(after);
            match &after[..length] {
                "" => break,
                "super" => {
                    path.pop();
                }
                name => path.push(name.to_string()),
            }
            rest = &after[length..];
        }
        named.push(path);
    }
    named.sort();
    named
}

#[test]
fn the_runner_families_import_the_contract_and_their_siblings_never_each_other_or_the_dispatcher() {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let family = |path: &[String]| match path {
        [runner, family, ..] if runner == "runner" && (family == "cli" || family == "remote") => Some(family.clone()),
        _ => None,
    };
    let above_the_runner = ["dispatch", "sessions", "setup", "tools", "skill"];
    let mut offences = Vec::new();
    let mut families_seen = std::collections::BTreeSet::new();
    for file in rust_files(&source) {
        let module = module_path(&source, &file);
        let text = std::fs::read_to_string(&file).unwrap();
        let shown = file.strip_prefix(&source).unwrap().display().to_string();
        for named in named_modules(&module, &text) {
            let top = named.first().map(String::as_str).unwrap_or("");
            let offence = match module.first().map(String::as_str) {
                // The runner room never reaches back up to what runs it.
                Some("runner") if above_the_runner.contains(&top) => true,
                // A family imports the contract, the runner's shared helpers and its
                // own siblings; never the other family.
                Some("runner") => {
                    family(&module).is_some() && family(&named).is_some_and(|other| Some(other) != family(&module))
                }
                // The contract and the sources are the floor: config and events only.
                Some("contract") => !["config", "event", "contract"].contains(&top),
                Some("sources") => top != "sources",
                // The dispatcher and the sessions know the contract and the cache, not the families.
                Some("dispatch" | "sessions") => top == "runner" && named.get(1).map(String::as_str) != Some("cache"),
                _ => false,
            };
            if offence {
                offences.push(format!("{shown}: {}", named.join("::")));
            }
        }
        if let Some(name) = family(&module) {
            families_seen.insert(name);
        }
    }
    assert_eq!(families_seen.len(), 2, "the rule needs both families to judge: {families_seen:?}");
    assert!(offences.is_empty(), "imports across the runner room's walls: {offences:?}");
}

#[test]
fn the_family_rule_sees_a_crossing_import() {
    // The checker itself: a CLI file that names the remote family, through either
    // spelling, is caught; its own siblings and the contract are not.
    let module: Vec<String> = ["runner", "cli", "claude"].map(String::from).to_vec();
    let text = "use super::subprocess::X;\nuse crate::contract::Message;\nfn f() { super::super::remote::mcp::g(); crate::runner::remote::a2a::h(); }";
    let named = named_modules(&module, text);
    let joined: Vec<String> = named.iter().map(|path| path.join("::")).collect();
    assert_eq!(
        joined,
        ["contract::Message", "runner::cli::subprocess::X", "runner::remote::a2a::h", "runner::remote::mcp::g"]
    );
}
