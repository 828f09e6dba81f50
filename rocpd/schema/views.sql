-- Human-readable and summary views of rocpd schema v3, written only against the plain rocpd_<name>
-- views, so the same text works inside one database (writer) and as TEMP views over the UNION ALL
-- views of several attached databases (reader). Column names and order are the ones ROCm's tools read.
-- Joins to info/string rows are LEFT JOINs where a missing row (a writer killed mid-run, an optional
-- id) must not hide the timed record itself, and every join matches id AND guid.

-- As ROCm's views: a region is named by its rocpd_string name, so a ROCTx range by its API
-- function (roctxRangePushA ...), the message staying in the event's extdata (readers that show
-- ROCTx by message use rocpd._schema.region_name_sql). A sample is named by its track, and as in
-- ROCm's view only a sample on a known thread of a known process is one (metric_samples below).
CREATE VIEW IF NOT EXISTS "regions" AS
SELECT
    R.id, R.guid, C.string AS category,
    S.string AS name, R.nid,
    COALESCE(P.pid, R.pid) AS pid, COALESCE(T.tid, R.tid) AS tid,
    R.start, R."end", (R."end" - R.start) AS duration, R.event_id,
    E.stack_id, E.parent_stack_id, E.correlation_id AS corr_id,
    -- A launch site is stored once (rocpd._schema.call_stack_sql/line_info_sql: the same SQL
    -- and its layout): call_stack holds {"site": id}. Shown here as the frames and their first
    -- frame, as ROCm's columns read.
    E.extdata, CASE WHEN E.call_stack LIKE '{"site":%' THEN COALESCE(
        (SELECT substr(SN.call_stack, 1, length(SN.call_stack) - 1) || COALESCE(',' || substr((SELECT
                SO.call_stack FROM rocpd_event SO WHERE SO.id = SN.parent_stack_id AND SO.guid = SN.guid), 2), ']')
         FROM rocpd_event SN JOIN rocpd_string SC ON SC.id = SN.category_id AND SC.guid = SN.guid
              AND SC.string = 'PYTHON_LAUNCH_SITE' WHERE SN.id = json_extract(E.call_stack, '$.site') AND SN.guid = E.guid),
        (SELECT CS.string FROM rocpd_string CS WHERE CS.id = json_extract(E.call_stack, '$.site') AND CS.guid = E.guid))
         ELSE E.call_stack END AS call_stack,
    CASE WHEN E.call_stack LIKE '{"site":%' THEN COALESCE(
        (SELECT substr(SN.call_stack, 2, length(SN.call_stack) - 2)
         FROM rocpd_event SN JOIN rocpd_string SC ON SC.id = SN.category_id AND SC.guid = SN.guid
              AND SC.string = 'PYTHON_LAUNCH_SITE' WHERE SN.id = json_extract(E.call_stack, '$.site') AND SN.guid = E.guid),
        (SELECT json_extract(CS.string, '$[0]') FROM rocpd_string CS WHERE CS.id = json_extract(E.call_stack, '$.site') AND CS.guid = E.guid))
         ELSE E.line_info END AS line_info
FROM "rocpd_region" R
LEFT JOIN "rocpd_event" E ON E.id = R.event_id AND E.guid = R.guid
LEFT JOIN "rocpd_string" C ON C.id = E.category_id AND C.guid = E.guid
LEFT JOIN "rocpd_string" S ON S.id = R.name_id AND S.guid = R.guid
LEFT JOIN "rocpd_info_process" P ON P.id = R.pid AND P.guid = R.guid
LEFT JOIN "rocpd_info_thread" T ON T.id = R.tid AND T.guid = R.guid;

CREATE VIEW IF NOT EXISTS "region_args" AS
SELECT R.id, R.guid, R.nid, COALESCE(P.pid, R.pid) AS pid, A.type, A.name, A.value
FROM "rocpd_region" R
INNER JOIN "rocpd_arg" A ON A.event_id = R.event_id AND A.guid = R.guid
LEFT JOIN "rocpd_info_process" P ON P.id = R.pid AND P.guid = R.guid;

CREATE VIEW IF NOT EXISTS "samples" AS
SELECT
    SA.id, SA.guid, C.string AS category,
    N.string AS name, TR.nid,
    P.pid, TH.tid,
    SA.timestamp, SA.event_id, E.stack_id, E.parent_stack_id, E.correlation_id AS corr_id,
    E.extdata, CASE WHEN E.call_stack LIKE '{"site":%' THEN COALESCE(
        (SELECT substr(SN.call_stack, 1, length(SN.call_stack) - 1) || COALESCE(',' || substr((SELECT
                SO.call_stack FROM rocpd_event SO WHERE SO.id = SN.parent_stack_id AND SO.guid = SN.guid), 2), ']')
         FROM rocpd_event SN JOIN rocpd_string SC ON SC.id = SN.category_id AND SC.guid = SN.guid
              AND SC.string = 'PYTHON_LAUNCH_SITE' WHERE SN.id = json_extract(E.call_stack, '$.site') AND SN.guid = E.guid),
        (SELECT CS.string FROM rocpd_string CS WHERE CS.id = json_extract(E.call_stack, '$.site') AND CS.guid = E.guid))
         ELSE E.call_stack END AS call_stack,
    CASE WHEN E.call_stack LIKE '{"site":%' THEN COALESCE(
        (SELECT substr(SN.call_stack, 2, length(SN.call_stack) - 2)
         FROM rocpd_event SN JOIN rocpd_string SC ON SC.id = SN.category_id AND SC.guid = SN.guid
              AND SC.string = 'PYTHON_LAUNCH_SITE' WHERE SN.id = json_extract(E.call_stack, '$.site') AND SN.guid = E.guid),
        (SELECT json_extract(CS.string, '$[0]') FROM rocpd_string CS WHERE CS.id = json_extract(E.call_stack, '$.site') AND CS.guid = E.guid))
         ELSE E.line_info END AS line_info
FROM "rocpd_sample" SA
INNER JOIN "rocpd_track" TR ON TR.id = SA.track_id AND TR.guid = SA.guid
INNER JOIN "rocpd_event" E ON E.id = SA.event_id AND E.guid = SA.guid
LEFT JOIN "rocpd_string" C ON C.id = E.category_id AND C.guid = E.guid
LEFT JOIN "rocpd_string" N ON N.id = TR.name_id AND N.guid = TR.guid
INNER JOIN "rocpd_info_process" P ON P.id = TR.pid AND P.guid = TR.guid
INNER JOIN "rocpd_info_thread" TH ON TH.id = TR.tid AND TH.guid = TR.guid;

-- Sampled counters over time (device and host metrics, --process-freq, rocprofiler-systems'
-- samples): one row per value. Their tracks name no thread, so ROCm's samples view (and ours
-- above) leaves them out, and they are read here. Older rocprof-sys versions put all counters of one
-- reading on one event: a value belongs to the sample whose track is named after its counter
-- (the counter's name, or the name and " [device]").
CREATE VIEW IF NOT EXISTS "metric_samples" AS
SELECT
    SA.id, SA.guid, C.string AS category, TN.string AS track, TR.nid,
    COALESCE(TR.pid, I.pid) AS pid, TR.tid, SA.timestamp, SA.event_id, PE.pmc_id, PE.value,
    I.name AS metric, I.symbol, I.units, I.description, I.agent_id, A.type AS agent_type,
    A.absolute_index AS agent_abs_index
FROM "rocpd_pmc_event" PE
INNER JOIN "rocpd_sample" SA ON SA.event_id = PE.event_id AND SA.guid = PE.guid
INNER JOIN "rocpd_info_pmc" I ON I.id = PE.pmc_id AND I.guid = PE.guid
LEFT JOIN "rocpd_track" TR ON TR.id = SA.track_id AND TR.guid = SA.guid
LEFT JOIN "rocpd_string" TN ON TN.id = TR.name_id AND TN.guid = TR.guid
LEFT JOIN "rocpd_event" E ON E.id = PE.event_id AND E.guid = PE.guid
LEFT JOIN "rocpd_string" C ON C.id = E.category_id AND C.guid = E.guid
LEFT JOIN "rocpd_info_agent" A ON A.id = I.agent_id AND A.guid = I.guid
WHERE TN.string IS NULL OR TN.string = I.name OR TN.string LIKE I.name || ' [%'
   OR (SELECT COUNT(*) FROM "rocpd_pmc_event" P2 WHERE P2.event_id = PE.event_id
       AND P2.guid = PE.guid) = 1;

-- Samples shaped like regions (zero duration) so both can be read as one timeline (the end
-- column is spelled END, as in ROCm's view).
CREATE VIEW IF NOT EXISTS "sample_regions" AS
SELECT
    id, guid, category, name, nid, pid, tid, timestamp AS start, timestamp AS "END",
    0 AS duration, event_id, stack_id, parent_stack_id, corr_id, extdata, call_stack, line_info
FROM "samples";

CREATE VIEW IF NOT EXISTS "regions_and_samples" AS
SELECT * FROM "regions"
UNION ALL
SELECT * FROM "sample_regions";

CREATE VIEW IF NOT EXISTS "kernels" AS
SELECT
    K.id, K.guid, COALESCE(T.tid, K.tid) AS tid, C.string AS category, RN.string AS region,
    COALESCE(S.display_name, S.kernel_name) AS name, K.nid, COALESCE(P.pid, K.pid) AS pid,
    A.absolute_index AS agent_abs_index, A.logical_index AS agent_log_index,
    A.type_index AS agent_type_index, A.type AS agent_type, S.code_object_id,
    K.kernel_id, K.dispatch_id, K.stream_id, K.queue_id, Q.name AS queue, ST.name AS stream,
    K.start, K."end", (K."end" - K.start) AS duration,
    K.grid_size_x AS grid_x, K.grid_size_y AS grid_y, K.grid_size_z AS grid_z,
    K.workgroup_size_x AS workgroup_x, K.workgroup_size_y AS workgroup_y,
    K.workgroup_size_z AS workgroup_z,
    K.group_segment_size AS lds_size, K.private_segment_size AS scratch_size,
    S.arch_vgpr_count AS vgpr_count, S.accum_vgpr_count, S.sgpr_count,
    S.group_segment_size AS static_lds_size, S.private_segment_size AS static_scratch_size,
    E.stack_id, E.parent_stack_id, E.correlation_id AS corr_id,
    -- Ours, after ROCm's columns: the innermost ROCTx range around the launch. The event's
    -- parent_stack_id is that range's correlation id, which is its rocpd_region id.
    CASE WHEN json_valid(RE.extdata) THEN NULLIF(json_extract(RE.extdata, '$.message'), '') END
        AS roctx_range
FROM "rocpd_kernel_dispatch" K
LEFT JOIN "rocpd_info_agent" A ON A.id = K.agent_id AND A.guid = K.guid
LEFT JOIN "rocpd_event" E ON E.id = K.event_id AND E.guid = K.guid
LEFT JOIN "rocpd_string" C ON C.id = E.category_id AND C.guid = E.guid
LEFT JOIN "rocpd_string" RN ON RN.id = K.region_name_id AND RN.guid = K.guid
LEFT JOIN "rocpd_info_kernel_symbol" S ON S.id = K.kernel_id AND S.guid = K.guid
LEFT JOIN "rocpd_info_stream" ST ON ST.id = K.stream_id AND ST.guid = K.guid
LEFT JOIN "rocpd_info_queue" Q ON Q.id = K.queue_id AND Q.guid = K.guid
LEFT JOIN "rocpd_info_process" P ON P.id = K.pid AND P.guid = K.guid
LEFT JOIN "rocpd_info_thread" T ON T.id = K.tid AND T.guid = K.guid
LEFT JOIN "rocpd_region" RR ON RR.id = E.parent_stack_id AND RR.guid = E.guid
LEFT JOIN "rocpd_event" RE ON RE.id = RR.event_id AND RE.guid = RR.guid;

CREATE VIEW IF NOT EXISTS "memory_copies" AS
SELECT
    M.id, M.guid, C.string AS category, M.nid, COALESCE(P.pid, M.pid) AS pid,
    COALESCE(T.tid, M.tid) AS tid, M.start, M."end", (M."end" - M.start) AS duration,
    S.string AS name, RN.string AS region_name, M.stream_id, M.queue_id,
    ST.name AS stream_name, Q.name AS queue_name, M.size,
    DA.name AS dst_device, DA.absolute_index AS dst_agent_abs_index,
    DA.logical_index AS dst_agent_log_index, DA.type_index AS dst_agent_type_index,
    DA.type AS dst_agent_type, M.dst_address,
    SA.name AS src_device, SA.absolute_index AS src_agent_abs_index,
    SA.logical_index AS src_agent_log_index, SA.type_index AS src_agent_type_index,
    SA.type AS src_agent_type, M.src_address,
    E.stack_id, E.parent_stack_id, E.correlation_id AS corr_id,
    -- Ours, after ROCm's columns: the innermost ROCTx range around the launch. The event's
    -- parent_stack_id is that range's correlation id, which is its rocpd_region id.
    CASE WHEN json_valid(RE.extdata) THEN NULLIF(json_extract(RE.extdata, '$.message'), '') END
        AS roctx_range
FROM "rocpd_memory_copy" M
LEFT JOIN "rocpd_string" S ON S.id = M.name_id AND S.guid = M.guid
LEFT JOIN "rocpd_string" RN ON RN.id = M.region_name_id AND RN.guid = M.guid
LEFT JOIN "rocpd_info_agent" DA ON DA.id = M.dst_agent_id AND DA.guid = M.guid
LEFT JOIN "rocpd_info_agent" SA ON SA.id = M.src_agent_id AND SA.guid = M.guid
LEFT JOIN "rocpd_info_queue" Q ON Q.id = M.queue_id AND Q.guid = M.guid
LEFT JOIN "rocpd_info_stream" ST ON ST.id = M.stream_id AND ST.guid = M.guid
LEFT JOIN "rocpd_event" E ON E.id = M.event_id AND E.guid = M.guid
LEFT JOIN "rocpd_string" C ON C.id = E.category_id AND C.guid = E.guid
LEFT JOIN "rocpd_info_process" P ON P.id = M.pid AND P.guid = M.guid
LEFT JOIN "rocpd_info_thread" T ON T.id = M.tid AND T.guid = M.guid
LEFT JOIN "rocpd_region" RR ON RR.id = E.parent_stack_id AND RR.guid = E.guid
LEFT JOIN "rocpd_event" RE ON RE.id = RR.event_id AND RE.guid = RR.guid;

CREATE VIEW IF NOT EXISTS "memory_allocations" AS
SELECT
    M.id, M.guid, C.string AS category, M.nid, COALESCE(P.pid, M.pid) AS pid,
    COALESCE(T.tid, M.tid) AS tid, M.start, M."end", (M."end" - M.start) AS duration,
    M.type, M.level, A.name AS agent_name, A.absolute_index AS agent_abs_index,
    A.logical_index AS agent_log_index, A.type_index AS agent_type_index,
    A.type AS agent_type, M.address, M.size, M.queue_id, Q.name AS queue_name,
    M.stream_id, ST.name AS stream_name,
    E.stack_id, E.parent_stack_id, E.correlation_id AS corr_id
FROM "rocpd_memory_allocate" M
LEFT JOIN "rocpd_info_agent" A ON A.id = M.agent_id AND A.guid = M.guid
LEFT JOIN "rocpd_info_queue" Q ON Q.id = M.queue_id AND Q.guid = M.guid
LEFT JOIN "rocpd_info_stream" ST ON ST.id = M.stream_id AND ST.guid = M.guid
LEFT JOIN "rocpd_event" E ON E.id = M.event_id AND E.guid = M.guid
LEFT JOIN "rocpd_string" C ON C.id = E.category_id AND C.guid = E.guid
LEFT JOIN "rocpd_info_process" P ON P.id = M.pid AND P.guid = M.guid
LEFT JOIN "rocpd_info_thread" T ON T.id = M.tid AND T.guid = M.guid;

-- Scratch-memory operations (AMD), as ROCm's view shows them.
CREATE VIEW IF NOT EXISTS "scratch_memory" AS
SELECT
    M.id, M.guid, M.nid, COALESCE(P.pid, M.pid) AS pid, M.type AS operation,
    A.name AS agent_name, A.absolute_index AS agent_abs_index, A.logical_index AS agent_log_index,
    A.type_index AS agent_type_index, A.type AS agent_type, M.queue_id,
    COALESCE(T.tid, M.tid) AS tid, json_extract(M.extdata, '$.flags') AS alloc_flags, M.start,
    M."end", (M."end" - M.start) AS duration, M.size, M.address, E.correlation_id, E.stack_id,
    E.parent_stack_id, E.correlation_id AS corr_id, C.string AS category,
    E.extdata AS event_extdata
FROM "rocpd_memory_allocate" M
LEFT JOIN "rocpd_info_agent" A ON A.id = M.agent_id AND A.guid = M.guid
LEFT JOIN "rocpd_event" E ON E.id = M.event_id AND E.guid = M.guid
LEFT JOIN "rocpd_string" C ON C.id = E.category_id AND C.guid = E.guid
LEFT JOIN "rocpd_info_process" P ON P.id = M.pid AND P.guid = M.guid
LEFT JOIN "rocpd_info_thread" T ON T.id = M.tid AND T.guid = M.guid
WHERE M.level = 'SCRATCH';

CREATE VIEW IF NOT EXISTS "processes" AS
SELECT
    N.id AS nid, N.machine_id, N.system_name, N.hostname, N.release AS system_release,
    N.version AS system_version, P.guid, P.ppid, P.pid, P.init, P.start, P."end", P.fini,
    P.command
FROM "rocpd_info_process" P
LEFT JOIN "rocpd_info_node" N ON N.id = P.nid AND N.guid = P.guid;

CREATE VIEW IF NOT EXISTS "threads" AS
SELECT
    N.id AS nid, N.machine_id, N.system_name, N.hostname, N.release AS system_release,
    N.version AS system_version, T.guid, T.ppid, T.pid, T.tid, T.start, T."end", T.name
FROM "rocpd_info_thread" T
LEFT JOIN "rocpd_info_node" N ON N.id = T.nid AND N.guid = T.guid;

CREATE VIEW IF NOT EXISTS "code_objects" AS
SELECT
    CO.id, CO.guid, CO.nid, COALESCE(P.pid, CO.pid) AS pid, A.absolute_index AS agent_abs_index,
    CO.uri, CO.load_base, CO.load_size, CO.load_delta, CO.storage_type AS storage_type_str,
    json_extract(CO.extdata, '$.size') AS code_object_size,
    json_extract(CO.extdata, '$.storage_type') AS storage_type,
    json_extract(CO.extdata, '$.memory_base') AS memory_base,
    json_extract(CO.extdata, '$.memory_size') AS memory_size
FROM "rocpd_info_code_object" CO
LEFT JOIN "rocpd_info_agent" A ON A.id = CO.agent_id AND A.guid = CO.guid
LEFT JOIN "rocpd_info_process" P ON P.id = CO.pid AND P.guid = CO.guid;

CREATE VIEW IF NOT EXISTS "kernel_symbols" AS
SELECT
    KS.id, KS.guid, KS.nid, COALESCE(P.pid, KS.pid) AS pid, KS.code_object_id, KS.kernel_name,
    KS.display_name, KS.kernel_object, KS.kernarg_segment_size, KS.kernarg_segment_alignment,
    KS.group_segment_size, KS.private_segment_size, KS.sgpr_count, KS.arch_vgpr_count,
    KS.accum_vgpr_count,
    json_extract(KS.extdata, '$.size') AS kernel_symbol_size,
    json_extract(KS.extdata, '$.kernel_id') AS kernel_id,
    json_extract(KS.extdata, '$.kernel_code_entry_byte_offset') AS kernel_code_entry_byte_offset,
    json_extract(KS.extdata, '$.formatted_kernel_name') AS formatted_kernel_name,
    json_extract(KS.extdata, '$.demangled_kernel_name') AS demangled_kernel_name,
    json_extract(KS.extdata, '$.truncated_kernel_name') AS truncated_kernel_name,
    json_extract(KS.extdata, '$.kernel_address.handle') AS kernel_address
FROM "rocpd_info_kernel_symbol" KS
LEFT JOIN "rocpd_info_process" P ON P.id = KS.pid AND P.guid = KS.guid;

CREATE VIEW IF NOT EXISTS "pmc_info" AS
SELECT
    I.id, I.guid, I.nid, COALESCE(P.pid, I.pid) AS pid, A.absolute_index AS agent_abs_index,
    I.is_constant, I.is_derived, I.name, I.description, I.block, I.expression
FROM "rocpd_info_pmc" I
LEFT JOIN "rocpd_info_agent" A ON A.id = I.agent_id AND A.guid = I.guid
LEFT JOIN "rocpd_info_process" P ON P.id = I.pid AND P.guid = I.guid;

CREATE VIEW IF NOT EXISTS "pmc_events" AS
SELECT
    PE.id, PE.guid, PE.pmc_id, E.id AS event_id, C.string AS category,
    COALESCE(S.display_name, S.kernel_name) AS name, K.nid, COALESCE(P.pid, K.pid) AS pid,
    K.dispatch_id, K.start, K."end", (K."end" - K.start) AS duration,
    I.name AS counter_name, PE.value AS counter_value
FROM "rocpd_pmc_event" PE
INNER JOIN "rocpd_info_pmc" I ON I.id = PE.pmc_id AND I.guid = PE.guid
INNER JOIN "rocpd_event" E ON E.id = PE.event_id AND E.guid = PE.guid
INNER JOIN "rocpd_kernel_dispatch" K ON K.event_id = PE.event_id AND K.guid = PE.guid
LEFT JOIN "rocpd_string" C ON C.id = E.category_id AND C.guid = E.guid
LEFT JOIN "rocpd_info_kernel_symbol" S ON S.id = K.kernel_id AND S.guid = K.guid
LEFT JOIN "rocpd_info_process" P ON P.id = K.pid AND P.guid = K.guid;

CREATE VIEW IF NOT EXISTS "events_args" AS
SELECT
    E.id AS event_id, C.string AS category, E.stack_id, E.parent_stack_id, E.correlation_id,
    A.position AS arg_position, A.type AS arg_type, A.name AS arg_name, A.value AS arg_value,
    E.call_stack, E.line_info, A.extdata
FROM "rocpd_event" E
INNER JOIN "rocpd_arg" A ON A.event_id = E.id AND A.guid = E.guid
LEFT JOIN "rocpd_string" C ON C.id = E.category_id AND C.guid = E.guid;

-- Stream arguments of API calls with the stream they name (the argument's extdata holds the
-- stream's id), as ROCm's view shows them.
CREATE VIEW IF NOT EXISTS "stream_args" AS
SELECT
    A.id AS argument_id, A.event_id, A.position AS arg_position, A.type AS arg_type,
    A.value AS arg_value, json_extract(A.extdata, '$.stream_id') AS stream_id, S.nid,
    COALESCE(P.pid, S.pid) AS pid, S.name AS stream_name, S.extdata
FROM "rocpd_arg" A
INNER JOIN "rocpd_info_stream" S
    ON S.id = json_extract(A.extdata, '$.stream_id') AND S.guid = A.guid
LEFT JOIN "rocpd_info_process" P ON P.id = S.pid AND P.guid = S.guid
WHERE A.name = 'stream';

-- One row per (dispatch, counter): counters of one dispatch may arrive as several partial values.
CREATE VIEW IF NOT EXISTS "counters_collection" AS
SELECT
    MIN(PE.id) AS id, PE.guid, K.dispatch_id, K.kernel_id, E.id AS event_id, E.correlation_id,
    E.stack_id, E.parent_stack_id, COALESCE(P.pid, K.pid) AS pid, COALESCE(T.tid, K.tid) AS tid,
    K.agent_id, A.absolute_index AS agent_abs_index, A.logical_index AS agent_log_index,
    A.type_index AS agent_type_index, A.type AS agent_type, K.queue_id,
    K.grid_size_x, K.grid_size_y, K.grid_size_z,
    (K.grid_size_x * K.grid_size_y * K.grid_size_z) AS grid_size,
    COALESCE(S.display_name, S.kernel_name) AS kernel_name, RN.string AS kernel_region,
    K.workgroup_size_x, K.workgroup_size_y, K.workgroup_size_z,
    (K.workgroup_size_x * K.workgroup_size_y * K.workgroup_size_z) AS workgroup_size,
    K.group_segment_size AS lds_block_size, K.private_segment_size AS scratch_size,
    S.arch_vgpr_count AS vgpr_count, S.accum_vgpr_count, S.sgpr_count,
    I.name AS counter_name, I.symbol AS counter_symbol, I.component, I.description, I.block,
    I.expression, I.value_type, I.id AS counter_id, SUM(PE.value) AS value,
    K.start, K."end", I.is_constant, I.is_derived, (K."end" - K.start) AS duration,
    C.string AS category, K.nid, E.extdata, S.code_object_id,
    -- Ours, last: the innermost ROCTx range around the launch (as kernels.roctx_range).
    (SELECT CASE WHEN json_valid(RE.extdata) THEN NULLIF(json_extract(RE.extdata, '$.message'), '')
            END
     FROM "rocpd_region" RR JOIN "rocpd_event" RE ON RE.id = RR.event_id AND RE.guid = RR.guid
     WHERE RR.id = E.parent_stack_id AND RR.guid = E.guid) AS roctx_range
FROM "rocpd_pmc_event" PE
INNER JOIN "rocpd_info_pmc" I ON I.id = PE.pmc_id AND I.guid = PE.guid
INNER JOIN "rocpd_event" E ON E.id = PE.event_id AND E.guid = PE.guid
INNER JOIN "rocpd_kernel_dispatch" K ON K.event_id = PE.event_id AND K.guid = PE.guid
LEFT JOIN "rocpd_string" C ON C.id = E.category_id AND C.guid = E.guid
LEFT JOIN "rocpd_string" RN ON RN.id = K.region_name_id AND RN.guid = K.guid
LEFT JOIN "rocpd_info_agent" A ON A.id = K.agent_id AND A.guid = K.guid
LEFT JOIN "rocpd_info_kernel_symbol" S ON S.id = K.kernel_id AND S.guid = K.guid
LEFT JOIN "rocpd_info_process" P ON P.id = K.pid AND P.guid = K.guid
LEFT JOIN "rocpd_info_thread" T ON T.id = K.tid AND T.guid = K.guid
GROUP BY PE.guid, K.dispatch_id, I.name, K.agent_id;

-- Summaries in microseconds, as ROCm's views report them: the average is the integer mean in ns
-- (SQL integer division) over 1000, as ROCm's SQL computes it.
CREATE VIEW IF NOT EXISTS "top_kernels" AS
SELECT
    COALESCE(S.display_name, S.kernel_name) AS name,
    COUNT(*) AS total_calls,
    SUM(K."end" - K.start) / 1000.0 AS total_duration,
    (SUM(K."end" - K.start) / COUNT(*)) / 1000.0 AS average,
    SUM(K."end" - K.start) * 100.0
        / (SELECT SUM(A."end" - A.start) FROM "rocpd_kernel_dispatch" A) AS percentage
FROM "rocpd_kernel_dispatch" K
LEFT JOIN "rocpd_info_kernel_symbol" S ON S.id = K.kernel_id AND S.guid = K.guid
GROUP BY name
ORDER BY total_duration DESC;

CREATE VIEW IF NOT EXISTS "top" AS
SELECT
    name,
    COUNT(*) AS total_calls,
    SUM(duration) / 1000.0 AS total_duration,
    (SUM(duration) / COUNT(*)) / 1000.0 AS average,
    SUM(duration) * 100.0 / (SELECT SUM(duration) FROM (
        SELECT "end" - start AS duration FROM "rocpd_kernel_dispatch"
        UNION ALL SELECT "end" - start FROM "rocpd_memory_copy"
        UNION ALL SELECT "end" - start FROM "rocpd_region")) AS percentage
FROM (
    SELECT COALESCE(S.display_name, S.kernel_name) AS name, K."end" - K.start AS duration
    FROM "rocpd_kernel_dispatch" K
    LEFT JOIN "rocpd_info_kernel_symbol" S ON S.id = K.kernel_id AND S.guid = K.guid
    UNION ALL
    SELECT S.string, M."end" - M.start
    FROM "rocpd_memory_copy" M
    LEFT JOIN "rocpd_string" S ON S.id = M.name_id AND S.guid = M.guid
    UNION ALL
    SELECT S.string, R."end" - R.start
    FROM "rocpd_region" R
    LEFT JOIN "rocpd_string" S ON S.id = R.name_id AND S.guid = R.guid
)
GROUP BY name
ORDER BY total_duration DESC;

-- GPU time per agent (kernels, and copies charged to their destination) over the wall time from the
-- first GPU activity to the last.
CREATE VIEW IF NOT EXISTS "busy" AS
SELECT
    G.agent_id, AG.type, G.GpuTime, W.WallTime, G.GpuTime * 1.0 / W.WallTime AS Busy
FROM (
    SELECT agent_id, guid, SUM("end" - start) AS GpuTime
    FROM (
        SELECT agent_id, guid, start, "end" FROM "rocpd_kernel_dispatch"
        UNION ALL
        SELECT dst_agent_id, guid, start, "end" FROM "rocpd_memory_copy"
    )
    GROUP BY agent_id, guid
) G
CROSS JOIN (
    SELECT MAX("end") - MIN(start) AS WallTime
    FROM (
        SELECT start, "end" FROM "rocpd_kernel_dispatch"
        UNION ALL
        SELECT start, "end" FROM "rocpd_memory_copy"
    )
) W
LEFT JOIN "rocpd_info_agent" AG ON AG.id = G.agent_id AND AG.guid = G.guid;

-- PC samples with their names resolved (docs/pc-sampling-schema.md). The kernel's display name
-- comes from its symbol row when the trace has one (matched on the mangled name).
CREATE VIEW IF NOT EXISTS "pc_samples" AS
SELECT
    PS.id, PS.guid, PS.nid, PS.pid, PS.agent_id, A.absolute_index AS agent_abs_index,
    PS.correlation_id, PS.dispatch_id, PS.start, PS."end",
    KN.string AS kernel_name,
    COALESCE((SELECT MIN(S.display_name) FROM "rocpd_info_kernel_symbol" S
              WHERE S.kernel_name = KN.string AND S.guid = PS.guid), KN.string) AS name,
    PS.code_object, PS.function_index, PS.pc_offset,
    INS.string AS instruction, SF.string AS source_file, PS.line,
    CASE WHEN SF.string IS NOT NULL THEN SF.string || ':' || PS.line END AS instruction_comment,
    SR.string AS stall_reason, PS.not_issued, PS.count, PS.event_id, PS.extdata
FROM "rocpd_pc_sample" PS
JOIN "rocpd_string" KN ON KN.id = PS.kernel_name_id AND KN.guid = PS.guid
LEFT JOIN "rocpd_string" INS ON INS.id = PS.instruction_id AND INS.guid = PS.guid
LEFT JOIN "rocpd_string" SF ON SF.id = PS.source_file_id AND SF.guid = PS.guid
LEFT JOIN "rocpd_string" SR ON SR.id = PS.stall_reason_id AND SR.guid = PS.guid
LEFT JOIN "rocpd_info_agent" A ON A.id = PS.agent_id AND A.guid = PS.guid;
