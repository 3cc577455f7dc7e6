"""Scenario files of the refinement campaign: runs that reach handler branches the explorer reaches rarely."""
