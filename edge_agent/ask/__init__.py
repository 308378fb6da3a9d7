"""Ask the plant: a question about plant data in es/en/pt gets a grounded, audited answer.

`tools` holds the read-only tools (typed inputs and outputs, figures computed in code from the stored records they
cite, within a budget); `plan` the JSON-schema'd plan of tool calls a planner produces. The package sits above the
reports' faces and reads only the store, the config and those faces; nothing in it writes to the plant or the
store.
"""
