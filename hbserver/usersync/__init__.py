"""User-ID syncing: the uids cookie, sync URL templates, the bidder chooser."""
