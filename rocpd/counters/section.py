"""The counters section of ``rocpd report`` (a hook listed in
:data:`rocpd.report.sections.OPTIONAL`): speed of light and the roofline of a run with per-kernel
counters, nothing for one without. The top of the counters package: it builds on the report's
section type."""

from __future__ import annotations

import base64

from ..errors import RocpdError
from ..report.sections import Section, esc
from . import pmc, roofline, sol, sol_format


def report_section(ctx):
    """Speed of light (run and per kernel) and the roofline, for `rocpd report`."""
    if not pmc.has_counters(ctx.db):
        return None
    res = sol.compute(ctx.db, **ctx.filters)
    text = sol_format.format_sol(res, top=ctx.top)
    html = f"<pre>{esc(text)}</pre>"
    note = ""
    if ctx.html:
        try:
            data = base64.b64encode(roofline.png_bytes(res)).decode("ascii")
            html += f"<img alt='roofline' src='data:image/png;base64,{data}' style='max-width:100%'>"
        except RocpdError as e:  # no matplotlib: the tables still stand
            note = f"no roofline chart ({e})"
    return Section("roofline", "Speed of light and roofline", html=html,
                   markdown=f"```text\n{text}```\n", figures={"roofline": lambda: roofline.figure(res)},
                   note=note)
