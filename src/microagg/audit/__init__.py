"""Audit a release made elsewhere: :mod:`.check` (the k, l and t a published file
achieves) and :mod:`.assess` (a Release rebuilt from the original and the
published file)."""
