"""The turn loop, conversations, prompt building and speakable text."""
