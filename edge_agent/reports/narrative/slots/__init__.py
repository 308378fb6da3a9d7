"""A section's sentence slots, one module per kind of section: what the reference writer says about it, in which
order, with which fallbacks. Each slot is a list of candidate wordings, richest first; `reference` keeps the first that
passes the checks."""
