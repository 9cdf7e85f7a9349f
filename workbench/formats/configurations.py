"""Which configurations of a benchmark are compared: apart from artifacts.py, so a
report reads them without the artifact formats (their sniffers, the dialect)."""

# (new, baseline) configuration pairs of a benchmark: delta is new minus baseline,
# whatever the names sort as. The first pair present decides.
CONFIGURATION_PAIRS = (("with_skill", "without_skill"), ("with_skill", "old_skill"), ("new_skill", "old_skill"))
