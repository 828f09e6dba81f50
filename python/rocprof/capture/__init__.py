"""Python halves of the capture backends: each module here turns Options into its part of the
native core's typed settings (configure), and says what a child process needs of it
(child_environment). rocprof.backends names them in its static list and imports them when a
session is configured."""
