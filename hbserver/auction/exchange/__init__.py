"""The bidder request stage and the calls: privacy read and enforced per bidder (privacy), each
bidder's request (split, with first-party data: fpd; media types it serves: capabilities), the calls
sent and the answers read within the deadline (fanout), and AMP call plans that splice a page's
values into calls built once (callplan)."""
