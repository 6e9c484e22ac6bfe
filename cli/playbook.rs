//! `fabricdoctor playbook list|show NAME`: the triage playbooks as runbooks.

use anyhow::bail;
use fabricdoctor_playbooks::{Playbook, FACTS};

use crate::args::PlaybookCommand;
use crate::{exit, output};

pub fn run(command: PlaybookCommand) -> anyhow::Result<i32> {
    match command {
        PlaybookCommand::List { playbook_dir } => {
            let playbooks = Playbook::load(playbook_dir.as_deref())?;
            let mut text = String::new();
            for playbook in &playbooks {
                let ids: Vec<&str> = playbook.rules.iter().map(|r| r.id.as_str()).collect();
                text.push_str(&format!(
                    "{:<12} {}\n{:<12} rules: {}\n",
                    playbook.name,
                    playbook.title,
                    "",
                    ids.join(", ")
                ));
            }
            text.push_str("\nfacts rules can match (name: attributes — produced from):\n");
            for (name, attrs, source) in FACTS {
                text.push_str(&format!("  {name}: {attrs} — {source}\n"));
            }
            output::emit(&text)?;
        }
        PlaybookCommand::Show { name, playbook_dir } => {
            let playbooks = Playbook::load(playbook_dir.as_deref())?;
            let Some(playbook) = playbooks.iter().find(|p| p.name == name) else {
                let names: Vec<&str> = playbooks.iter().map(|p| p.name.as_str()).collect();
                bail!("no playbook named {name:?}; known: {}", names.join(", "));
            };
            output::emit(&playbook.render_runbook())?;
        }
    }
    Ok(exit::SUCCESS)
}
