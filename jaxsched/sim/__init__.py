"""Device-side simulator (pure JAX).

Importing this package turns on JAX's 64-bit mode (``jax_enable_x64``): the reference's
priority keys and times need float64/int64 (spec §4). Networks pick float32 explicitly.
"""

import jax

jax.config.update("jax_enable_x64", True)
