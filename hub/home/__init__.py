"""Entities, their resolution, the home tools and policy, and the understanding layer."""
