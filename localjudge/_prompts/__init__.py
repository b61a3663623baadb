"""What a judge is shown and what it must answer: messages, templates, the score schema, the answer's parsing."""
