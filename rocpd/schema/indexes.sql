-- Time-ordered reads (timelines, time windows, exports) are what analysis does most, so one index per
-- timed table keeps them off full scans. Built once at close, in one sorted pass, instead of one
-- b-tree insert per row while recording: the writer's drain thread is spared that per record, and
-- the pages come out full. A killed run's database has none (readers work without them, slower).
-- There are deliberately no others. Names carry the suffix so merged files never collide.
CREATE INDEX IF NOT EXISTS "rocpd_region_start{{uuid}}" ON "rocpd_region{{uuid}}" ("start");
CREATE INDEX IF NOT EXISTS "rocpd_kernel_dispatch_start{{uuid}}" ON "rocpd_kernel_dispatch{{uuid}}" ("start");
CREATE INDEX IF NOT EXISTS "rocpd_memory_copy_start{{uuid}}" ON "rocpd_memory_copy{{uuid}}" ("start");
CREATE INDEX IF NOT EXISTS "rocpd_sample_timestamp{{uuid}}" ON "rocpd_sample{{uuid}}" ("timestamp");
