//! The builder methods every agent kind shares (the fields of
//! [`AgentSpec`](super::AgentSpec)), written once for each builder.

/// Adds the shared setters to a builder with a `spec: AgentSpec` field.
macro_rules! agent_spec_setters {
    () => {
        /// The agent's name (other agents hand off to it by this name).
        pub fn name(mut self, name: impl Into<String>) -> Self {
            self.spec.name = name.into();
            self
        }

        /// What the agent does (other agents read it to decide on a handoff).
        pub fn description(mut self, description: impl Into<String>) -> Self {
            self.spec.description = description.into();
            self
        }

        /// Sent first, as a system message.
        pub fn system_prompt(mut self, system_prompt: impl Into<String>) -> Self {
            self.spec.system_prompt = Some(system_prompt.into());
            self
        }

        /// The tools it may call.
        pub fn tools(
            mut self,
            tools: impl IntoIterator<Item = std::sync::Arc<dyn ragloom_core::tools::Tool>>,
        ) -> Self {
            self.spec.tools.extend(tools);
            self
        }

        /// One more tool.
        pub fn tool(mut self, tool: std::sync::Arc<dyn ragloom_core::tools::Tool>) -> Self {
            self.spec.tools.push(tool);
            self
        }

        /// Finds more tools for each request.
        pub fn tool_retriever(mut self, retriever: std::sync::Arc<$crate::ToolRetriever>) -> Self {
            self.spec.tool_retriever = Some(retriever);
            self
        }

        /// The agents it may hand off to (default: all).
        pub fn can_handoff_to<S: Into<String>>(
            mut self,
            names: impl IntoIterator<Item = S>,
        ) -> Self {
            self.spec.can_handoff_to = Some(names.into_iter().map(Into::into).collect());
            self
        }

        /// The run's state when it starts, shown to the model with the state prompt.
        pub fn initial_state(mut self, state: serde_json::Map<String, serde_json::Value>) -> Self {
            self.spec.initial_state = state;
            self
        }

        /// How the state is shown: must contain `{state}` and `{msg}`.
        pub fn state_prompt(mut self, prompt: impl Into<String>) -> Self {
            self.spec.state_prompt = prompt.into();
            self
        }

        /// The final answer is also given as a `T` (LlamaIndex's `output_cls`),
        /// in [`AgentOutput::structured_response`](super::AgentOutput::structured_response).
        pub fn output_cls<T: schemars::JsonSchema>(self) -> Self {
            let schema = serde_json::to_value(schemars::schema_for!(T)).unwrap_or_default();
            self.output_schema(schema)
        }

        /// The final answer is also given matching this JSON schema.
        pub fn output_schema(mut self, schema: serde_json::Value) -> Self {
            self.spec.output_schema = Some(schema);
            self
        }

        /// Makes the structured answer from the run's messages; ignored
        /// when an output schema is set.
        pub fn structured_output_fn(
            mut self,
            f: impl Fn(
                &[ragloom_core::llms::ChatMessage],
            ) -> ragloom_core::Result<serde_json::Map<String, serde_json::Value>>
            + Send
            + Sync
            + 'static,
        ) -> Self {
            self.spec.structured_output_fn = Some(std::sync::Arc::new(f));
            self
        }

        /// Whether replies are streamed as `AgentStream` events (default: yes).
        pub fn streaming(mut self, streaming: bool) -> Self {
            self.spec.streaming = streaming;
            self
        }

        /// What a run does at its iteration limit (default: fail).
        pub fn early_stopping_method(mut self, method: super::EarlyStoppingMethod) -> Self {
            self.spec.early_stopping_method = method;
            self
        }
    };
}

pub(crate) use agent_spec_setters;
