-- Seat tokens are signed (servicekit.auth) and verified without a lookup: the seats table goes.
DROP TABLE IF EXISTS seats;
