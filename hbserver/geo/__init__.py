"""Geo lookup: ``device.geo`` from the IP address in a local MaxMind database (:mod:`hbserver.geo.lookup`)."""
