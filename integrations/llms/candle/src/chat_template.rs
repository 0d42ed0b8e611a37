//! Chat templates: the Jinja template a GGUF file stores under
//! `tokenizer.chat_template`, rendered with minijinja as Hugging Face's `apply_chat_template` does.

use minijinja::{Environment, ErrorKind, context};
use ragloom_core::llms::ChatMessage;
use ragloom_core::{Error, Result};
use serde::Serialize;

/// ChatML, the format used when a model file carries no chat template.
pub const CHATML_TEMPLATE: &str = "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

/// A Jinja chat template with the special tokens it may refer to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChatTemplate {
    source: String,
    bos_token: String,
    eos_token: String,
}

#[derive(Serialize)]
struct TemplateMessage<'a> {
    role: &'a str,
    content: &'a str,
}

impl ChatTemplate {
    /// A template from its Jinja source; fails when the source does not parse.
    pub fn new(
        source: impl Into<String>,
        bos_token: impl Into<String>,
        eos_token: impl Into<String>,
    ) -> Result<Self> {
        let template = Self {
            source: source.into(),
            bos_token: bos_token.into(),
            eos_token: eos_token.into(),
        };
        // Parse now so a broken template is reported at load time, not at the first chat.
        environment()
            .template_from_str(&template.source)
            .map_err(|e| template_error("parsing", e))?;
        Ok(template)
    }

    /// ChatML ([`CHATML_TEMPLATE`]).
    pub fn chatml(bos_token: impl Into<String>, eos_token: impl Into<String>) -> Self {
        Self {
            source: CHATML_TEMPLATE.to_owned(),
            bos_token: bos_token.into(),
            eos_token: eos_token.into(),
        }
    }

    /// The Jinja source.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The prompt for `messages`: the template receives `messages` (each with
    /// `role` and `content`), `add_generation_prompt`, `bos_token` and `eos_token`.
    pub fn render(&self, messages: &[ChatMessage], add_generation_prompt: bool) -> Result<String> {
        let messages: Vec<TemplateMessage<'_>> = messages
            .iter()
            .map(|m| TemplateMessage {
                role: m.role.as_str(),
                content: m.content_str(),
            })
            .collect();
        environment()
            .render_str(
                &self.source,
                context! {
                    messages => messages,
                    add_generation_prompt => add_generation_prompt,
                    bos_token => &self.bos_token,
                    eos_token => &self.eos_token,
                },
            )
            .map_err(|e| template_error("rendering", e))
    }
}

/// The environment Hugging Face renders templates in: blocks trimmed as
/// jinja2's `trim_blocks`/`lstrip_blocks`, Python string methods, `raise_exception`.
fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_trim_blocks(true);
    env.set_lstrip_blocks(true);
    env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
    env.add_function(
        "raise_exception",
        |message: String| -> std::result::Result<String, minijinja::Error> {
            Err(minijinja::Error::new(ErrorKind::InvalidOperation, message))
        },
    );
    env
}

fn template_error(doing: &str, e: minijinja::Error) -> Error {
    Error::provider(
        crate::PROVIDER,
        format!("{doing} the chat template: {e}"),
        e,
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// SmolLM2-Instruct's template, as stored in its GGUF file.
    const SMOLLM2: &str = "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";

    #[test]
    fn smollm2_template_renders_as_transformers() {
        let t = ChatTemplate::new(SMOLLM2, "<|im_start|>", "<|im_end|>").unwrap();
        let prompt = t
            .render(
                &[
                    ChatMessage::user("Hi"),
                    ChatMessage::assistant("Hello!"),
                    ChatMessage::user("Bye"),
                ],
                true,
            )
            .unwrap();
        assert_eq!(
            prompt,
            "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n\
             <|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nHello!<|im_end|>\n\
             <|im_start|>user\nBye<|im_end|>\n<|im_start|>assistant\n"
        );
        let with_system = t
            .render(
                &[ChatMessage::system("Be brief."), ChatMessage::user("Hi")],
                false,
            )
            .unwrap();
        assert_eq!(
            with_system,
            "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
        );
    }

    #[test]
    fn special_tokens_python_methods_and_block_trimming() {
        // Llama-3 style: bos_token, .strip(), a raise_exception branch, and
        // statement lines that jinja2's trim_blocks/lstrip_blocks remove.
        let source = "{{ bos_token }}\n{% for m in messages %}\n    {% if m['role'] == 'tool' %}\n{{ raise_exception('no tools') }}\n    {% endif %}\n<|start_header_id|>{{ m['role'] }}<|end_header_id|>\n\n{{ m['content'] | trim }}<|eot_id|>\n{% endfor %}\n{% if add_generation_prompt %}<|start_header_id|>assistant<|end_header_id|>\n\n{% endif %}";
        let t = ChatTemplate::new(source, "<|begin_of_text|>", "<|eot_id|>").unwrap();
        let prompt = t.render(&[ChatMessage::user("  Hi \n")], true).unwrap();
        assert_eq!(
            prompt,
            "<|begin_of_text|>\n<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>\n<|start_header_id|>assistant<|end_header_id|>\n\n"
        );
        let py = ChatTemplate::new("{{ messages[0]['content'].strip().upper() }}", "", "").unwrap();
        assert_eq!(py.render(&[ChatMessage::user(" x ")], false).unwrap(), "X");
        let err = t
            .render(&[ChatMessage::tool_result("1", "f", "out")], true)
            .unwrap_err();
        assert!(err.to_string().contains("no tools"), "{err}");
    }

    #[test]
    fn chatml_fallback_and_broken_templates() {
        let t = ChatTemplate::chatml("", "<|im_end|>");
        assert_eq!(
            t.render(&[ChatMessage::user("Hi")], true).unwrap(),
            "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
        );
        let err = ChatTemplate::new("{% for m in messages %}", "", "").unwrap_err();
        assert!(err.to_string().contains("chat template"), "{err}");
    }
}
