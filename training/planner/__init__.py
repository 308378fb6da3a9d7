"""The ask's model planner: its corpus (questions → readings) and the narrator adapter's continued training on it."""
