"""Ranking (spec §7): cue and facets, temporal cues, scoring and fusion, paging."""

POLICY_VERSION = "slowave-hybrid-v1"
