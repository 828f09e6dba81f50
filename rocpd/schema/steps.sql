-- Bounded runs (rocprof run --max-size): one row per step for EVERY step of the run, written as
-- each step is decided, whether its records are kept or only summarised (docs/long-runs.md).
-- Project tables, not rocpd's: created only in a bounded run's database, suffixed like rocpd's
-- and read through the plain views below. Times are ns on the records' clock (CLOCK_BOOTTIME).
-- A step's span for its records is [start, the next step's start): GPU work that finishes after
-- its range has ended still counts for it.

CREATE TABLE IF NOT EXISTS "rocprof_step_summary{{uuid}}" (
    "step" INTEGER PRIMARY KEY,          -- 0, 1, ...: the step ranges in start order
    "name_id" INTEGER NOT NULL,          -- rocpd_string: the step range's message
    "tid" INTEGER NOT NULL,
    "start" INTEGER NOT NULL,
    "end" INTEGER NOT NULL,
    "kernels" INTEGER NOT NULL,
    "kernel_ns" INTEGER NOT NULL,        -- summed kernel durations
    "gpu_busy_ns" INTEGER NOT NULL,      -- union of kernel and copy intervals
    "copies" INTEGER NOT NULL,
    "copy_bytes" INTEGER NOT NULL,
    "pageable_copies" INTEGER NOT NULL,  -- copies to or from pageable host memory
    "syncs" INTEGER NOT NULL,            -- API calls that wait for the GPU (*Synchronize*)
    "api_calls" INTEGER NOT NULL,        -- regions other than ROCTx ranges
    "records" INTEGER NOT NULL,          -- records of the step (kept or not)
    "detail" INTEGER NOT NULL,           -- 1: every record of the step is in the trace tables
    "causes" TEXT,                       -- why it was kept or stood out (NULL: a typical step)
    "energy_j" REAL,                     -- GPU energy over [start, end], every GPU (NULL: no --energy)
    "mem_alloc_bytes" INTEGER,           -- device memory allocated during the step, and the most
    "mem_peak_bytes" INTEGER             -- live at once: the caching allocator's blocks where it
                                         -- reports them, else the runtime's allocations (NULL:
                                         -- no memory trace)
);

CREATE TABLE IF NOT EXISTS "rocprof_step_kernels{{uuid}}" (
    "step" INTEGER NOT NULL,
    "name_id" INTEGER NOT NULL,          -- rocpd_string: the kernel's name
    "calls" INTEGER NOT NULL,
    "total_ns" INTEGER NOT NULL,
    "max_ns" INTEGER NOT NULL
);

-- The step's top launch lines by kernel time (at most 3): site_id is the rocpd_event id of the
-- call site's node (its call_stack holds the frames), as a kept kernel's event points at it.
CREATE TABLE IF NOT EXISTS "rocprof_step_lines{{uuid}}" (
    "step" INTEGER NOT NULL,
    "site_id" INTEGER NOT NULL,
    "kernels" INTEGER NOT NULL,
    "kernel_ns" INTEGER NOT NULL
);

CREATE VIEW IF NOT EXISTS "rocprof_step_summary" AS SELECT * FROM "rocprof_step_summary{{uuid}}";
CREATE VIEW IF NOT EXISTS "rocprof_step_kernels" AS SELECT * FROM "rocprof_step_kernels{{uuid}}";
CREATE VIEW IF NOT EXISTS "rocprof_step_lines" AS SELECT * FROM "rocprof_step_lines{{uuid}}";
