//! Architecture invariants, tested: the engine's crates never depend on tauri (or
//! on any UI, or on clap); the floor (`switchboard-base`) holds no network client
//! and no process handling; every source file of the workspace opens with a header
//! that says what it is for; no engine file is over 500 lines; the dispatcher's and
//! the sessions' rooms import only from each other, never back up from their
//! parent; the runner families never import each other. That the runners cannot
//! name the dispatcher is Cargo's to keep (`switchboard-core` depends on
//! `switchboard-runners`, and a crate cycle does not build).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The crates `package` depends on to build (normal and build edges), one per line.
fn dependency_tree(package: &str) -> String {
    let output = Command::new(env!("CARGO"))
        .args(["tree", "-p", package, "--edges", "normal,build", "--prefix", "none", "--offline"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo tree runs");
    assert!(output.status.success(), "cargo tree failed: {}", String::from_utf8_lossy(&output.stderr));
    let tree = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(tree.lines().count() > 20, "cargo tree printed too little to judge:\n{tree}");
    tree
}

fn depends_on<'a>(tree: &'a str, names: &[&str]) -> Vec<&'a str> {
    tree.lines().filter(|line| names.iter().any(|name| line.starts_with(&format!("{name} ")))).collect()
}

#[test]
fn the_engine_never_depends_on_tauri() {
    for package in ["switchboard-base", "switchboard-runners", "switchboard-core"] {
        let tree = dependency_tree(package);
        let offenders = depends_on(&tree, &["tauri", "wry", "tao", "clap"]);
        assert!(offenders.is_empty(), "{package} depends on: {offenders:?}");
    }
}

#[test]
fn the_floor_builds_without_a_network_client_or_process_handling_and_the_runners_without_the_dispatcher() {
    let base = dependency_tree("switchboard-base");
    let offenders = depends_on(&base, &["reqwest", "hyper", "rmcp", "nix", "switchboard-runners", "switchboard-core"]);
    assert!(offenders.is_empty(), "switchboard-base depends on: {offenders:?}");
    let runners = dependency_tree("switchboard-runners");
    assert!(!depends_on(&runners, &["reqwest"]).is_empty(), "the tree of switchboard-runners is read: {runners}");
    let offenders = depends_on(&runners, &["switchboard-core", "switchboard-mcp", "switchboard-otel"]);
    assert!(offenders.is_empty(), "switchboard-runners depends on: {offenders:?}");
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

/// The `src` folder of one of the workspace's crates.
fn crate_source(name: &str) -> PathBuf {
    workspace_root().join("crates").join(name).join("src")
}

#[test]
fn no_engine_source_file_is_over_500_lines() {
    let root = workspace_root();
    let long: Vec<(String, usize)> = ["switchboard-base", "switchboard-runners", "switchboard-core"]
        .iter()
        .flat_map(|name| rust_files(&crate_source(name)))
        .map(|path| {
            (
                path.strip_prefix(&root).unwrap().display().to_string(),
                std::fs::read_to_string(&path).unwrap().lines().count(),
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

/// Every import in the files of `source` that `offends(module, named)`, as
/// `file: path`.
fn offending_imports(source: &Path, offends: impl Fn(&[String], &[String]) -> bool) -> Vec<String> {
    let mut offences = Vec::new();
    for file in rust_files(source) {
        let module = module_path(source, &file);
        let text = std::fs::read_to_string(&file).unwrap();
        for named in named_modules(&module, &text) {
            if offends(&module, &named) {
                offences.push(format!("{}: {}", file.strip_prefix(source).unwrap().display(), named.join("::")));
            }
        }
    }
    offences
}

/// The runner family a module of `switchboard-runners` belongs to, if any.
fn family(path: &[String]) -> Option<String> {
    match path.first().map(String::as_str) {
        Some(family @ ("cli" | "remote")) => Some(family.to_string()),
        _ => None,
    }
}

#[test]
fn the_runner_families_import_the_contract_and_their_siblings_never_each_other() {
    let source = crate_source("switchboard-runners");
    let families_seen: std::collections::BTreeSet<String> =
        rust_files(&source).iter().filter_map(|file| family(&module_path(&source, file))).collect();
    assert_eq!(families_seen.len(), 2, "the rule needs both families to judge: {families_seen:?}");
    // A family imports the contract, the runners' shared helpers and its own
    // siblings; never the other family.
    let offences = offending_imports(&source, |module, named| {
        family(module).is_some() && family(named).is_some_and(|other| Some(other) != family(module))
    });
    assert!(offences.is_empty(), "imports across the runner families' walls: {offences:?}");
}

#[test]
fn the_floor_and_the_dispatcher_keep_their_walls() {
    // The contract and the sources are the floor of the floor: config and events only.
    let offences = offending_imports(&crate_source("switchboard-base"), |module, named| {
        let top = named.first().map(String::as_str).unwrap_or("");
        match module.first().map(String::as_str) {
            Some("contract") => !["config", "event", "contract"].contains(&top),
            Some("sources") => top != "sources",
            _ => false,
        }
    });
    assert!(offences.is_empty(), "switchboard-base imports across its walls: {offences:?}");
    // The dispatcher and the sessions know the contract and the cache, not the families.
    let offences = offending_imports(&crate_source("switchboard-core"), |module, named| {
        matches!(module.first().map(String::as_str), Some("dispatch" | "sessions"))
            && named.first().map(String::as_str) == Some("runner")
            && named.get(1).map(String::as_str) != Some("cache")
    });
    assert!(offences.is_empty(), "the dispatcher or the sessions name a runner family: {offences:?}");
}

#[test]
fn the_family_rule_sees_a_crossing_import() {
    // The checker itself: a CLI file that names the remote family, through either
    // spelling, is caught; its own siblings and the contract are not.
    let module: Vec<String> = ["cli", "claude"].map(String::from).to_vec();
    let text = "use super::subprocess::X;\nuse crate::contract::Message;\nfn f() { super::super::remote::mcp::g(); crate::remote::a2a::h(); }";
    let named = named_modules(&module, text);
    let joined: Vec<String> = named.iter().map(|path| path.join("::")).collect();
    assert_eq!(joined, ["cli::subprocess::X", "contract::Message", "remote::a2a::h", "remote::mcp::g"]);
    let crossing: Vec<&Vec<String>> =
        named.iter().filter(|path| family(path).is_some_and(|other| Some(other) != family(&module))).collect();
    assert_eq!(crossing.len(), 2, "both spellings of the crossing are caught: {crossing:?}");
}
