//! Architecture invariants, tested: the core never depends on tauri (or on any UI).

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
        .filter(|line| line.starts_with("tauri") || line.starts_with("wry ") || line.starts_with("tao "))
        .collect();
    assert!(offenders.is_empty(), "switchboard-core depends on: {offenders:?}");
}
