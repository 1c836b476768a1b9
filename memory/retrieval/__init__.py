"""Ranking (spec §7): cue and facets, candidates, signals under one policy, order, paging."""
