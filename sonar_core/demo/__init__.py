"""The bundled demo LLM dataset and its generator."""
