"""The TAME report of a system, built in steps from an audit:

1. ``audit``: the train-aware half (exposures and the TM candidates of one test
   set, cached, on the local or the Ray engine; ``swapped_sides``, whether the
   corpus's sides read the wrong way round, measured with it);
2. ``tm_baseline``: the translation-memory hypotheses;
3. ``exposure_summary``: means, exact rates, PairLeak, bin counts;
4. ``scores``: BLEU/chrF/spBLEU from sacrebleu's sufficient statistics
   (``spbleu``: the FLORES SentencePiece tokenisation), summed per bin;
5. ``document``: the report, its JSON, warnings and segment rows.

``pipeline`` runs the steps (``score_tame``); ``config`` holds every setting of
a report (``TameConfig``). ``decontaminate`` runs decontamination on the engine
a ``TameConfig`` names, as ``audit`` runs the audit.

May import: ``tame_mt_metric.retrieval``, ``tame_mt_metric.cache``,
``tame_mt_metric.scale`` and the package's base modules. This ``__init__``
imports nothing, so that ``config`` loads without sacrebleu.
"""
