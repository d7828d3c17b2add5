"""Spec loading: YAML files read safely, checked, located and turned into a `Catalog`."""
