"""The Space demo of tame-mt-metric: see how much of a system's score is
earned on test items close to its training data. The page only wires the
package's API (``tame_mt_metric.space``); ``build_demo()`` builds it, and it
is launched only when run as a script (``python app.py``)."""

from __future__ import annotations

from typing import Any

import gradio as gr
import pandas as pd

from tame_mt_metric.errors import TameError
from tame_mt_metric.report.config import TameConfig
from tame_mt_metric.space import (
    BIN_COLOURS,
    BUCKETS,
    CONCURRENCY,
    EXAMPLE,
    LIMITS,
    MAX_QUEUE,
    MAX_UPLOAD,
    example_inputs,
    run,
    uploaded_inputs,
)

UPLOAD = "My own files (plain text or .gz, one sentence per line)"
# Uploaded files' names whole (gradio cuts a long stem short with an ellipsis),
# wrapped in their box, with no space between the stem and the extension.
CSS = """
#uploads tr.file { display: flex; flex-wrap: wrap; }
#uploads td.filename { display: block; flex: 1 1 100%; width: auto; font-size: 0; }
#uploads td.filename .stem, #uploads td.filename .ext {
  font-size: var(--text-md); white-space: normal !important; overflow: visible !important;
  text-overflow: clip !important; overflow-wrap: anywhere; }
#uploads td.download { flex: 1 1 100%; width: auto; min-width: 0; text-align: left; }
.tame-warnings li { color: #8a3b00; }
"""


def analyse(
    source: str,
    train_src: str | None,
    train_tgt: str | None,
    test_src: str | None,
    references: list[str] | None,
    hypotheses: str | None,
    near: float,
    far: float,
    lowercase: bool,
    zero_policy: str,
    progress: gr.Progress = gr.Progress(),  # noqa: B008 - gradio's progress idiom
) -> tuple[Any, ...]:
    try:
        progress(0.1, desc="reading the inputs")
        if source == EXAMPLE:
            inputs = example_inputs()
        else:
            inputs = uploaded_inputs(train_src, train_tgt, test_src, references, hypotheses)
        config = TameConfig.from_options(
            near_threshold=near,
            far_threshold=far,
            lowercase=lowercase,
            tm_zero_policy=zero_policy,
        )
        progress(0.3, desc="finding neighbours in the training corpus")
        shown = run(inputs, config)
    except (TameError, ValueError, OSError) as exc:
        message = f"**Could not score:** {exc}"
        return message, "", "", "", None, "", "", None, None, None
    items, rows = len(shown.result.exposures), inputs["train"].num_rows
    status = f"Scored {items:,} test items against {rows:,} training pairs."
    return (
        status,
        shown.headline_html(),
        shown.warnings_html(),
        shown.fields["signature"],
        pd.DataFrame(shown.histogram),
        shown.bins_html(),
        shown.exposed_html,
        str(shown.report_file),
        str(shown.segments_file),
        str(shown.page_file),
    )


def build_demo() -> gr.Blocks:
    demo: gr.Blocks
    with gr.Blocks(title="TAME-MT: training-aware MT evaluation") as demo:
        gr.Markdown(
            "# TAME-MT\nHow much of a system's BLEU is earned on test items close to its "
            "training data? Exact character n-gram exposure, a translation-memory baseline, "
            "exposure bins, Far-BLEU and GenGap. The bundled example uses a *simulated* system "
            "(each reference with every fourth word dropped)."
        )
        with gr.Row():
            source = gr.Radio([EXAMPLE, UPLOAD], value=EXAMPLE, label="data", elem_id="source")
        with gr.Column(visible=False, elem_id="uploads") as uploads:  # shown for UPLOAD
            gr.Markdown(LIMITS, elem_id="limits")
            with gr.Row():
                train_src = gr.File(label="training sources", type="filepath")
                train_tgt = gr.File(label="training targets", type="filepath")
                test_src = gr.File(label="test sources", type="filepath")
                references = gr.File(
                    label="references (one or more files)",
                    file_count="multiple",
                    type="filepath",
                )
                hypotheses = gr.File(label="system output", type="filepath")
        source.change(lambda chosen: gr.update(visible=chosen == UPLOAD), source, uploads)
        with gr.Row():
            near = gr.Number(0.70, label="near threshold", minimum=0, maximum=1, step=0.05)
            far = gr.Number(0.30, label="far threshold", minimum=0, maximum=1, step=0.05)
            lowercase = gr.Checkbox(False, label="lowercase before matching")
            zero_policy = gr.Radio(
                ["empty", "nearest"], value="empty", label="TM for items with no shared n-gram"
            )
        button = gr.Button("Score", variant="primary", elem_id="score")
        status = gr.Markdown(elem_id="status")
        warnings = gr.HTML(elem_id="warnings")
        with gr.Row():
            headline = gr.HTML(elem_id="headline")
            with gr.Column():
                histogram = gr.BarPlot(
                    x="source exposure",
                    y="items",
                    color="bin",
                    x_bin=1 / BUCKETS,
                    y_aggregate="sum",
                    x_lim=[0, 1],
                    color_map=BIN_COLOURS,
                    label="source exposure (bins by colour)",
                    elem_id="histogram",
                )
        bins = gr.HTML(elem_id="bins", label="scores by bin")
        exposed = gr.HTML(elem_id="exposed", label="most exposed test items")
        signature = gr.Textbox(label="signature", elem_id="signature", interactive=False)
        with gr.Row():
            report = gr.File(label="JSON report")
            segments = gr.File(label="segments (JSONL)")
            page = gr.File(label="HTML report", elem_id="html-report")
        button.click(
            analyse,
            [
                source,
                train_src,
                train_tgt,
                test_src,
                references,
                hypotheses,
                near,
                far,
                lowercase,
                zero_policy,
            ],
            [
                status,
                headline,
                warnings,
                signature,
                histogram,
                bins,
                exposed,
                report,
                segments,
                page,
            ],
        )
    demo.queue(default_concurrency_limit=CONCURRENCY, max_size=MAX_QUEUE)
    return demo


if __name__ == "__main__":
    build_demo().launch(max_file_size=MAX_UPLOAD, css=CSS)
