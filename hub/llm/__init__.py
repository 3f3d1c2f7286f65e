"""Model engines: the engine protocol, llama-cpp-python, chat formats and stream parsing."""
