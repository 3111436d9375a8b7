-- T2: the traded squares that were mortgaged when the proposal was made. The table refuses the
-- agreed trade if any of them was lifted, or another traded square mortgaged, since. NULL: a
-- proposal made before this was recorded (the table then checks only the terms' legality).
ALTER TABLE trades ADD COLUMN mortgaged_squares integer[];
