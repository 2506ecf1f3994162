"""The shared base of every layer: input checks and parameter constraints, per-group
sums, the scalings of the distances, column names as a table spells them, and what
makes a column look like a direct identifier."""
