"""Reading a question without I/O: small talk, exclusions, ambiguity among passages, translation."""
