"""Reserve's arithmetic: whether a decision still fits on clusters where other passes reserved after it read them
(the room now, the room less what was taken since)."""
