"""Reading rocpd databases, the lowest layer above the package's base modules (errors, _schema,
regex, progress): finding files and package indexes (files, package_index), read-only opening
(readonly), the union of many databases (connection), the time window and filters every reader
shares (time_window, filters), ROCm's object readers (info), and the tools that write new
databases from old ones (merge, package). Nothing here imports a higher layer; pandas only inside
the functions that return DataFrames."""
