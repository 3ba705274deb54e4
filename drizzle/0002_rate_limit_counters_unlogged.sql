-- Rate-limit counters live for a minute or a day and are worth nothing after a crash: an unlogged
-- table writes no WAL, so a counter update commits without waiting for a disk flush.
ALTER TABLE "rate_limit_counters" SET UNLOGGED;
