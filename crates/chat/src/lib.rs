//! OpenAI chat-completions wire types.
