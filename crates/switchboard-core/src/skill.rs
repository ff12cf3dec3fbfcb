//! The delegation guidance skill (Agent Skills format: `SKILL.md` with `name` and
//! `description` front matter). Bundled in the binary; an agent's `skill` setting
//! switches it off or replaces it with a file of its own. It is guidance only: the
//! dispatcher enforces every limit whatever a model makes of it.

use crate::config::{AgentConfig, SkillSetting};

/// The bundled skill file, as shipped in `skills/delegation/SKILL.md`.
pub const BUNDLED: &str = include_str!("../skills/delegation/SKILL.md");

/// The body of a skill file: its text after the front matter.
pub fn body(skill_file: &str) -> &str {
    let Some(rest) = skill_file.strip_prefix("---") else { return skill_file.trim() };
    match rest.find("\n---") {
        Some(end) => rest[end + 4..].trim(),
        None => skill_file.trim(),
    }
}

/// The guidance to add to `agent`'s system prompt when it is offered tool-agents,
/// or `None` when its `skill` setting is `false`. A replacement file that cannot
/// be read falls back to the bundled skill, with a warning in the log.
pub fn guidance_for(agent: &AgentConfig) -> Option<String> {
    match &agent.skill {
        Some(SkillSetting::Enabled(false)) => None,
        None | Some(SkillSetting::Enabled(true)) => Some(body(BUNDLED).to_string()),
        Some(SkillSetting::Path(path)) => match std::fs::read_to_string(path) {
            Ok(text) => Some(body(&text).to_string()),
            Err(error) => {
                tracing::warn!(agent = %agent.name, path, %error, "skill file unreadable; using the bundled skill");
                Some(body(BUNDLED).to_string())
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bundled_skill_has_agent_skills_front_matter() {
        let front = BUNDLED.strip_prefix("---\n").expect("front matter opens the file");
        let (header, _) = front.split_once("\n---").expect("front matter closes");
        assert!(header.lines().any(|line| line == "name: delegation"));
        assert!(header.lines().any(|line| line.starts_with("description: ") && line.len() > 40));
        let text = body(BUNDLED);
        assert!(text.starts_with("# Delegating to other agents"));
        for section in
            ["When delegation pays", "When it does not", "How to write a brief", "How to read what comes back"]
        {
            assert!(text.contains(section), "missing {section}");
        }
    }
}
