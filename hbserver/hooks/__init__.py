"""PBS-Go's hooks framework: execution plans per endpoint and stage, run by a per-request executor
that applies the hooks' mutations and rejections and reports their outcomes (``ext.prebid.modules``).
The module API is :mod:`hbserver.hooks.api`; the modules themselves live in :mod:`hbserver.modules`."""
