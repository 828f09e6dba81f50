-- rocpd schema v3: one suffixed table per name. The C++ writer embeds this file at build time and
-- replaces {{uuid}} with the database suffix ('_' + guid, '-' -> '_') and {{guid}} with the guid.
-- {{guid_column}} is GENERATED ALWAYS AS ('<guid>') VIRTUAL: every row reads the database's guid,
-- as the contract says, but none stores it (36 bytes per row, a third of a kernel row). Readers
-- need SQLite >= 3.31 (2020). --guid-per-row (or an older SQLite in the writer) makes it
-- DEFAULT '<guid>', stored in every row as ROCm's own writer does.
-- {{nid_column}} and {{pid_column}} of the record tables are GENERATED ALWAYS AS (1) and (<pid>)
-- VIRTUAL the same way: a database holds one process of one node, so both are the same in every
-- row, and storing them cost 4-5 bytes per record. With a stored guid they are stored too (empty).
-- The start indexes (indexes.sql) are built when the writer closes the database.
-- Columns, their order and their meanings are the contract of /work/shared/docs/rocpd-schema.md.
-- No foreign keys: SQLite does not enforce them by default and a crashed writer must still leave a
-- readable file. Joins in views.sql match id AND guid instead.

CREATE TABLE IF NOT EXISTS "rocpd_metadata{{uuid}}" (
    "id" INTEGER PRIMARY KEY AUTOINCREMENT,
    "tag" TEXT NOT NULL,
    "value" TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS "rocpd_string{{uuid}}" (
    "id" INTEGER PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT {{guid_column}} NOT NULL,
    "string" TEXT NOT NULL UNIQUE ON CONFLICT ABORT
);

CREATE TABLE IF NOT EXISTS "rocpd_info_node{{uuid}}" (
    "id" INTEGER PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT {{guid_column}} NOT NULL,
    "hash" BIGINT NOT NULL UNIQUE,
    "machine_id" TEXT NOT NULL UNIQUE,
    "system_name" TEXT,
    "hostname" TEXT,
    "release" TEXT,
    "version" TEXT,
    "hardware_name" TEXT,
    "domain_name" TEXT
);

CREATE TABLE IF NOT EXISTS "rocpd_info_process{{uuid}}" (
    "id" INTEGER PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT {{guid_column}} NOT NULL,
    "nid" INTEGER NOT NULL,
    "ppid" INTEGER,
    "pid" INTEGER NOT NULL,
    "init" BIGINT,
    "fini" BIGINT,
    "start" BIGINT,
    "end" BIGINT,
    "command" TEXT,
    "environment" JSONB DEFAULT '{}' NOT NULL,
    "extdata" JSONB DEFAULT '{}' NOT NULL
);

CREATE TABLE IF NOT EXISTS "rocpd_info_thread{{uuid}}" (
    "id" INTEGER PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT {{guid_column}} NOT NULL,
    "nid" INTEGER NOT NULL,
    "ppid" INTEGER,
    "pid" INTEGER NOT NULL,
    "tid" INTEGER NOT NULL,
    "name" TEXT,
    "start" BIGINT,
    "end" BIGINT,
    "extdata" JSONB DEFAULT '{}' NOT NULL
);

CREATE TABLE IF NOT EXISTS "rocpd_info_agent{{uuid}}" (
    "id" INTEGER PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT {{guid_column}} NOT NULL,
    "nid" INTEGER NOT NULL,
    "pid" INTEGER NOT NULL,
    "type" TEXT CHECK ("type" IN ('CPU', 'GPU')),
    "absolute_index" INTEGER,
    "logical_index" INTEGER,
    "type_index" INTEGER,
    "uuid" INTEGER,
    "name" TEXT,
    "model_name" TEXT,
    "vendor_name" TEXT,
    "product_name" TEXT,
    "user_name" TEXT,
    "extdata" JSONB DEFAULT '{}' NOT NULL
);

CREATE TABLE IF NOT EXISTS "rocpd_info_queue{{uuid}}" (
    "id" INTEGER PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT {{guid_column}} NOT NULL,
    "nid" INTEGER NOT NULL,
    "pid" INTEGER NOT NULL,
    "name" TEXT,
    "extdata" JSONB DEFAULT '{}' NOT NULL
);

CREATE TABLE IF NOT EXISTS "rocpd_info_stream{{uuid}}" (
    "id" INTEGER PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT {{guid_column}} NOT NULL,
    "nid" INTEGER NOT NULL,
    "pid" INTEGER NOT NULL,
    "name" TEXT,
    "extdata" JSONB DEFAULT '{}' NOT NULL
);

CREATE TABLE IF NOT EXISTS "rocpd_info_pmc{{uuid}}" (
    "id" INTEGER PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT {{guid_column}} NOT NULL,
    "nid" INTEGER NOT NULL,
    "pid" INTEGER NOT NULL,
    "agent_id" INTEGER,
    "target_arch" TEXT CHECK ("target_arch" IN ('CPU', 'GPU')),
    "event_code" INTEGER,
    "instance_id" INTEGER,
    "name" TEXT NOT NULL,
    "symbol" TEXT NOT NULL,
    "description" TEXT,
    "long_description" TEXT DEFAULT '',
    "component" TEXT,
    "units" TEXT DEFAULT '',
    "value_type" TEXT CHECK ("value_type" IN ('ABS', 'ACCUM', 'RELATIVE')),
    "block" TEXT,
    "expression" TEXT,
    "is_constant" INTEGER,
    "is_derived" INTEGER,
    "extdata" JSONB DEFAULT '{}' NOT NULL
);

CREATE TABLE IF NOT EXISTS "rocpd_info_code_object{{uuid}}" (
    "id" INTEGER PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT {{guid_column}} NOT NULL,
    "nid" INTEGER NOT NULL,
    "pid" INTEGER NOT NULL,
    "agent_id" INTEGER,
    "uri" TEXT,
    "load_base" BIGINT,
    "load_size" BIGINT,
    "load_delta" BIGINT,
    "storage_type" TEXT CHECK ("storage_type" IN ('FILE', 'MEMORY')),
    "extdata" JSONB DEFAULT '{}' NOT NULL
);

CREATE TABLE IF NOT EXISTS "rocpd_info_kernel_symbol{{uuid}}" (
    "id" INTEGER PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT {{guid_column}} NOT NULL,
    "nid" INTEGER NOT NULL,
    "pid" INTEGER NOT NULL,
    "code_object_id" INTEGER NOT NULL,
    "kernel_name" TEXT,
    "display_name" TEXT,
    "kernel_object" INTEGER,
    "kernarg_segment_size" INTEGER,
    "kernarg_segment_alignment" INTEGER,
    "group_segment_size" INTEGER,
    "private_segment_size" INTEGER,
    "sgpr_count" INTEGER,
    "arch_vgpr_count" INTEGER,
    "accum_vgpr_count" INTEGER,
    "extdata" JSONB DEFAULT '{}' NOT NULL
);

CREATE TABLE IF NOT EXISTS "rocpd_track{{uuid}}" (
    "id" INTEGER PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT {{guid_column}} NOT NULL,
    "nid" INTEGER NOT NULL,
    "pid" INTEGER,
    "tid" INTEGER,
    "name_id" INTEGER,
    "extdata" JSONB DEFAULT '{}' NOT NULL
);

CREATE TABLE IF NOT EXISTS "rocpd_event{{uuid}}" (
    "id" INTEGER PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT {{guid_column}} NOT NULL,
    "category_id" INTEGER,
    "stack_id" INTEGER,
    "parent_stack_id" INTEGER,
    "correlation_id" INTEGER,
    "call_stack" JSONB DEFAULT '{}' NOT NULL,
    "line_info" JSONB DEFAULT '{}' NOT NULL,
    "extdata" JSONB DEFAULT '{}' NOT NULL
);

CREATE TABLE IF NOT EXISTS "rocpd_arg{{uuid}}" (
    "id" INTEGER PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT {{guid_column}} NOT NULL,
    "event_id" INTEGER NOT NULL,
    "position" INTEGER NOT NULL,
    "type" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "value" TEXT,
    "extdata" JSONB DEFAULT '{}' NOT NULL
);

CREATE TABLE IF NOT EXISTS "rocpd_pmc_event{{uuid}}" (
    "id" INTEGER PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT {{guid_column}} NOT NULL,
    "event_id" INTEGER,
    "pmc_id" INTEGER NOT NULL,
    "value" REAL DEFAULT 0.0,
    "extdata" JSONB DEFAULT '{}'
);

CREATE TABLE IF NOT EXISTS "rocpd_region{{uuid}}" (
    "id" INTEGER PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT {{guid_column}} NOT NULL,
    "nid" INTEGER {{nid_column}} NOT NULL,
    "pid" INTEGER {{pid_column}} NOT NULL,
    "tid" INTEGER NOT NULL,
    "start" BIGINT NOT NULL,
    "end" BIGINT NOT NULL,
    "name_id" INTEGER NOT NULL,
    "event_id" INTEGER,
    "extdata" JSONB DEFAULT '{}' NOT NULL
);

CREATE TABLE IF NOT EXISTS "rocpd_sample{{uuid}}" (
    "id" INTEGER PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT {{guid_column}} NOT NULL,
    "track_id" INTEGER NOT NULL,
    "timestamp" BIGINT NOT NULL,
    "event_id" INTEGER,
    "extdata" JSONB DEFAULT '{}' NOT NULL
);

CREATE TABLE IF NOT EXISTS "rocpd_kernel_dispatch{{uuid}}" (
    "id" INTEGER PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT {{guid_column}} NOT NULL,
    "nid" INTEGER {{nid_column}} NOT NULL,
    "pid" INTEGER {{pid_column}} NOT NULL,
    "tid" INTEGER,
    "agent_id" INTEGER NOT NULL,
    "kernel_id" INTEGER NOT NULL,
    "dispatch_id" INTEGER NOT NULL,
    "queue_id" INTEGER NOT NULL,
    "stream_id" INTEGER NOT NULL,
    "start" BIGINT NOT NULL,
    "end" BIGINT NOT NULL,
    "private_segment_size" INTEGER,
    "group_segment_size" INTEGER,
    "workgroup_size_x" INTEGER NOT NULL,
    "workgroup_size_y" INTEGER NOT NULL,
    "workgroup_size_z" INTEGER NOT NULL,
    "grid_size_x" INTEGER NOT NULL,
    "grid_size_y" INTEGER NOT NULL,
    "grid_size_z" INTEGER NOT NULL,
    "region_name_id" INTEGER,
    "event_id" INTEGER,
    "extdata" JSONB DEFAULT '{}' NOT NULL
);

CREATE TABLE IF NOT EXISTS "rocpd_memory_copy{{uuid}}" (
    "id" INTEGER PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT {{guid_column}} NOT NULL,
    "nid" INTEGER {{nid_column}} NOT NULL,
    "pid" INTEGER {{pid_column}} NOT NULL,
    "tid" INTEGER,
    "start" BIGINT NOT NULL,
    "end" BIGINT NOT NULL,
    "name_id" INTEGER NOT NULL,
    "dst_agent_id" INTEGER,
    "dst_address" INTEGER,
    "src_agent_id" INTEGER,
    "src_address" INTEGER,
    "size" INTEGER NOT NULL,
    "queue_id" INTEGER,
    "stream_id" INTEGER,
    "region_name_id" INTEGER,
    "event_id" INTEGER,
    "extdata" JSONB DEFAULT '{}' NOT NULL
);

CREATE TABLE IF NOT EXISTS "rocpd_memory_allocate{{uuid}}" (
    "id" INTEGER PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT {{guid_column}} NOT NULL,
    "nid" INTEGER {{nid_column}} NOT NULL,
    "pid" INTEGER {{pid_column}} NOT NULL,
    "tid" INTEGER,
    "agent_id" INTEGER,
    "type" TEXT CHECK ("type" IN ('ALLOC', 'FREE', 'REALLOC', 'RECLAIM')),
    "level" TEXT CHECK ("level" IN ('REAL', 'VIRTUAL', 'SCRATCH')),
    "start" BIGINT NOT NULL,
    "end" BIGINT NOT NULL,
    "address" INTEGER,
    "size" INTEGER NOT NULL,
    "queue_id" INTEGER,
    "stream_id" INTEGER,
    "event_id" INTEGER,
    "extdata" JSONB DEFAULT '{}' NOT NULL
);

-- PC sampling (not in ROCm's schema v3, whose rocprofv3 writes PC samples to CSV/JSON only):
-- one row per instruction, stall reason and collection window, with how many samples landed
-- there (NVIDIA reports counts per PC and stall reason, an AMD host-trap/stochastic sample is a
-- row with count 1). Column names follow rocprofv3's pc_sampling CSV where it has one
-- (Dispatch_Id, Correlation_Id, Instruction, Instruction_Comment, Stall_Reason).
-- docs/pc-sampling-schema.md describes every column.
CREATE TABLE IF NOT EXISTS "rocpd_pc_sample{{uuid}}" (
    "id" INTEGER PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT {{guid_column}} NOT NULL,
    "nid" INTEGER {{nid_column}} NOT NULL,
    "pid" INTEGER {{pid_column}} NOT NULL,
    "agent_id" INTEGER,
    "correlation_id" INTEGER,
    "dispatch_id" INTEGER,
    "start" BIGINT NOT NULL,
    "end" BIGINT NOT NULL,
    "kernel_name_id" INTEGER NOT NULL,
    "code_object" INTEGER,
    "function_index" INTEGER,
    "pc_offset" INTEGER NOT NULL,
    "instruction_id" INTEGER,
    "source_file_id" INTEGER,
    "line" INTEGER,
    "stall_reason_id" INTEGER,
    "not_issued" INTEGER NOT NULL DEFAULT 0,
    "count" INTEGER NOT NULL,
    "event_id" INTEGER,
    "extdata" JSONB DEFAULT '{}' NOT NULL
);
