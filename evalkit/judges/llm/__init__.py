"""The provider-neutral LLM judge: prompts, verdict, runner, and one transport per provider."""
