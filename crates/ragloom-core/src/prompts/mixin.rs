//! `get_prompts` / `update_prompts` on every component that owns prompts,
//! keyed as LlamaIndex keys them (`response_synthesizer:text_qa_template`).

use super::base::BasePromptTemplate;
use crate::error::Result;
use std::collections::BTreeMap;

/// Prompts by name.
pub type PromptDictType = BTreeMap<String, BasePromptTemplate>;

/// A component that owns prompts, possibly through sub-components.
pub trait PromptMixin {
    /// This component's own prompts.
    fn own_prompts(&self) -> PromptDictType;

    /// Sub-components that own prompts, by name (their keys get `name:` prefixed).
    fn prompt_modules(&self) -> Vec<(&'static str, &dyn PromptMixin)> {
        Vec::new()
    }

    /// Replaces own prompts by name; unknown names are ignored, as in LlamaIndex.
    fn update_own_prompts(&mut self, prompts: &PromptDictType) -> Result<()>;

    /// Mutable access to a named sub-component, for routing nested updates.
    fn prompt_module_mut(&mut self, _name: &str) -> Option<&mut dyn PromptMixin> {
        None
    }

    /// Every prompt, own and nested (`module:name`).
    fn get_prompts(&self) -> PromptDictType {
        let mut all = self.own_prompts();
        for (module, m) in self.prompt_modules() {
            for (k, v) in m.get_prompts() {
                all.insert(format!("{module}:{k}"), v);
            }
        }
        all
    }

    /// Updates prompts, own and nested (`module:name` keys go to that module).
    fn update_prompts(&mut self, prompts: &PromptDictType) -> Result<()> {
        let mut own = PromptDictType::new();
        let mut nested: BTreeMap<String, PromptDictType> = BTreeMap::new();
        for (k, v) in prompts {
            match k.split_once(':') {
                Some((module, rest)) => {
                    nested
                        .entry(module.to_string())
                        .or_default()
                        .insert(rest.to_string(), v.clone());
                }
                None => {
                    own.insert(k.clone(), v.clone());
                }
            }
        }
        self.update_own_prompts(&own)?;
        for (module, sub) in nested {
            let known = self
                .prompt_modules()
                .iter()
                .any(|(name, _)| *name == module);
            match self.prompt_module_mut(&module) {
                Some(m) => m.update_prompts(&sub)?,
                // Silently keeping the old prompt would surprise: say why it cannot change.
                None if known => {
                    return Err(crate::Error::InvalidInput(format!(
                        "cannot update the prompts of `{module}`: it is shared (held in more than one \
                         place); update it before sharing it"
                    )));
                }
                None => {}
            }
        }
        Ok(())
    }
}

/// `PromptMixin` for a component with no prompts of its own whose prompts
/// are its `Arc` fields', each under a module name (LlamaIndex's
/// `_get_prompt_modules`); a module is updated while the component is its
/// only owner.
macro_rules! delegate_prompts {
    ($ty:ty { $($name:literal => $field:ident),+ $(,)? }) => {
        impl $crate::prompts::PromptMixin for $ty {
            fn own_prompts(&self) -> $crate::prompts::PromptDictType {
                $crate::prompts::PromptDictType::new()
            }

            fn prompt_modules(&self) -> Vec<(&'static str, &dyn $crate::prompts::PromptMixin)> {
                vec![$(($name, self.$field.as_ref() as &dyn $crate::prompts::PromptMixin)),+]
            }

            fn update_own_prompts(
                &mut self,
                _prompts: &$crate::prompts::PromptDictType,
            ) -> $crate::Result<()> {
                Ok(())
            }

            fn prompt_module_mut(
                &mut self,
                name: &str,
            ) -> Option<&mut dyn $crate::prompts::PromptMixin> {
                match name {
                    $($name => std::sync::Arc::get_mut(&mut self.$field)
                        .map(|m| m as &mut dyn $crate::prompts::PromptMixin),)+
                    _ => None,
                }
            }
        }
    };
}
pub(crate) use delegate_prompts;

/// `PromptMixin` for a component whose prompts are its own fields, each
/// `"key" => field ["var", ...]`: an update must keep those variables.
/// `own_prompts!(T {})`: a component that exposes none.
macro_rules! own_prompts {
    ($ty:ty {}) => {
        impl $crate::prompts::PromptMixin for $ty {
            fn own_prompts(&self) -> $crate::prompts::PromptDictType {
                $crate::prompts::PromptDictType::new()
            }

            fn update_own_prompts(
                &mut self,
                _prompts: &$crate::prompts::PromptDictType,
            ) -> $crate::Result<()> {
                Ok(())
            }
        }
    };
    ($ty:ty { $($name:literal => $field:ident [$($var:literal),* $(,)?]),+ $(,)? }) => {
        impl $crate::prompts::PromptMixin for $ty {
            fn own_prompts(&self) -> $crate::prompts::PromptDictType {
                $crate::prompts::PromptDictType::from([
                    $(($name.to_owned(), self.$field.clone())),+
                ])
            }

            fn update_own_prompts(
                &mut self,
                prompts: &$crate::prompts::PromptDictType,
            ) -> $crate::Result<()> {
                $(
                    if let Some(p) = prompts.get($name) {
                        p.require_vars(&[$($var),*])?;
                        self.$field = p.clone();
                    }
                )+
                Ok(())
            }
        }
    };
}
pub(crate) use own_prompts;
