"""EMX Digital: served by PBS-Go's cadent_aperture_mx adapter (its builder is registered under this code too)."""

from hbserver.adapters.cadent_aperture_mx import build  # noqa: F401
