"""The auction service: runs the auctions tables delegate to it (A1-A3) and publishes their results."""
