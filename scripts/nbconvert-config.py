"""nbconvert settings for executing the notebooks (scripts/notebooks.ts passes this file with --config).

The Deno kernel forwards a cell's outputs (its value, displays, console output) from the evaluating thread
on its own, so a few milliseconds after the cell's idle status now and then. nbclient stops reading a
cell at idle, so such an output would be dropped at random and the notebook would come out different from
run to run. The executor below keeps reading the cell's messages for a moment after idle, before the next
cell is sent (which would otherwise claim them).
"""

import time
from queue import Empty

from nbclient.exceptions import CellExecutionComplete
from nbclient.util import ensure_async
from nbconvert.exporters import Exporter
from nbconvert.preprocessors import ExecutePreprocessor

# Late outputs measured after idle arrive within 5 ms; this leaves a wide margin on a loaded machine.
LATE_OUTPUT_SECONDS = 0.25


class LateOutputExecutePreprocessor(ExecutePreprocessor):
    """ExecutePreprocessor that also records a cell's outputs published just after its idle status."""

    async def _async_poll_output_msg(self, parent_msg_id, cell, cell_index):
        await super()._async_poll_output_msg(parent_msg_id, cell, cell_index)
        # The cell's value is the last thing the kernel publishes for it: once it is in, nothing is late.
        if any(output.output_type == "execute_result" for output in cell.outputs):
            return
        deadline = time.monotonic() + LATE_OUTPUT_SECONDS
        while (remaining := deadline - time.monotonic()) > 0:
            try:
                msg = await ensure_async(self.kc.iopub_channel.get_msg(timeout=remaining))
            except Empty:
                return
            if msg["parent_header"].get("msg_id") != parent_msg_id or msg["msg_type"] == "status":
                continue
            try:
                self.process_message(msg, cell, cell_index)
            except CellExecutionComplete:
                pass


c = get_config()  # noqa: F821 (defined by traitlets when it loads this file)
# Same place in the chain as the stock executor; `--execute` enables it (config applies to subclasses).
c.Exporter.default_preprocessors = [
    LateOutputExecutePreprocessor if name == "nbconvert.preprocessors.ExecutePreprocessor" else name
    for name in Exporter.default_preprocessors.default()
]
# No per-cell timing metadata in the written notebooks; a cell that runs for ten minutes has hung.
c.ExecutePreprocessor.record_timing = False
c.ExecutePreprocessor.timeout = 600
